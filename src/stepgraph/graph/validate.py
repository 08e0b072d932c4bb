"""Compile-time checks of a ``StateGraph``: every message names the bad node or edge."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from stepgraph.constants import END, START
from stepgraph.errors import GraphDefinitionError

if TYPE_CHECKING:
    from stepgraph.graph.builder import StateGraph


DEFAULT_ERROR_HANDLER = "__default_error_handler__"
"""The node name LangGraph gives ``set_node_defaults(error_handler=...)``: reserved then."""


def validate_builder(graph: StateGraph, interrupt: Sequence[str] | None = None) -> None:
    if graph._node_defaults.get("error_handler") is not None and DEFAULT_ERROR_HANDLER in graph.nodes:
        raise GraphDefinitionError(
            f"Node name `{DEFAULT_ERROR_HANDLER}` is reserved for the default error handler "
            "set with set_node_defaults(error_handler=...).",
            code="SG126",
            hint="rename the node",
        )
    sources = {s for s, _ in graph.edges}
    sources.update(s for starts, _ in graph.waiting_edges for s in starts)
    sources.update(graph.branches)
    for source in sources:
        if source not in graph.nodes and source != START:
            raise GraphDefinitionError(f"Found edge starting at unknown node '{source}'", code="SG120")
    if START not in sources:
        raise GraphDefinitionError(
            "Graph must have an entrypoint: add at least one edge from START to another node",
            code="SG121", hint="graph.add_edge(START, '<first node>')",
        )
    targets = {e for _, e in graph.edges}
    targets.update(e for _, e in graph.waiting_edges)
    for start, branches in graph.branches.items():
        for name, branch in branches.items():
            if branch.ends is None:
                continue
            for end in branch.ends.values():
                if end not in graph.nodes and end != END:
                    raise GraphDefinitionError(
                        f"At '{start}' node, '{name}' branch found unknown target '{end}'",
                        code="SG122",
                    )
                targets.add(end)
    for target in targets:
        if target not in graph.nodes and target != END:
            raise GraphDefinitionError(f"Found edge ending at unknown node `{target}`", code="SG124")
    if interrupt:
        for node in interrupt:
            if node != "*" and node not in graph.nodes and not _is_handler_of(graph, node):
                raise GraphDefinitionError(f"Interrupt node `{node}` not found", code="SG125")


def _is_handler_of(graph: StateGraph, name: str) -> bool:
    """``__error_handler__<node>`` names the error handler of a node that has one."""
    prefix = "__error_handler__"
    spec = graph.nodes.get(name[len(prefix):]) if name.startswith(prefix) else None
    return spec is not None and (
        spec.error_handler is not None or graph._node_defaults.get("error_handler") is not None
    )

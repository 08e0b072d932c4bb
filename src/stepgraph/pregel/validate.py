"""Structural checks of a low-level ``Pregel`` graph (names, subscriptions, channels)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from stepgraph.constants import RESERVED, TASKS
from stepgraph.errors import GraphDefinitionError

if TYPE_CHECKING:
    from stepgraph.pregel.main import Pregel


def validate_pregel(graph: Pregel) -> None:  # noqa: C901 - a flat list of independent checks
    # lazy: keeps `import stepgraph.graph` lean
    from stepgraph.engine.timeout_support import check_node_timeouts

    check_node_timeouts(graph.nodes)
    channels = graph.channels
    for name in graph.nodes:
        if name in RESERVED:
            raise GraphDefinitionError(f"Node name '{name}' is reserved.", code="SG101")
    for key in channels:
        if key in RESERVED and key != TASKS:
            raise GraphDefinitionError(f"Channel name '{key}' is reserved", code="SG102")
    subscribed: set[str] = set()
    for name, node in graph.nodes.items():
        for trig in node.triggers:
            if trig not in channels:
                raise GraphDefinitionError(
                    f"Node '{name}' subscribes to unknown channel '{trig}'.",
                    code="SG103", hint=f"declare it in channels=; known: {sorted(channels)}",
                )
            subscribed.add(trig)
        reads = [node.channels] if isinstance(node.channels, str) else node.channels
        for chan in reads:
            if chan not in channels:
                raise GraphDefinitionError(
                    f"Node '{name}' reads unknown channel '{chan}'.", code="SG103",
                    hint=f"known channels: {sorted(channels)}",
                )
    inputs = [graph.input_channels] if isinstance(graph.input_channels, str) else graph.input_channels
    for chan in inputs:
        if chan not in channels:
            raise GraphDefinitionError(f"Input channel '{chan}' is not declared.", code="SG105")
    if not any(chan in subscribed for chan in inputs):
        raise GraphDefinitionError(
            f"Input channel(s) {list(inputs)} are not subscribed to by any node.", code="SG106",
            hint="subscribe a node to the input channel so the graph has a first step",
        )
    outputs = [graph.output_channels] if isinstance(graph.output_channels, str) else graph.output_channels
    for chan in outputs:
        if chan not in channels:
            raise GraphDefinitionError(f"Output channel '{chan}' is not declared.", code="SG107")
    for names in (graph.interrupt_before_nodes, graph.interrupt_after_nodes):
        if names == "*":
            continue
        for n in names:
            if n not in graph.nodes and not _names_a_handler(graph, n):
                raise GraphDefinitionError(f"Interrupt node `{n}` not found", code="SG108")


def _names_a_handler(graph: Pregel, name: str) -> bool:
    """``__error_handler__<node>``: the error handler of a node that has one."""
    prefix = "__error_handler__"
    node = graph.nodes.get(name[len(prefix):]) if name.startswith(prefix) else None
    return node is not None and node.error_handler is not None

"""Read a compiled graph's structure into a drawable ``Graph``.

A compiled ``StateGraph`` is read from its builder (static analysis, nothing runs):

* ``add_edge(a, b)`` is a solid edge; ``add_edge([a, b], c)`` is a solid edge from each start.
* a conditional edge is dotted, one per ``path_map`` entry (or ``Literal`` return hint),
  labelled with the key when the key differs from the target. Without a map or hint the
  router may go anywhere, so it gets a dotted edge to every node and to ``__end__``.
* ``destinations=`` / ``Command[Literal[...]]`` hints are dotted edges (a dict gives labels).
* a node that is the target of some edge but has no outgoing edge gets ``--> __end__``;
  ``add_edge(x, END)`` is drawn that way too (and, as in LangGraph, not drawn when ``x``
  has other outgoing edges, since it changes nothing at run time).

A low-level ``Pregel`` is read from its channels: an edge ``a --> b`` when ``a`` writes a
channel that triggers ``b``, and ``__start__`` to the nodes the input channels trigger.
"""

from __future__ import annotations

from typing import Any

from stepgraph.constants import END, START, TASKS
from stepgraph.draw.graph import Graph

__all__ = ["build_graph"]

_Raw = tuple[str, str, bool, Any]  # (source, target, conditional, raw label)


def build_graph(compiled: Any, *, xray: bool | int = False, config: Any = None) -> Graph:
    """The drawable ``Graph`` of a compiled ``StateGraph`` or low-level ``Pregel``.

    ``xray=True`` expands every compiled subgraph node in place (ids ``parent:child``);
    ``xray=N`` expands N levels.
    """
    builder = getattr(compiled, "builder", None)
    graph = _from_builder(compiled, builder) if builder is not None else _from_channels(compiled)
    if xray:
        _expand(graph, compiled, xray, config)
    return graph


# -- StateGraph -------------------------------------------------------------------------------
def _from_builder(compiled: Any, builder: Any) -> Graph:
    graph = Graph()
    graph.add_node(compiled.nodes.get(START), START)
    for name, spec in builder.nodes.items():
        graph.add_node(spec.raw, name, metadata=_metadata(compiled, name, spec.metadata,
                                                          defer=bool(spec.defer), raw=spec.raw))
    anywhere = [*builder.nodes, END]
    raw: set[_Raw] = set()
    for start, end in builder.edges:
        if end != END:
            raw.add((start, end, False, None))
    for starts, end in builder.waiting_edges:
        if end != END:
            raw.update((start, end, False, None) for start in starts)
    for source, branches in builder.branches.items():
        for spec in branches.values():
            if spec.ends is None:
                raw.update((source, target, True, None) for target in anywhere)
            else:
                raw.update((source, target, True, str(key)) for key, target in spec.ends.items())
    for name, spec in builder.nodes.items():
        if isinstance(spec.ends, dict):
            raw.update((name, target, True, label) for target, label in spec.ends.items())
        elif spec.ends:
            raw.update((name, target, True, None) for target in spec.ends)
    _add_edges(graph, [], raw)
    targets = {t for _, t, _, _ in raw}
    if END not in targets and not (targets - {s for s, _, _, _ in raw}):
        last = _last_step_sources(builder, raw)
        if len(last) == 1:  # a graph that never ends: LangGraph marks its last step's node
            _link(graph, set(), next(iter(last)), END, None, True)
    return graph


def _last_step_sources(builder: Any, raw: set[_Raw]) -> set[str]:
    """The nodes of the last step LangGraph's drawing simulation runs (it stops after 251
    steps): plain edges fire every step, a node's conditional edges only the first time it
    runs, and a waiting edge's target once all its sources ran."""
    plain: dict[str, set[str]] = {}
    for start, end in builder.edges:
        plain.setdefault(start, set()).add(end)
    conditional: dict[str, set[str]] = {}
    for source, target, is_conditional, _ in raw:
        if is_conditional and target != END:
            conditional.setdefault(source, set()).add(target)
    joins = [(frozenset(starts), end) for starts, end in builder.waiting_edges]
    arrived: dict[int, set[str]] = {}
    fired: set[str] = set()
    tasks, last = {START}, set()
    for _ in range(251):
        if not tasks:
            break
        last = tasks
        following: set[str] = set()
        for name in tasks:
            following |= plain.get(name, set())
            if name not in fired:
                fired.add(name)
                following |= conditional.get(name, set())
            for i, (starts, end) in enumerate(joins):
                if name in starts:
                    got = arrived.setdefault(i, set())
                    got.add(name)
                    if got >= starts:
                        following.add(end)
                        got.clear()
        tasks = following - {END}
    return last


def _metadata(compiled: Any, name: str, base: Any, *, defer: bool, raw: Any) -> dict[str, Any] | None:
    meta = dict(base or {})
    if defer:
        meta["defer"] = True
    before = _in(name, compiled.interrupt_before_nodes)
    after = _in(name, compiled.interrupt_after_nodes)
    if before or after:
        meta["__interrupt"] = ",".join(w for w, on in (("before", before), ("after", after)) if on)
    tools = getattr(raw, "tools_by_name", None)
    if isinstance(tools, dict) and tools:
        meta["__tools"] = list(tools)
    return meta or None


def _in(name: str, nodes: Any) -> bool:
    return nodes == "*" or (not isinstance(nodes, str) and name in (nodes or ()))


# -- low-level Pregel -------------------------------------------------------------------------
def _from_channels(pregel: Any) -> Graph:
    graph = Graph()
    for name, node in pregel.nodes.items():
        graph.add_node(_body(node), name,
                       metadata=_metadata(pregel, name, node.metadata, defer=False, raw=None))
    triggered: dict[str, list[str]] = {}
    for name, node in pregel.nodes.items():
        for channel in node.triggers:
            triggered.setdefault(channel, []).append(name)
    inputs = pregel.input_channels
    inputs = [inputs] if isinstance(inputs, str) else list(inputs)
    first: list[str] = []
    if START not in pregel.nodes:
        graph.add_node(None, START)
        first = [n for n, node in pregel.nodes.items() if set(node.triggers) & set(inputs)]
    raw: set[_Raw] = set()
    for name, node in pregel.nodes.items():
        for writer in node.writers:
            for channel in writer.targets():
                if channel != TASKS:
                    raw.update((name, target, False, None) for target in triggered.get(channel, ()))
    _add_edges(graph, [(START, n, False, None) for n in first], raw)
    return graph


def _body(node: Any) -> Any:
    bound = node.bound[0] if len(node.bound) == 1 else node
    return getattr(bound, "func", None) or getattr(bound, "runnable", None) or bound


# -- shared -----------------------------------------------------------------------------------
def _add_edges(graph: Graph, leading: list[_Raw], raw: set[_Raw]) -> None:
    """Add ``leading`` then ``raw`` sorted (first of each source/target pair wins), then ENDs."""

    def key(item: _Raw) -> tuple[Any, ...]:
        s, t, cond, label = item
        return (s, t, cond, (0, "") if label is None else (1, str(label)))

    seen: set[tuple[str, str]] = set()
    for source, target, conditional, label in [*leading, *sorted(raw, key=key)]:
        _link(graph, seen, source, target, None if label == target else label, conditional)
    sources = {s for s, _, _, _ in raw}
    terminal = {t for _, t, _, _ in [*leading, *raw] if t != END} - sources
    for node in sorted(terminal):
        _link(graph, seen, node, END, None, False)


def _link(graph: Graph, seen: set[tuple[str, str]], source: str, target: str, label: Any,
          conditional: bool) -> None:
    if (source, target) in seen or source not in graph.nodes:
        return
    if target not in graph.nodes:
        if target != END:
            return
        graph.add_node(None, END)
    seen.add((source, target))
    graph.add_edge(source, target, label, conditional)


def _expand(graph: Graph, compiled: Any, xray: bool | int, config: Any) -> None:
    """Replace each subgraph node by the subgraph's own drawing, ids prefixed ``name:``."""
    deeper = xray if isinstance(xray, bool) or xray <= 0 else xray - 1
    for name, node in compiled.nodes.items():
        subgraphs = getattr(node, "subgraphs", None)
        if not subgraphs or name not in graph.nodes or not hasattr(subgraphs[0], "get_graph"):
            continue
        sub = subgraphs[0].get_graph(config, xray=deeper)
        if len(sub.nodes) <= 1 or sub.first_node() is None or sub.last_node() is None:
            continue
        sub.trim_first_node()
        sub.trim_last_node()
        graph.nodes.pop(name)
        first, last = graph.extend(sub, prefix=name)
        for i, edge in enumerate(graph.edges):
            if edge.source == name and last is not None:
                edge = edge.copy(source=last.id)
            if edge.target == name and first is not None:
                edge = edge.copy(target=first.id)
            graph.edges[i] = edge


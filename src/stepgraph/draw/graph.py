"""The drawable graph: nodes, edges and the helpers the renderers and ``xray`` need."""

from __future__ import annotations

import inspect
import uuid
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, NamedTuple

from stepgraph.draw.ascii import render_ascii

__all__ = ["CurveStyle", "Edge", "Graph", "Node", "NodeStyles"]


class Node(NamedTuple):
    """A node: a unique ``id``, a display ``name``, the node body as ``data``, ``metadata``."""

    id: str
    name: str
    data: Any = None
    metadata: dict[str, Any] | None = None

    def copy(self, *, id: str | None = None, name: str | None = None) -> Node:
        return self._replace(id=id or self.id, name=name or self.name)


class Edge(NamedTuple):
    """An edge; ``conditional`` edges are drawn dotted, ``data`` is the edge label."""

    source: str
    target: str
    data: Any = None
    conditional: bool = False

    def copy(self, *, source: str | None = None, target: str | None = None) -> Edge:
        return self._replace(source=source or self.source, target=target or self.target)


class CurveStyle(Enum):
    """Mermaid ``flowchart.curve`` values."""

    BASIS = "basis"
    BUMP_X = "bumpX"
    BUMP_Y = "bumpY"
    CARDINAL = "cardinal"
    CATMULL_ROM = "catmullRom"
    LINEAR = "linear"
    MONOTONE_X = "monotoneX"
    MONOTONE_Y = "monotoneY"
    NATURAL = "natural"
    STEP = "step"
    STEP_AFTER = "stepAfter"
    STEP_BEFORE = "stepBefore"


@dataclass
class NodeStyles:
    """Mermaid ``classDef`` bodies for ordinary, first and last nodes."""

    default: str = "fill:#f2f0ff,line-height:1.2"
    first: str = "fill-opacity:0"
    last: str = "fill:#bfb6fc"


@dataclass
class Graph:
    """Nodes (insertion-ordered, by id) and edges of a graph, ready to draw.

    Example:
        >>> g = Graph()
        >>> a, b = g.add_node(None, "a"), g.add_node(None, "b")
        >>> _ = g.add_edge(a, b)
        >>> g.first_node().id, g.last_node().id
        ('a', 'b')
    """

    nodes: dict[str, Node] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.nodes)

    # -- building ---------------------------------------------------------------------------
    def add_node(
        self, data: Any, id: str | None = None, *, metadata: dict[str, Any] | None = None,
        name: str | None = None,
    ) -> Node:
        """Add a node (``id`` defaults to a fresh uuid hex) and return it."""
        if id is not None and id in self.nodes:
            raise ValueError(f"Node with id {id} already exists")
        node_id = id or uuid.uuid4().hex
        node = Node(node_id, name or (id if id is not None else _data_name(data, node_id)),
                    data, metadata)
        self.nodes[node_id] = node
        return node

    def remove_node(self, node: Node | str) -> None:
        """Remove a node and every edge touching it."""
        node_id = node if isinstance(node, str) else node.id
        self.nodes.pop(node_id)
        self.edges = [e for e in self.edges if node_id not in (e.source, e.target)]

    def add_edge(
        self, source: Node | str, target: Node | str, data: Any = None, conditional: bool = False,
    ) -> Edge:
        """Add an edge between two existing nodes and return it."""
        src = source if isinstance(source, str) else source.id
        tgt = target if isinstance(target, str) else target.id
        for end, kind in ((src, "Source"), (tgt, "Target")):
            if end not in self.nodes:
                raise ValueError(f"{kind} node {end} not in graph")
        edge = Edge(src, tgt, data, conditional)
        self.edges.append(edge)
        return edge

    def extend(self, graph: Graph, *, prefix: str = "") -> tuple[Node | None, Node | None]:
        """Copy ``graph`` in with ids ``prefix:id``; return its (prefixed) first and last nodes."""

        def pre(node_id: str) -> str:
            return f"{prefix}:{node_id}" if prefix else node_id

        for node_id, node in graph.nodes.items():
            self.nodes[pre(node_id)] = node.copy(id=pre(node_id))
        self.edges.extend(e.copy(source=pre(e.source), target=pre(e.target)) for e in graph.edges)
        first, last = graph.first_node(), graph.last_node()
        return (first.copy(id=pre(first.id)) if first else None,
                last.copy(id=pre(last.id)) if last else None)

    # -- queries ----------------------------------------------------------------------------
    def first_node(self) -> Node | None:
        """The only node no edge points to, or ``None`` if there are zero or several."""
        return _only_free(self, incoming=True)

    def last_node(self) -> Node | None:
        """The only node no edge leaves, or ``None`` if there are zero or several."""
        return _only_free(self, incoming=False)

    def trim_first_node(self) -> None:
        """Drop the first node if it has one outgoing edge and a new first node remains."""
        first = self.first_node()
        if (first is not None and _only_free(self, incoming=True, exclude=first.id)
                and len({e for e in self.edges if e.source == first.id}) == 1):
            self.remove_node(first)

    def trim_last_node(self) -> None:
        """Drop the last node if it has one incoming edge and a new last node remains."""
        last = self.last_node()
        if (last is not None and _only_free(self, incoming=False, exclude=last.id)
                and len({e for e in self.edges if e.target == last.id}) == 1):
            self.remove_node(last)

    # -- output -----------------------------------------------------------------------------
    def to_json(self, *, with_schemas: bool = False) -> dict[str, list[dict[str, Any]]]:
        """Plain-JSON form (the shape of LangGraph's ``Graph.to_json``)."""
        nodes = []
        for node in self.nodes.values():
            item: dict[str, Any] = {"id": node.id}
            if node.data is not None:
                item["type"] = "runnable"
                item["data"] = {"id": _type_path(node.data), "name": node.id}
            if node.metadata is not None:
                item["metadata"] = node.metadata
            nodes.append(item)
        edges = []
        for edge in self.edges:
            item = {"source": edge.source, "target": edge.target}
            if edge.data is not None:
                item["data"] = edge.data
            if edge.conditional:
                item["conditional"] = True
            edges.append(item)
        return {"nodes": nodes, "edges": edges}

    def draw_mermaid(
        self, *, with_styles: bool = True, curve_style: CurveStyle | str = CurveStyle.LINEAR,
        node_colors: NodeStyles | None = None, wrap_label_n_words: int = 9,
        frontmatter_config: dict[str, Any] | None = None,
    ) -> str:
        """Mermaid flowchart text (paste into mermaid.live or a ```mermaid block)."""
        # lazy: cycle (mermaid imports this module)
        from stepgraph.draw.mermaid import render_mermaid

        return render_mermaid(
            self, with_styles=with_styles, curve_style=curve_style, node_colors=node_colors,
            wrap_label_n_words=wrap_label_n_words, frontmatter_config=frontmatter_config,
        )

    def draw_ascii(self) -> str:
        """A box-and-line text drawing, top to bottom (no external dependencies)."""
        return render_ascii(self)

    def print_ascii(self) -> None:
        print(self.draw_ascii())  # noqa: T201

    def draw_mermaid_png(self, *args: Any, **kwargs: Any) -> bytes:
        raise NotImplementedError(
            "stepgraph does not render PNGs: paste graph.draw_mermaid() into https://mermaid.live "
            "or run the mermaid CLI (mmdc) on it."
        )


def _only_free(graph: Graph, *, incoming: bool, exclude: str | None = None) -> Node | None:
    linked = {
        (e.target if incoming else e.source) for e in graph.edges
        if (e.source if incoming else e.target) != exclude
    }
    free = [n for n in graph.nodes.values() if n.id != exclude and n.id not in linked]
    return free[0] if len(free) == 1 else None


def _data_name(data: Any, default: str) -> str:
    name = getattr(data, "name", None) or getattr(data, "__name__", None)
    return name if isinstance(name, str) else default


def _type_path(data: Any) -> list[str]:
    target = data if (inspect.isroutine(data) or inspect.isclass(data)) else type(data)
    module = getattr(target, "__module__", None) or "builtins"
    return [*module.split("."), getattr(target, "__qualname__", type(data).__name__)]

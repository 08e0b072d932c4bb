"""Mermaid flowchart text, in the same layout LangGraph's ``draw_mermaid`` prints.

Nodes whose id has ``:`` (from ``xray``) are grouped into ``subgraph`` blocks named after
their parent node. Ids are made Mermaid-safe by writing any character outside
``[A-Za-z0-9_-]`` as a backslash and its hex code point.
"""

from __future__ import annotations

import re
import string
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from stepgraph.draw.graph import CurveStyle, NodeStyles

if TYPE_CHECKING:
    from stepgraph.draw.graph import Edge, Graph, Node

__all__ = ["render_mermaid", "safe_id"]

_SAFE = frozenset(string.ascii_letters + string.digits + "_-")
_MARKDOWN = tuple("*_`")
_LABEL_ESCAPES = (("#", "#35;"), ("[", "#91;"), ("]", "#93;"), ("(", "#40;"), (")", "#41;"),
                  ("{", "#123;"), ("}", "#125;"), ('"', "#quot;"), ("<", "#60;"), (">", "#62;"),
                  ("|", "#124;"))
_SCALARS = (str, int, float, bool)


def safe_id(node_id: str) -> str:
    """``node_id`` with every character outside ``[A-Za-z0-9_-]`` as ``\\<hex>``."""
    return "".join(ch if ch in _SAFE else f"\\{ord(ch):x}" for ch in node_id)


def render_mermaid(
    graph: Graph, *, with_styles: bool = True, curve_style: CurveStyle | str = CurveStyle.LINEAR,
    node_colors: NodeStyles | None = None, wrap_label_n_words: int = 9,
    frontmatter_config: dict[str, Any] | None = None,
) -> str:
    out: list[str] = []
    if with_styles:
        curve = curve_style.value if isinstance(curve_style, CurveStyle) else str(curve_style)
        front = dict(frontmatter_config or {})
        config = dict(front.get("config", {}))
        config["flowchart"] = {**config.get("flowchart", {}), "curve": curve}
        front["config"] = config
        out.append("---\n" + "".join(_yaml(front, 0)) + "---\n")
    out.append("graph TD;\n")
    writer = _Writer(graph, out, with_styles, wrap_label_n_words)
    writer.body()
    if with_styles:
        styles = asdict(node_colors or NodeStyles())
        out.extend(f"\tclassDef {cls} {style}\n" for cls, style in styles.items())
    return "".join(out)


class _Writer:
    """Nodes, then edges grouped in ``subgraph`` blocks by the id prefix their ends share."""

    def __init__(self, graph: Graph, out: list[str], with_styles: bool, wrap: int) -> None:
        self.out, self.styled, self.wrap = out, with_styles, wrap
        first, last = graph.first_node(), graph.last_node()
        self.shapes = {"": "{0}({1})"}
        if first is not None:
            self.shapes[first.id] = "{0}([{1}]):::first"
        if last is not None:
            self.shapes[last.id] = "{0}([{1}]):::last"
        self.top: list[Node] = []
        self.by_parent: dict[str, list[Node]] = {}
        for node_id, node in graph.nodes.items():
            if ":" in node_id:
                self.by_parent.setdefault(node_id.rsplit(":", 1)[0], []).append(node)
            else:
                self.top.append(node)
        self.groups: dict[str, list[Edge]] = {}
        for edge in graph.edges:
            pairs = zip(edge.source.split(":"), edge.target.split(":"), strict=False)
            self.groups.setdefault(":".join(a for a, b in pairs if a == b), []).append(edge)
        self.opened: set[str] = set()

    def body(self) -> None:
        if self.styled:
            self.out.extend(self.node_line(n) for n in self.top)
        self.block(self.groups.get("", []), "")
        for prefix, edges in self.groups.items():
            if prefix and ":" not in prefix:
                self.block(edges, prefix)
                self.opened.add(prefix)
        if not self.styled:
            return
        for prefix, nodes in self.by_parent.items():  # subgraphs without inner edges
            if ":" not in prefix and prefix not in self.opened:
                self.out.append(f"\tsubgraph {prefix}\n")
                self.out.extend(self.node_line(n) for n in nodes)
                self.out.append("\tend\n")
                self.opened.add(prefix)

    def block(self, edges: list[Edge], prefix: str) -> None:
        wrap = bool(prefix) and not (len(edges) == 1 and edges[0].source == edges[0].target)
        if wrap:
            title = prefix.rsplit(":", 1)[-1]
            if title in self.opened:
                raise ValueError(
                    f"Found duplicate subgraph '{title}' -- this likely means that you're reusing "
                    "a subgraph node with the same name. Please adjust your graph to have "
                    "subgraph nodes with unique names."
                )
            self.opened.add(title)
            self.out.append(f"\tsubgraph {title}\n")
            if self.styled:
                self.out.extend(self.node_line(n) for n in self.by_parent.get(prefix, ()))
        self.out.extend(self.edge_line(e) for e in edges)
        for inner, inner_edges in self.groups.items():
            rest = inner[len(prefix) + 1:]
            if inner.startswith(prefix + ":") and rest and ":" not in rest:
                self.block(inner_edges, inner)
        if wrap:
            self.out.append("\tend\n")

    def node_line(self, node: Node) -> str:
        name = node.name.split(":")[-1]
        label = f"<p>{name}</p>" if name.startswith(_MARKDOWN) and name.endswith(_MARKDOWN) else name
        lines = _metadata_lines(node.metadata or {})
        if lines:
            label += "<hr/><small><em>" + "\n".join(lines) + "</em></small>"
        shape = self.shapes.get(node.id, self.shapes[""])
        return "\t" + shape.format(safe_id(node.id), label) + "\n"

    def edge_line(self, edge: Edge) -> str:
        if edge.data is None:
            arrow = " -.-> " if edge.conditional else " --> "
        else:
            words, text, n = str(edge.data).split(), str(edge.data), self.wrap
            if len(words) > n:
                text = "&nbsp<br>&nbsp".join(" ".join(words[i:i + n]) for i in range(0, len(words), n))
            arrow = f" -. &nbsp;{text}&nbsp; .-> " if edge.conditional else f" -- &nbsp;{text}&nbsp; --> "
        return f"\t{safe_id(edge.source)}{arrow}{safe_id(edge.target)};\n"


def _metadata_lines(metadata: dict[str, Any]) -> list[str]:
    lines = []
    for key, value in metadata.items():
        if isinstance(value, _SCALARS):
            text = str(value)
        elif isinstance(value, (list, tuple, set)) and all(isinstance(v, _SCALARS) for v in value):
            items = [str(v) for v in value]
            text = ", ".join(sorted(items) if isinstance(value, set) else items)
        else:
            continue
        line = f"{key} = {text}"
        for char, entity in _LABEL_ESCAPES:
            line = line.replace(char, entity)
        lines.append(line)
    return lines


_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_ .\-/]*$")
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def _yaml(value: Any, indent: int) -> list[str]:
    """A small block-style YAML writer (sorted keys) for the Mermaid frontmatter."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            item = value[key]
            if isinstance(item, dict) and item:
                lines.append(f"{pad}{_scalar(key)}:\n")
                lines.extend(_yaml(item, indent + 2))
            elif isinstance(item, (list, tuple)) and item:
                lines.append(f"{pad}{_scalar(key)}:\n")
                lines.extend(_yaml(item, indent))
            else:
                lines.append(f"{pad}{_scalar(key)}: {_scalar(item)}\n")
    else:
        for item in value:
            if isinstance(item, (dict, list, tuple)) and item:
                body = _yaml(item, indent + 2)
                lines.append(f"{pad}- {body[0].lstrip()}")
                lines.extend(body[1:])
            else:
                lines.append(f"{pad}- {_scalar(item)}\n")
    return lines


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, dict):
        return "{}"
    if isinstance(value, (list, tuple)):
        return "[]"
    text = str(value)
    if _PLAIN.match(text) and text.lower() not in _RESERVED and not text.endswith(" "):
        return text
    return "'" + text.replace("'", "''") + "'"

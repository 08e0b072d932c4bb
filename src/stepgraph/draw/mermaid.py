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
    first, last = graph.first_node(), graph.last_node()
    shapes = {"": "{0}({1})"}
    if first is not None:
        shapes[first.id] = "{0}([{1}]):::first"
    if last is not None:
        shapes[last.id] = "{0}([{1}]):::last"
    out: list[str] = []
    if with_styles:
        curve = curve_style.value if isinstance(curve_style, CurveStyle) else str(curve_style)
        front = dict(frontmatter_config or {})
        config = dict(front.get("config", {}))
        config["flowchart"] = {**config.get("flowchart", {}), "curve": curve}
        front["config"] = config
        out.append("---\n" + "".join(_yaml(front, 0)) + "---\n")
    out.append("graph TD;\n")

    top: list[Node] = []
    by_parent: dict[str, list[Node]] = {}
    for node_id, node in graph.nodes.items():
        if ":" in node_id:
            by_parent.setdefault(node_id.rsplit(":", 1)[0], []).append(node)
        else:
            top.append(node)

    def node_line(node: Node) -> str:
        name = node.name.split(":")[-1]
        label = f"<p>{name}</p>" if name.startswith(_MARKDOWN) and name.endswith(_MARKDOWN) else name
        lines = _metadata_lines(node.metadata or {})
        if lines:
            label += "<hr/><small><em>" + "\n".join(lines) + "</em></small>"
        return "\t" + shapes.get(node.id, shapes[""]).format(safe_id(node.id), label) + "\n"

    def edge_line(edge: Edge) -> str:
        if edge.data is None:
            arrow = " -.-> " if edge.conditional else " --> "
        else:
            words = str(edge.data).split()
            text = str(edge.data)
            if len(words) > wrap_label_n_words:
                text = "&nbsp<br>&nbsp".join(
                    " ".join(words[i:i + wrap_label_n_words])
                    for i in range(0, len(words), wrap_label_n_words)
                )
            arrow = f" -. &nbsp;{text}&nbsp; .-> " if edge.conditional else f" -- &nbsp;{text}&nbsp; --> "
        return f"\t{safe_id(edge.source)}{arrow}{safe_id(edge.target)};\n"

    if with_styles:
        out.extend(node_line(n) for n in top)

    # An edge belongs to the block named by the id segments its two ends share.
    groups: dict[str, list[Edge]] = {}
    for edge in graph.edges:
        shared = [a for a, b in zip(edge.source.split(":"), edge.target.split(":")) if a == b]
        groups.setdefault(":".join(shared), []).append(edge)
    opened: set[str] = set()

    def block(edges: list[Edge], prefix: str) -> None:
        wrap = bool(prefix) and not (len(edges) == 1 and edges[0].source == edges[0].target)
        if wrap:
            title = prefix.rsplit(":", 1)[-1]
            if title in opened:
                raise ValueError(
                    f"Found duplicate subgraph '{title}' -- this likely means that you're reusing "
                    "a subgraph node with the same name. Please adjust your graph to have "
                    "subgraph nodes with unique names."
                )
            opened.add(title)
            out.append(f"\tsubgraph {title}\n")
            if with_styles:
                out.extend(node_line(n) for n in by_parent.get(prefix, ()))
        out.extend(edge_line(e) for e in edges)
        for inner, inner_edges in groups.items():
            rest = inner[len(prefix) + 1:]
            if inner.startswith(prefix + ":") and rest and ":" not in rest:
                block(inner_edges, inner)
        if wrap:
            out.append("\tend\n")

    block(groups.get("", []), "")
    for prefix, edges in groups.items():
        if prefix and ":" not in prefix:
            block(edges, prefix)
            opened.add(prefix)
    if with_styles:
        for prefix, nodes in by_parent.items():
            if ":" not in prefix and prefix not in opened:
                out.append(f"\tsubgraph {prefix}\n")
                out.extend(node_line(n) for n in nodes)
                out.append("\tend\n")
                opened.add(prefix)
        styles = asdict(node_colors or NodeStyles())
        out.extend(f"\tclassDef {cls} {style}\n" for cls, style in styles.items())
    return "".join(out)


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

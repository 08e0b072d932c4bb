"""A dependency-free text drawing: boxes in layers, top to bottom, joined by lines.

Layout: edges that close a cycle are set aside, each node is ranked by its longest path
from a source, edges that skip ranks pass through one-column waypoints, and a few
barycenter sweeps order each rank to limit crossings. Solid edges are drawn with ``*``,
conditional ones with ``.``; every drawn line runs downwards. Edges that go back up (loops)
and labels are listed under the drawing.
"""

from __future__ import annotations

from itertools import pairwise
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from stepgraph.draw.graph import Edge, Graph

__all__ = ["render_ascii"]

_H_GAP = 3


def render_ascii(graph: Graph) -> str:
    if not graph.nodes:
        return ""
    ids = list(graph.nodes)
    edges: dict[tuple[str, str], Edge] = {}
    for edge in graph.edges:
        edges.setdefault((edge.source, edge.target), edge)
    back = _back_edges(ids, list(edges), graph)
    layout = _Layout(ids, [k for k in edges if k not in back and k[0] != k[1]])
    rows = layout.paint({k: edges[k].conditional for k in layout.chains})
    notes = []
    loops = [e for k, e in edges.items() if k in back or k[0] == k[1]]
    if loops:
        notes.append("Loop edges (not drawn above):")
        notes.extend("  " + _arrow(e) for e in loops)
    labelled = [e for e in edges.values() if e.data is not None and e not in loops]
    if labelled:
        notes.append("Edge labels:")
        notes.extend("  " + _arrow(e) for e in labelled)
    return "\n".join([*rows, *notes])


class _Layout:
    """Ranks, waypoints, order and columns of the boxes, then the painted rows."""

    def __init__(self, ids: list[str], down: list[tuple[str, str]]) -> None:
        self.ids = ids
        self.rank = rank = _ranks(ids, down)
        # Waypoints: an edge spanning several ranks becomes a chain through one-column slots.
        self.width = width = {n: len(n) + 4 for n in ids}
        self.chains: dict[tuple[str, str], list[str]] = {}
        for src, tgt in down:
            chain = [src]
            for r in range(rank[src] + 1, rank[tgt]):
                point = f"\0{src}\0{tgt}\0{r}"
                rank[point], width[point] = r, 1
                chain.append(point)
            self.chains[(src, tgt)] = [*chain, tgt]
        links = [pair for chain in self.chains.values() for pair in pairwise(chain)]
        self.layers: list[list[str]] = [[] for _ in range(max(rank.values()) + 1)]
        for item in rank:
            self.layers[rank[item]].append(item)
        _order(self.layers, links)
        self.left = _place(self.layers, links, width)
        self.ups: dict[str, list[str]] = {}
        self.downs: dict[str, list[str]] = {}
        for a, b in links:
            self.downs.setdefault(a, []).append(b)
            self.ups.setdefault(b, []).append(a)

    def center(self, item: str) -> int:
        return self.left[item] + self.width[item] // 2

    def port(self, item: str, other: str, table: dict[str, list[str]]) -> int:
        """Column where the line to ``other`` leaves ``item``: lines spread along the border."""
        if self.width[item] == 1:
            return self.left[item]
        peers = sorted(table[item], key=self.center)
        inner = self.width[item] - 2
        return self.left[item] + 1 + (peers.index(other) + 1) * inner // (len(peers) + 1)

    def paint(self, conditional: dict[tuple[str, str], bool]) -> list[str]:
        tops = [0]
        for upper in self.layers[:-1]:
            spread = [abs(self.center(a) - self.center(b)) for a in upper for b in self.downs.get(a, ())]
            tops.append(tops[-1] + 3 + min(6, max(3, (max(spread, default=0) + 5) // 6)))
        canvas = _Canvas(tops[-1] + 3, max(self.left[i] + self.width[i] for i in self.rank) + 1)
        for key, chain in self.chains.items():
            mark = "." if conditional[key] else "*"
            for a, b in pairwise(chain):
                x1 = self.port(b, a, self.ups)
                y1 = tops[self.rank[b]] - 1
                canvas.line(self.port(a, b, self.downs), tops[self.rank[a]] + 3, x1, y1, mark)
                if self.width[b] == 1:
                    for dy in range(3):
                        canvas.put(x1, y1 + 1 + dy, mark)
        for item in self.ids:
            top, x = tops[self.rank[item]], self.left[item]
            border = "+" + "-" * (self.width[item] - 2) + "+"
            canvas.text(x, top, border)
            canvas.text(x, top + 1, f"| {item} |")
            canvas.text(x, top + 2, border)
        return canvas.rows()


def _arrow(edge: Edge) -> str:
    if edge.data is None:
        return f"{edge.source} {'-.->' if edge.conditional else '-->'} {edge.target}"
    mid = f"-. {edge.data} .->" if edge.conditional else f"-- {edge.data} -->"
    return f"{edge.source} {mid} {edge.target}"


def _back_edges(ids: list[str], keys: list[tuple[str, str]], graph: Graph) -> set[tuple[str, str]]:
    """Edges that close a cycle in a depth-first walk started from the first node."""
    succ: dict[str, list[str]] = {}
    for src, tgt in keys:
        succ.setdefault(src, []).append(tgt)
    first = graph.first_node()
    roots = ([first.id] if first else []) + ids
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    back: set[tuple[str, str]] = set()
    for root in roots:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(succ.get(root, ())))]
        while stack:
            node, it = stack[-1]
            nxt = next(it, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                back.add((node, nxt))
            elif nxt not in state:
                state[nxt] = 1
                stack.append((nxt, iter(succ.get(nxt, ()))))
    return back


def _ranks(ids: list[str], down: list[tuple[str, str]]) -> dict[str, int]:
    """Longest path from a source over the acyclic ``down`` edges."""
    preds: dict[str, list[str]] = {n: [] for n in ids}
    indeg = dict.fromkeys(ids, 0)
    succ: dict[str, list[str]] = {}
    for src, tgt in down:
        preds[tgt].append(src)
        succ.setdefault(src, []).append(tgt)
        indeg[tgt] += 1
    rank: dict[str, int] = {}
    ready = [n for n in ids if indeg[n] == 0]
    while ready:
        node = ready.pop(0)
        rank[node] = max((rank[p] + 1 for p in preds[node]), default=0)
        for nxt in succ.get(node, ()):
            indeg[nxt] -= 1
            if indeg[nxt] == 0:
                ready.append(nxt)
    return rank


def _order(layers: list[list[str]], links: list[tuple[str, str]]) -> None:
    """Barycenter sweeps (down then up) to reduce crossings; stable for ties."""
    ups: dict[str, list[str]] = {}
    downs: dict[str, list[str]] = {}
    for a, b in links:
        downs.setdefault(a, []).append(b)
        ups.setdefault(b, []).append(a)
    for _ in range(4):
        for i in range(1, len(layers)):
            _sort_by(layers[i], layers[i - 1], ups)
        for i in range(len(layers) - 2, -1, -1):
            _sort_by(layers[i], layers[i + 1], downs)


def _sort_by(layer: list[str], fixed: list[str], near: dict[str, list[str]]) -> None:
    pos = {item: i for i, item in enumerate(fixed)}
    current = {item: i for i, item in enumerate(layer)}

    def bary(item: str) -> float:
        around = [pos[n] for n in near.get(item, ()) if n in pos]
        return sum(around) / len(around) if around else current[item]

    layer.sort(key=lambda item: (bary(item), current[item]))


def _place(layers: list[list[str]], links: list[tuple[str, str]], width: dict[str, int]) -> dict[str, int]:
    """Left columns: each item centred under its parents, pushed right to avoid overlap."""
    ups: dict[str, list[str]] = {}
    for a, b in links:
        ups.setdefault(b, []).append(a)
    left: dict[str, int] = {}
    for layer in layers:
        cursor = None
        wants: dict[str, int] = {}
        for item in layer:
            parents = [left[p] + width[p] // 2 for p in ups.get(item, ()) if p in left]
            x = (sum(parents) // len(parents) - width[item] // 2) if parents else 0
            if parents:
                wants[item] = x
            if cursor is not None:
                x = max(x, cursor)
            left[item] = x
            cursor = x + width[item] + _H_GAP
        if wants:  # pushing right drifts the row: slide it back to centre on its parents
            drift = sum(left[i] - w for i, w in wants.items()) / len(wants)
            for item in layer:
                left[item] -= round(drift)
    shift = -min(left.values())
    return {k: v + shift for k, v in left.items()}


class _Canvas:
    def __init__(self, height: int, width: int) -> None:
        self.cells = [[" "] * width for _ in range(height)]

    def put(self, x: int, y: int, ch: str) -> None:
        if 0 <= y < len(self.cells) and 0 <= x < len(self.cells[y]):
            self.cells[y][x] = ch

    def text(self, x: int, y: int, s: str) -> None:
        for i, ch in enumerate(s):
            self.put(x + i, y, ch)

    def line(self, x0: int, y0: int, x1: int, y1: int, ch: str) -> None:
        """A connected line from (x0, y0) down to (x1, y1)."""
        prev = x0
        for y in range(y0, y1 + 1):
            x = x1 if y1 == y0 else round(x0 + (x1 - x0) * (y - y0) / (y1 - y0))
            step = 1 if x >= prev else -1
            start = prev + step if y > y0 and x != prev else x
            for cx in range(start, x + step, step):
                self.put(cx, y, ch)
            prev = x

    def rows(self) -> list[str]:
        return ["".join(row).rstrip() for row in self.cells]

// A layered (top-down) drawing of a graph: ranks by longest path from __start__ over the
// forward edges, the order inside a rank by the mean position of the predecessors (two
// sweeps), then coordinates. Subgraph nodes ("parent:child", from xray) are boxed per parent.

export const NODE_H = 34;
const GAP_X = 28;
const GAP_Y = 64;
const PAD = 24;

export const nodeWidth = (label) => Math.max(76, Math.round(label.length * 7.4) + 28);

export const label = (id) => (id === "__start__" ? "start" : id === "__end__" ? "end" : id.split(":").pop());

export function layoutGraph(graph) {
  const ids = graph.nodes.map((n) => n.id);
  const known = new Set(ids);
  const edges = graph.edges.filter((e) => known.has(e.source) && known.has(e.target));
  const out = new Map(ids.map((id) => [id, []]));
  for (const e of edges) out.get(e.source).push(e.target);

  // forward edges: those of a depth-first walk that do not close a cycle
  const state = new Map();
  const back = new Set();
  const visit = (id) => {
    state.set(id, 1);
    for (const t of out.get(id)) {
      if (state.get(t) === 1) back.add(`${id}->${t}`);
      else if (!state.has(t)) visit(t);
    }
    state.set(id, 2);
  };
  if (known.has("__start__")) visit("__start__");
  for (const id of ids) if (!state.has(id)) visit(id);
  const forward = edges.filter((e) => !back.has(`${e.source}->${e.target}`) && e.source !== e.target);

  const rank = new Map(ids.map((id) => [id, 0]));
  for (let pass = 0; pass < ids.length; pass++) {
    let moved = false;
    for (const e of forward) {
      const r = rank.get(e.source) + 1;
      if (r > rank.get(e.target)) {
        rank.set(e.target, r);
        moved = true;
      }
    }
    if (!moved) break;
  }
  // __end__ on a rank of its own, last
  const others = ids.filter((id) => id !== "__end__").map((id) => rank.get(id));
  if (known.has("__end__")) rank.set("__end__", Math.max(0, ...others) + 1);
  const layers = [];
  for (const id of ids) (layers[rank.get(id)] ||= []).push(id);
  const filled = layers.filter(Boolean);
  const preds = new Map(ids.map((id) => [id, []]));
  for (const e of forward) preds.get(e.target).push(e.source);
  const pos = new Map();
  filled.forEach((layer) => layer.forEach((id, i) => pos.set(id, i)));
  for (let sweep = 0; sweep < 2; sweep++) {
    for (const layer of filled) {
      const key = (id) => {
        const p = preds.get(id);
        return p.length ? p.reduce((s, q) => s + pos.get(q), 0) / p.length : pos.get(id);
      };
      // keep a subgraph's nodes next to each other
      layer.sort((a, b) => key(a) - key(b) || group(a).localeCompare(group(b)));
      layer.forEach((id, i) => pos.set(id, i));
    }
  }

  const widths = filled.map((layer) => layer.reduce((s, id) => s + nodeWidth(label(id)), 0) + GAP_X * (layer.length - 1));
  const width = Math.max(...widths, 120) + PAD * 2;
  const boxes = new Map();
  filled.forEach((layer, r) => {
    let x = (width - widths[r]) / 2;
    for (const id of layer) {
      const w = nodeWidth(label(id));
      boxes.set(id, { id, x, y: PAD + r * (NODE_H + GAP_Y), w, h: NODE_H });
      x += w + GAP_X;
    }
  });
  const height = PAD * 2 + filled.length * NODE_H + (filled.length - 1) * GAP_Y;

  const groups = new Map();
  for (const b of boxes.values()) {
    const g = group(b.id);
    if (!g) continue;
    const cur = groups.get(g) || { id: g, x1: Infinity, y1: Infinity, x2: -Infinity, y2: -Infinity };
    cur.x1 = Math.min(cur.x1, b.x - 10);
    cur.y1 = Math.min(cur.y1, b.y - 22);
    cur.x2 = Math.max(cur.x2, b.x + b.w + 10);
    cur.y2 = Math.max(cur.y2, b.y + b.h + 10);
    groups.set(g, cur);
  }

  const paths = edges.map((e) => {
    const s = boxes.get(e.source);
    const t = boxes.get(e.target);
    const isBack = back.has(`${e.source}->${e.target}`) || t.y <= s.y;
    let d;
    if (e.source === e.target) {
      const x = s.x + s.w;
      const y = s.y + s.h / 2;
      d = `M${x},${y - 8} C${x + 36},${y - 24} ${x + 36},${y + 24} ${x},${y + 8}`;
    } else if (isBack) {
      const x1 = s.x + s.w;
      const y1 = s.y + s.h / 2;
      const x2 = t.x + t.w;
      const y2 = t.y + t.h / 2;
      const bulge = Math.max(x1, x2) + 48;
      d = `M${x1},${y1} C${bulge},${y1} ${bulge},${y2} ${x2},${y2}`;
    } else {
      const x1 = s.x + s.w / 2;
      const y1 = s.y + s.h;
      const x2 = t.x + t.w / 2;
      const y2 = t.y;
      const m = (y1 + y2) / 2;
      d = `M${x1},${y1} C${x1},${m} ${x2},${m} ${x2},${y2}`;
    }
    return { ...e, d, key: `${e.source}->${e.target}` };
  });
  const extra = paths.some((p) => p.d.includes("C") && back.has(p.key)) ? 60 : 0;
  return { boxes: [...boxes.values()], groups: [...groups.values()], paths, width: width + extra, height };
}

export function group(id) {
  const at = id.lastIndexOf(":");
  return at > 0 ? id.slice(0, at) : "";
}

// The assistant's graph as SVG: nodes (buttons: select one to set its breakpoints), edges
// (conditional ones dashed), subgraphs boxed (xray), the running nodes highlighted live and
// how many tasks each node ran in this run (a Send fan-out shows as "x3").
import { useMemo } from "react";
import { NODE_H, label, layoutGraph } from "./layout.js";

export function GraphView({ graph, active, counts, seen, breakpoints, selected, onSelect, interrupted }) {
  const drawn = useMemo(() => (graph ? layoutGraph(graph) : null), [graph]);
  if (!drawn) return <p className="muted">No graph drawing.</p>;
  const activeNames = Object.keys(active).filter((k) => active[k] > 0);
  return (
    <figure className="graph" aria-label="graph drawing">
      <svg
        role="group"
        aria-label={`graph with ${drawn.boxes.length} nodes`}
        viewBox={`0 0 ${drawn.width} ${drawn.height}`}
        width={drawn.width}
        height={drawn.height}
        data-testid="graph-svg"
        data-active={activeNames.join(",")}
        data-seen={[...seen].join(",")}
      >
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M0,0 L10,5 L0,10 z" className="arrowhead" />
          </marker>
        </defs>
        {drawn.groups.map((g) => (
          <g key={g.id} className="subgraph" data-subgraph={g.id}>
            <rect x={g.x1} y={g.y1} width={g.x2 - g.x1} height={g.y2 - g.y1} rx="10" />
            <text x={g.x2 - 6} y={g.y1 + 14} textAnchor="end">{g.id}</text>
          </g>
        ))}
        {drawn.paths.map((p) => (
          <path
            key={p.key}
            d={p.d}
            className={p.conditional ? "edge conditional" : "edge"}
            markerEnd="url(#arrow)"
            data-edge={p.key}
          />
        ))}
        {drawn.boxes.map((b) => {
          const isActive = (active[b.id] || 0) > 0;
          const n = counts[b.id] || 0;
          const bp = [breakpoints.before.has(b.id) && "before", breakpoints.after.has(b.id) && "after"].filter(Boolean);
          const special = b.id === "__start__" || b.id === "__end__";
          const cls = ["node", special && "terminal", isActive && "active", seen.has(b.id) && "ran",
            interrupted.has(b.id) && "paused", selected === b.id && "selected"].filter(Boolean).join(" ");
          const text = label(b.id);
          const desc = [isActive ? "running" : seen.has(b.id) ? "ran" : "", n ? `${n} task${n > 1 ? "s" : ""}` : "",
            bp.length ? `breakpoint ${bp.join(" and ")}` : "", interrupted.has(b.id) ? "interrupted" : ""].filter(Boolean).join(", ");
          return (
            <g
              key={b.id}
              className={cls}
              data-node={b.id}
              data-active={isActive ? "true" : "false"}
              data-count={n}
              transform={`translate(${b.x},${b.y})`}
              tabIndex={special ? -1 : 0}
              role={special ? undefined : "button"}
              aria-pressed={special ? undefined : selected === b.id}
              aria-label={special ? undefined : `node ${b.id}${desc ? `: ${desc}` : ""}`}
              onClick={() => !special && onSelect(b.id)}
              onKeyDown={(e) => {
                if (!special && (e.key === "Enter" || e.key === " ")) {
                  e.preventDefault();
                  onSelect(b.id);
                }
              }}
            >
              <rect width={b.w} height={NODE_H} rx={special ? NODE_H / 2 : 6} />
              <text x={b.w / 2} y={NODE_H / 2 + 4} textAnchor="middle">{text}</text>
              {n > 1 && (
                <g className="count" transform={`translate(${b.w - 6},-6)`}>
                  <rect x="-14" y="-9" width="28" height="18" rx="9" />
                  <text textAnchor="middle" y="4">{`x${n}`}</text>
                </g>
              )}
              {bp.includes("before") && <circle className="bp" cx="0" cy="0" r="5" aria-hidden="true" />}
              {bp.includes("after") && <circle className="bp" cx="0" cy={NODE_H} r="5" aria-hidden="true" />}
            </g>
          );
        })}
      </svg>
      <figcaption className="muted small">
        Dashed: conditional edge. Red dots: breakpoints (before: top, after: bottom). Select a node to set them.
      </figcaption>
    </figure>
  );
}

export function NodePanel({ node, breakpoints, onToggle, graph }) {
  if (!node) return null;
  const data = graph?.nodes.find((n) => n.id === node)?.data;
  const inner = node.includes(":");
  return (
    <fieldset className="node-panel" aria-label={`node ${node}`}>
      <legend>Node {node}</legend>
      <label>
        <input type="checkbox" disabled={inner} checked={breakpoints.before.has(node)} onChange={() => onToggle(node, "before")} />
        Interrupt before
      </label>
      <label>
        <input type="checkbox" disabled={inner} checked={breakpoints.after.has(node)} onChange={() => onToggle(node, "after")} />
        Interrupt after
      </label>
      {inner && <p className="muted small">A node of a subgraph: breakpoints are set on the graph's own nodes.</p>}
      {data && typeof data === "object" && Object.keys(data).length > 1 && <pre className="json small">{JSON.stringify(data, null, 2)}</pre>}
    </fieldset>
  );
}

// The thread's checkpoints in order (step, source, time), one lane per branch; for the one
// selected: its state, the diff from its parent, its tasks (pending writes, interrupts,
// subgraph checkpoints nested), and time travel: replay from it, or fork it with an edited
// value written as a chosen node (update_state) and run the new branch.
import { useEffect, useMemo, useState } from "react";
import { JsonBox } from "./JsonBox.jsx";
import { diffValues, parseJson, pretty, shortId, when } from "./util.js";

// history (newest first) -> checkpoints oldest first, each with its branch (lane) number
export function branches(history) {
  const items = [...(history || [])].sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
  const byId = new Map();
  const children = new Map();
  let lanes = 0;
  const out = items.map((s) => {
    const id = s.checkpoint?.checkpoint_id || s.checkpoint_id;
    const parent = s.parent_checkpoint?.checkpoint_id || s.parent_checkpoint_id || null;
    const siblings = children.get(parent) || 0;
    children.set(parent, siblings + 1);
    const parentLane = parent && byId.has(parent) ? byId.get(parent).lane : 0;
    const lane = siblings === 0 ? parentLane : ++lanes;
    // the nodes that ran to make this checkpoint: the tasks of its parent
    const before = parent && byId.has(parent) ? byId.get(parent).state : null;
    const ran = s.metadata?.source === "loop" && before ? [...new Set((before.tasks || []).map((t) => t.name))] : [];
    const item = { id, parent, lane, state: s, ran };
    byId.set(id, item);
    return item;
  });
  return { items: out, byId, lanes: lanes + 1 };
}

export function Timeline({ client, threadId, history, nodes, running, onReplay, onForked, busy }) {
  const tree = useMemo(() => branches(history), [history]);
  const [selected, setSelected] = useState("");
  useEffect(() => {
    if (!tree.byId.has(selected) && tree.items.length) setSelected(tree.items[tree.items.length - 1].id);
  }, [tree, selected]);
  if (!threadId) return <p className="muted">No thread selected: start a run or open a thread.</p>;
  if (!tree.items.length) return <p className="muted">No checkpoints yet.</p>;
  const item = tree.byId.get(selected);
  return (
    <section className="timeline" aria-label="timeline">
      <ol className="checkpoints" aria-label="checkpoints" data-testid="checkpoints" data-branches={tree.lanes}>
        {tree.items.map((c, i) => {
          const m = c.state.metadata || {};
          return (
            <li key={c.id} data-branch={c.lane} style={{ marginLeft: `${c.lane * 1.2}rem` }}>
              <button
                type="button"
                className={selected === c.id ? "cp selected" : "cp"}
                aria-pressed={selected === c.id}
                data-testid="checkpoint"
                data-index={i}
                data-checkpoint={c.id}
                onClick={() => setSelected(c.id)}
              >
                {c.lane > 0 && <span className="tag branch">branch {c.lane}</span>}
                <span>#{i + 1} step {m.step ?? "?"}</span>
                <span className="tag">{m.source}</span>
                {c.ran.length > 0 && <span data-testid="ran">{c.ran.join(", ")}</span>}
                <span className="muted">{(c.state.next || []).length ? `-> ${[...new Set(c.state.next)].join(", ")}` : "done"}</span>
                <span className="muted small">{when(c.state.created_at)}</span>
              </button>
            </li>
          );
        })}
      </ol>
      {item && (
        <CheckpointDetail
          key={item.id}
          client={client}
          threadId={threadId}
          item={item}
          parent={item.parent ? tree.byId.get(item.parent) : null}
          nodes={nodes}
          running={running || busy}
          onReplay={onReplay}
          onForked={onForked}
        />
      )}
    </section>
  );
}

function CheckpointDetail({ client, threadId, item, parent, nodes, running, onReplay, onForked }) {
  const s = item.state;
  const values = s.values || {};
  const keys = Object.keys(values);
  const [key, setKey] = useState(keys[0] || "");
  const [text, setText] = useState(pretty(values[keys[0]]));
  const [asNode, setAsNode] = useState("");
  const [error, setError] = useState("");
  const [nested, setNested] = useState(null);
  const diff = diffValues(parent?.state.values, values);
  useEffect(() => {
    let live = true;
    client.threads.state(threadId, item.id).then((st) => live && setNested(st), () => live && setNested(null));
    return () => {
      live = false;
    };
  }, [client, threadId, item.id]);
  const pickKey = (k) => {
    setKey(k);
    setText(pretty(values[k]));
  };
  const fork = async (thenRun) => {
    const p = parseJson(text);
    if (!p.ok) return setError(`not JSON: ${p.error}`);
    setError("");
    try {
      const body = { values: { [key]: p.value ?? null }, checkpoint_id: item.id };
      if (asNode) body.as_node = asNode;
      const done = await client.threads.update(threadId, body);
      onForked(done?.checkpoint?.checkpoint_id || done?.checkpoint_id, thenRun);
    } catch (e) {
      setError(e.message);
    }
  };
  return (
    <div className="cp-detail" data-testid="checkpoint-detail">
      <h3>Checkpoint {shortId(item.id)} <span className="muted small">step {s.metadata?.step}, {s.metadata?.source}</span></h3>
      <div className="row">
        <button type="button" disabled={running} onClick={() => onReplay(item.id)} data-testid="replay">Replay from here</button>
      </div>
      <details open>
        <summary>Changes from the previous checkpoint ({diff.length})</summary>
        <ul className="diff" data-testid="diff">
          {diff.map((d) => (
            <li key={d.key} className={d.kind}>
              <b>{d.key}</b> {d.kind}
              <pre className="json small">{d.kind === "changed" ? `${JSON.stringify(d.before)}\n-> ${JSON.stringify(d.after)}` : JSON.stringify(d.after ?? d.before)}</pre>
            </li>
          ))}
        </ul>
      </details>
      <details>
        <summary>State</summary>
        <pre className="json small" data-testid="state-values">{pretty(values)}</pre>
      </details>
      <details open={(s.tasks || []).length > 0}>
        <summary>Tasks and pending writes ({(s.tasks || []).length})</summary>
        <Tasks tasks={(nested?.tasks || s.tasks) ?? []} />
      </details>
      <details>
        <summary>Metadata</summary>
        <pre className="json small">{pretty(s.metadata)}</pre>
      </details>
      <fieldset className="fork" aria-label="fork from this checkpoint">
        <legend>Fork from here (update_state)</legend>
        <div className="field">
          <label htmlFor="fork-key">Key</label>
          <select id="fork-key" value={key} onChange={(e) => pickKey(e.target.value)}>
            {keys.map((k) => (
              <option key={k} value={k}>{k}</option>
            ))}
          </select>
        </div>
        <JsonBox label="New value (JSON)" value={text} onChange={setText} rows={4} testId="fork-value"
          describe="Written through the key's reducer, as if the node below had returned it." />
        <div className="field">
          <label htmlFor="fork-as-node">As node</label>
          <select id="fork-as-node" value={asNode} onChange={(e) => setAsNode(e.target.value)}>
            <option value="">(the server decides)</option>
            {nodes.map((n) => (
              <option key={n} value={n}>{n}</option>
            ))}
          </select>
        </div>
        {error && <p className="error" role="alert">{error}</p>}
        <div className="row">
          <button type="button" disabled={running || !key} onClick={() => fork(false)} data-testid="fork">Fork</button>
          <button type="button" disabled={running || !key} onClick={() => fork(true)} data-testid="fork-run">Fork and run</button>
        </div>
      </fieldset>
    </div>
  );
}

function Tasks({ tasks, depth = 0 }) {
  if (!tasks.length) return <p className="muted small">none</p>;
  return (
    <ul className="tasks">
      {tasks.map((t) => (
        <li key={t.id} data-testid="task">
          <b>{t.name}</b> <span className="muted small">{shortId(t.id)}</span>
          {t.error && <span className="error"> error: {String(t.error)}</span>}
          {(t.interrupts || []).length > 0 && <span className="tag">interrupted</span>}
          {t.result != null && (
            <pre className="json small" aria-label="pending writes">{pretty(t.result)}</pre>
          )}
          {t.state && typeof t.state === "object" && t.state.values && depth < 4 && (
            <div className="nested" data-testid="subgraph-state">
              <span className="muted small">subgraph checkpoint {shortId(t.state.checkpoint?.checkpoint_id)}, next: {(t.state.next || []).join(", ") || "none"}</span>
              <pre className="json small">{pretty(t.state.values)}</pre>
              <Tasks tasks={t.state.tasks || []} depth={depth + 1} />
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}

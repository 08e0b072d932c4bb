// Start a run: input from a form generated from the graph's input schema (JSON as the
// fallback), the stream modes to watch, cancel; then the events as they arrive.
import { useState } from "react";
import { JsonBox } from "./JsonBox.jsx";
import { SchemaForm } from "./SchemaForm.jsx";
import { parseJson, pretty } from "./util.js";

export const MODES = ["updates", "values", "messages-tuple", "custom", "tasks", "checkpoints", "debug", "events"];
export const DEFAULT_MODES = ["updates", "messages-tuple", "custom"];

const HISTORY = "stepgraph-studio-inputs:";

function pastInputs(graphId) {
  try {
    return JSON.parse(window.localStorage.getItem(HISTORY + graphId) || "[]");
  } catch {
    return [];
  }
}

function remember(graphId, value) {
  const text = JSON.stringify(value ?? null);
  const list = [text, ...pastInputs(graphId).filter((t) => t !== text)].slice(0, 10);
  window.localStorage.setItem(HISTORY + graphId, JSON.stringify(list));
}

export function RunPanel({ schemas, run, modes, setModes, onStart, configText, setConfigText, streaming, setStreaming }) {
  const [filter, setFilter] = useState("");
  const [preset, setPreset] = useState({ n: 0, text: null });
  const graphId = schemas?.graph_id || "";
  const past = pastInputs(graphId);
  const toggle = (m) => setModes(modes.includes(m) ? modes.filter((x) => x !== m) : [...modes, m]);
  const shown = run.events.filter((e) => e.mode === "metadata" || e.mode === "result" || e.mode === "error" || e.mode === "end" || modes.includes(e.mode) ||
    (e.mode === "messages" && modes.includes("messages-tuple")));
  const visible = filter ? shown.filter((e) => e.event.includes(filter) || JSON.stringify(e.data).includes(filter)) : shown;
  return (
    <section aria-label="run" className="run-panel">
      <label className="inline">
        <input type="checkbox" checked={streaming} onChange={(e) => setStreaming(e.target.checked)} /> stream the run
        (off: wait for its result)
      </label>
      <fieldset className="modes" disabled={!streaming}>
        <legend>Stream modes</legend>
        {MODES.map((m) => (
          <label key={m} className="inline">
            <input type="checkbox" checked={modes.includes(m)} onChange={() => toggle(m)} /> {m}
          </label>
        ))}
      </fieldset>
      <details>
        <summary>Run config (JSON: config, context)</summary>
        <JsonBox label="config / context" value={configText} onChange={setConfigText} rows={3}
          describe='e.g. {"config": {"recursion_limit": 10}, "context": {"user": "ann"}}' />
      </details>
      {past.length > 0 && (
        <div className="field">
          <label htmlFor="past-inputs">Previous inputs</label>
          <select id="past-inputs" value="" onChange={(e) => e.target.value && setPreset({ n: preset.n + 1, text: e.target.value })}>
            <option value="">(pick one to edit it as JSON)</option>
            {past.map((t) => (
              <option key={t} value={t}>{t.length > 80 ? `${t.slice(0, 80)}...` : t}</option>
            ))}
          </select>
        </div>
      )}
      <SchemaForm
        key={`${graphId}-${preset.n}`}
        schema={schemas?.input_schema || { type: "object" }}
        initialJson={preset.text ? JSON.stringify(JSON.parse(preset.text), null, 2) : null}
        submitLabel="Run"
        busy={run.running}
        testId="input-form"
        onSubmit={(value) => {
          remember(graphId, value);
          onStart({ input: value ?? null });
        }}
      />
      <div className="row">
        <button type="button" onClick={run.cancel} disabled={!run.running} data-testid="cancel">Cancel run</button>
        <span role="status" data-testid="run-status" data-running={run.running ? "1" : "0"}>
          {run.running ? `running${run.runId ? ` ${run.runId.slice(0, 8)}` : ""}...` : run.runId ? "finished" : "idle"}
        </span>
      </div>
      {run.error && <p className="error" role="alert" data-testid="run-error">{run.error}</p>}
      <div className="field">
        <label htmlFor="event-filter">Filter events</label>
        <input id="event-filter" type="search" value={filter} onChange={(e) => setFilter(e.target.value)} />
      </div>
      <ol className="events" aria-label="stream events" data-testid="events">
        {visible.map((e) => (
          <li key={e.n} data-mode={e.mode}>
            <span className="tag">{e.mode}</span>
            {e.path.length > 0 && <span className="tag ns">{e.path.join(" / ")}</span>}
            <EventBody e={e} />
          </li>
        ))}
      </ol>
    </section>
  );
}

function EventBody({ e }) {
  if (e.mode === "messages" && Array.isArray(e.data)) {
    const [chunk, meta] = e.data;
    return <code>{meta?.langgraph_node ? `${meta.langgraph_node}: ` : ""}{JSON.stringify(chunk?.content ?? chunk)}</code>;
  }
  if (e.mode === "updates" && e.data && typeof e.data === "object") {
    return (
      <>
        {Object.entries(e.data).map(([node, upd]) => (
          <details key={node}>
            <summary>{node}</summary>
            <pre className="json small">{pretty(upd)}</pre>
          </details>
        ))}
      </>
    );
  }
  const text = JSON.stringify(e.data);
  return text && text.length > 160 ? (
    <details>
      <summary><code>{text.slice(0, 120)}...</code></summary>
      <pre className="json small">{pretty(e.data)}</pre>
    </details>
  ) : (
    <code>{text}</code>
  );
}

export function runOptions(configText) {
  const p = parseJson(configText);
  if (!p.ok) throw new Error(`run config is not JSON: ${p.error}`);
  const v = p.value || {};
  const out = {};
  if (v.config) out.config = v.config;
  if (v.context) out.context = v.context;
  return out;
}

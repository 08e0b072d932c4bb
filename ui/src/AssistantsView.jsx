// Assistants: list, view and edit config / context / metadata (each save is a new version),
// the versions with the one to make latest, and new assistants for a graph.
import { useCallback, useEffect, useState } from "react";
import { JsonBox } from "./JsonBox.jsx";
import { parseJson, pretty, shortId, when } from "./util.js";

export function AssistantsView({ client, assistants, reload, selected, onSelect }) {
  const current = assistants.find((a) => a.assistant_id === selected) || assistants[0];
  const [versions, setVersions] = useState([]);
  const [config, setConfig] = useState("");
  const [context, setContext] = useState("");
  const [metadata, setMetadata] = useState("");
  const [name, setName] = useState("");
  const [error, setError] = useState("");
  const [note, setNote] = useState("");
  const load = useCallback(async () => {
    if (!current) return;
    setConfig(pretty(current.config || {}));
    setContext(pretty(current.context || {}));
    setMetadata(pretty(current.metadata || {}));
    setName(current.name || "");
    try {
      setVersions(await client.assistants.versions(current.assistant_id));
    } catch (e) {
      setVersions([]);
      setError(e.message);
    }
  }, [client, current]);
  useEffect(() => {
    load();
  }, [load]);
  if (!current) return <p className="muted">No assistants.</p>;
  const fields = () => {
    const out = {};
    for (const [k, t] of [["config", config], ["context", context], ["metadata", metadata]]) {
      const p = parseJson(t);
      if (!p.ok) throw new Error(`${k}: ${p.error}`);
      out[k] = p.value || {};
    }
    return out;
  };
  const act = async (fn, done) => {
    try {
      setError("");
      await fn();
      setNote(done);
      await reload();
    } catch (e) {
      setError(e.message);
    }
  };
  return (
    <section aria-label="assistants" className="assistants split">
      <ul className="list" aria-label="assistant list">
        {assistants.map((a) => (
          <li key={a.assistant_id}>
            <button type="button" aria-pressed={a.assistant_id === current.assistant_id} onClick={() => onSelect(a.assistant_id)}>
              {a.name} <span className="muted small">{a.graph_id} v{a.version}</span>
            </button>
          </li>
        ))}
      </ul>
      <div>
        <h3>{current.name} <span className="muted small">{shortId(current.assistant_id)} - graph {current.graph_id}, version {current.version}</span></h3>
        <div className="field">
          <label htmlFor="assistant-name">Name</label>
          <input id="assistant-name" value={name} onChange={(e) => setName(e.target.value)} />
        </div>
        <JsonBox label="Config (JSON)" value={config} onChange={setConfig} rows={4} />
        <JsonBox label="Context (JSON)" value={context} onChange={setContext} rows={3} />
        <JsonBox label="Metadata (JSON)" value={metadata} onChange={setMetadata} rows={3} />
        {error && <p className="error" role="alert">{error}</p>}
        {note && <p role="status">{note}</p>}
        <div className="row">
          <button type="button" onClick={() => act(() => client.assistants.update(current.assistant_id, { ...fields(), name }), "saved as a new version")}>
            Save (new version)
          </button>
          <button type="button" onClick={() => act(async () => {
            const made = await client.assistants.create({ graph_id: current.graph_id, ...fields(), name: `${name} copy` });
            onSelect(made.assistant_id);
          }, "created")}>
            New assistant from these
          </button>
          <button type="button" className="danger" disabled={current.metadata?.created_by === "system"}
            title={current.metadata?.created_by === "system" ? "the graph's own assistant cannot be deleted" : undefined}
            onClick={() => act(async () => {
              await client.assistants.remove(current.assistant_id);
              onSelect("");
            }, "deleted")}>
            Delete
          </button>
        </div>
        <h4>Versions</h4>
        <table>
          <caption className="sr-only">versions</caption>
          <thead><tr><th scope="col">version</th><th scope="col">config</th><th scope="col">created</th><th scope="col" /></tr></thead>
          <tbody>
            {versions.map((v) => (
              <tr key={v.version}>
                <td>{v.version}{v.version === current.version ? " (latest)" : ""}</td>
                <td><code className="small">{JSON.stringify(v.config)}</code></td>
                <td>{when(v.created_at)}</td>
                <td>
                  <button type="button" disabled={v.version === current.version}
                    onClick={() => act(() => client.assistants.setLatest(current.assistant_id, v.version), `version ${v.version} is latest`)}>
                    Make latest
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

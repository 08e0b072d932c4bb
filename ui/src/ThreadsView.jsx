// Threads: search by metadata and status, create, open, copy, delete.
import { useCallback, useEffect, useState } from "react";
import { JsonBox } from "./JsonBox.jsx";
import { parseJson, shortId, when } from "./util.js";

const STATUSES = ["", "idle", "busy", "interrupted", "error"];

export function ThreadsView({ client, currentThread, onOpen, graphId }) {
  const [metaText, setMetaText] = useState("");
  const [status, setStatus] = useState("");
  const [threads, setThreads] = useState([]);
  const [error, setError] = useState("");
  const [newMeta, setNewMeta] = useState(graphId ? JSON.stringify({ graph_id: graphId }) : "{}");
  const search = useCallback(async () => {
    const p = parseJson(metaText);
    if (!p.ok) return setError(`metadata filter: ${p.error}`);
    try {
      const body = { sort_by: "updated_at", sort_order: "desc" };
      if (p.value) body.metadata = p.value;
      if (status) body.status = status;
      setThreads(await client.threads.search(body));
      setError("");
    } catch (e) {
      setError(e.message);
    }
  }, [client, metaText, status]);
  useEffect(() => {
    search();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [client]);
  const act = async (fn) => {
    try {
      await fn();
      await search();
    } catch (e) {
      setError(e.message);
    }
  };
  return (
    <section aria-label="threads" className="threads">
      <form className="row wrap" onSubmit={(e) => { e.preventDefault(); search(); }} aria-label="search threads">
        <JsonBox label="Metadata filter (JSON)" value={metaText} onChange={setMetaText} rows={1} testId="thread-meta" />
        <div className="field">
          <label htmlFor="thread-status">Status</label>
          <select id="thread-status" value={status} onChange={(e) => setStatus(e.target.value)}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>{s || "any"}</option>
            ))}
          </select>
        </div>
        <button type="submit">Search</button>
      </form>
      <form className="row wrap" aria-label="new thread" onSubmit={(e) => {
        e.preventDefault();
        const p = parseJson(newMeta);
        if (!p.ok) return setError(`new thread metadata: ${p.error}`);
        act(async () => onOpen((await client.threads.create({ metadata: p.value || {} })).thread_id, false));
      }}>
        <JsonBox label="New thread metadata (JSON)" value={newMeta} onChange={setNewMeta} rows={1} />
        <button type="submit">New thread</button>
      </form>
      {error && <p className="error" role="alert">{error}</p>}
      <table data-testid="thread-table">
        <caption className="sr-only">threads</caption>
        <thead>
          <tr><th scope="col">thread</th><th scope="col">status</th><th scope="col">metadata</th><th scope="col">updated</th><th scope="col">actions</th></tr>
        </thead>
        <tbody>
          {threads.map((t) => (
            <tr key={t.thread_id} className={t.thread_id === currentThread ? "selected" : ""} data-thread={t.thread_id}>
              <td><code title={t.thread_id}>{shortId(t.thread_id)}</code></td>
              <td>{t.status}</td>
              <td><code className="small">{JSON.stringify(t.metadata)}</code></td>
              <td>{when(t.updated_at)}</td>
              <td className="row">
                <button type="button" onClick={() => onOpen(t.thread_id, true)}>Open</button>
                <button type="button" onClick={() => act(() => client.threads.copy(t.thread_id))}>Copy</button>
                <button type="button" className="danger" onClick={() => act(async () => {
                  await client.threads.remove(t.thread_id);
                  if (t.thread_id === currentThread) onOpen("", false);
                })}>Delete</button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {!threads.length && <p className="muted">No threads match.</p>}
    </section>
  );
}

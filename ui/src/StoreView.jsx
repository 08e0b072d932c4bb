// The store: namespaces, the items under one (with a query, semantic when the server has an
// index, and a filter), put and delete.
import { useCallback, useEffect, useState } from "react";
import { JsonBox } from "./JsonBox.jsx";
import { parseJson, pretty, when } from "./util.js";

export function StoreView({ client }) {
  const [namespaces, setNamespaces] = useState([]);
  const [ns, setNs] = useState(null);
  const [query, setQuery] = useState("");
  const [filter, setFilter] = useState("");
  const [items, setItems] = useState([]);
  const [error, setError] = useState("");
  const [putNs, setPutNs] = useState("");
  const [putKey, setPutKey] = useState("");
  const [putValue, setPutValue] = useState("{}");
  const loadNamespaces = useCallback(async () => {
    try {
      const got = await client.store.namespaces({});
      setNamespaces(got.namespaces || got || []);
    } catch (e) {
      setError(e.message);
    }
  }, [client]);
  const search = useCallback(async (prefix) => {
    const p = parseJson(filter);
    if (!p.ok) return setError(`filter: ${p.error}`);
    try {
      const body = { namespace_prefix: prefix || [] };
      if (query) body.query = query;
      if (p.value) body.filter = p.value;
      const got = await client.store.search(body);
      setItems(got.items || []);
      setError("");
    } catch (e) {
      setError(e.message);
    }
  }, [client, filter, query]);
  useEffect(() => {
    loadNamespaces();
  }, [loadNamespaces]);
  const open = (n) => {
    setNs(n);
    setPutNs(n.join("/"));
    search(n);
  };
  const put = async (e) => {
    e.preventDefault();
    const p = parseJson(putValue);
    if (!p.ok || typeof p.value !== "object" || p.value === null || Array.isArray(p.value)) return setError("value: a JSON object");
    try {
      const n = putNs.split("/").filter(Boolean);
      await client.store.put(n, putKey, p.value);
      await loadNamespaces();
      open(n);
    } catch (err) {
      setError(err.message);
    }
  };
  return (
    <section aria-label="store" className="store split">
      <div>
        <h3>Namespaces</h3>
        <button type="button" onClick={loadNamespaces}>Refresh</button>
        <ul className="list" aria-label="namespaces" data-testid="namespaces">
          <li><button type="button" aria-pressed={ns !== null && ns.length === 0} onClick={() => open([])}>(all)</button></li>
          {namespaces.map((n) => (
            <li key={n.join("/")}>
              <button type="button" aria-pressed={ns?.join("/") === n.join("/")} data-namespace={n.join("/")} onClick={() => open(n)}>
                {n.join(" / ")}
              </button>
            </li>
          ))}
        </ul>
      </div>
      <div>
        <form className="row wrap" aria-label="search items" onSubmit={(e) => { e.preventDefault(); search(ns || []); }}>
          <div className="field">
            <label htmlFor="store-query">Query</label>
            <input id="store-query" type="search" value={query} onChange={(e) => setQuery(e.target.value)} />
          </div>
          <JsonBox label="Filter (JSON)" value={filter} onChange={setFilter} rows={1} />
          <button type="submit">Search</button>
        </form>
        {error && <p className="error" role="alert">{error}</p>}
        <table data-testid="items">
          <caption className="sr-only">items</caption>
          <thead><tr><th scope="col">namespace</th><th scope="col">key</th><th scope="col">value</th><th scope="col">updated</th><th scope="col" /></tr></thead>
          <tbody>
            {items.map((it) => (
              <tr key={`${it.namespace.join("/")}/${it.key}`} data-key={it.key}>
                <td>{it.namespace.join(" / ")}</td>
                <td><code>{it.key}</code></td>
                <td><pre className="json small">{pretty(it.value)}</pre>{it.score != null && <span className="muted small">score {it.score.toFixed(3)}</span>}</td>
                <td>{when(it.updated_at)}</td>
                <td>
                  <button type="button" className="danger" onClick={async () => {
                    try {
                      await client.store.remove(it.namespace, it.key);
                      search(ns || []);
                    } catch (err) {
                      setError(err.message);
                    }
                  }}>Delete</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {ns && !items.length && <p className="muted">No items.</p>}
        <form onSubmit={put} aria-label="put item" className="put">
          <h4>Put an item</h4>
          <div className="row wrap">
            <div className="field">
              <label htmlFor="put-ns">Namespace (a/b/c)</label>
              <input id="put-ns" value={putNs} onChange={(e) => setPutNs(e.target.value)} required />
            </div>
            <div className="field">
              <label htmlFor="put-key">Key</label>
              <input id="put-key" value={putKey} onChange={(e) => setPutKey(e.target.value)} required />
            </div>
          </div>
          <JsonBox label="Value (JSON object)" value={putValue} onChange={setPutValue} rows={3} />
          <button type="submit">Put</button>
        </form>
      </div>
    </section>
  );
}

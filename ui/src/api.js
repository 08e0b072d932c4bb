// The studio's only way to the server: the public LangGraph Server HTTP API (what the SDKs use).
// The API's address defaults to the page's own server (the page lives at <api>/ui/); another
// address and extra headers (e.g. Authorization) can be set in the connection dialog and are
// kept in localStorage.

const KEY = "stepgraph-studio-connection";

export function defaultBase() {
  const u = new URL(window.location.href);
  const at = u.pathname.lastIndexOf("/ui");
  const path = at >= 0 ? u.pathname.slice(0, at) : "";
  return `${u.origin}${path}`;
}

export function loadConnection() {
  const q = new URLSearchParams(window.location.search);
  let saved = {};
  try {
    saved = JSON.parse(window.localStorage.getItem(KEY) || "{}");
  } catch {
    saved = {};
  }
  return { base: q.get("api") || saved.base || defaultBase(), headers: saved.headers || {} };
}

export function saveConnection(conn) {
  window.localStorage.setItem(KEY, JSON.stringify(conn));
}

export class ApiError extends Error {
  constructor(status, detail, path) {
    super(`${status} on ${path}: ${detail}`);
    this.status = status;
    this.detail = detail;
  }
}

export function makeClient(conn) {
  const base = conn.base.replace(/\/+$/, "");
  async function call(method, path, body, opts = {}) {
    const init = { method, headers: { ...conn.headers }, signal: opts.signal };
    if (body !== undefined) {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const res = await fetch(base + path, init);
    if (opts.raw) return res;
    const text = await res.text();
    let data = null;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = text;
    }
    if (!res.ok) {
      const detail = data && typeof data === "object" ? data.detail || data.message || JSON.stringify(data) : String(data);
      throw new ApiError(res.status, typeof detail === "string" ? detail : JSON.stringify(detail), path);
    }
    return data;
  }
  const get = (p, o) => call("GET", p, undefined, o);
  const post = (p, b, o) => call("POST", p, b ?? {}, o);
  const enc = encodeURIComponent;

  // POST .../runs/stream, parsed as Server-Sent Events: onEvent(event, data) per event.
  async function stream(path, body, onEvent, signal) {
    const res = await call("POST", path, body, { raw: true, signal });
    if (!res.ok) {
      let detail = await res.text();
      try {
        detail = JSON.parse(detail).detail ?? detail;
      } catch {
        /* not JSON */
      }
      throw new ApiError(res.status, typeof detail === "string" ? detail : JSON.stringify(detail), path);
    }
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
      let at;
      while ((at = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, at);
        buf = buf.slice(at + 2);
        let event = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) event = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (!data.length) continue;
        let parsed = data.join("\n");
        try {
          parsed = JSON.parse(parsed);
        } catch {
          /* keep the text */
        }
        onEvent(event, parsed);
      }
    }
  }

  return {
    base,
    info: () => get("/info"),
    assistants: {
      search: (body) => post("/assistants/search", { limit: 100, ...body }),
      get: (id) => get(`/assistants/${enc(id)}`),
      graph: (id, xray) => get(`/assistants/${enc(id)}/graph${xray ? `?xray=${xray}` : ""}`),
      schemas: (id) => get(`/assistants/${enc(id)}/schemas`),
      versions: (id) => post(`/assistants/${enc(id)}/versions`, { limit: 50 }),
      update: (id, body) => call("PATCH", `/assistants/${enc(id)}`, body),
      setLatest: (id, version) => post(`/assistants/${enc(id)}/latest`, { version }),
      create: (body) => post("/assistants", body),
      remove: (id) => call("DELETE", `/assistants/${enc(id)}`),
    },
    threads: {
      search: (body) => post("/threads/search", { limit: 50, ...body }),
      create: (body) => post("/threads", body),
      get: (id) => get(`/threads/${enc(id)}`),
      remove: (id) => call("DELETE", `/threads/${enc(id)}`),
      copy: (id) => post(`/threads/${enc(id)}/copy`, {}),
      state: (id, checkpointId) =>
        get(`/threads/${enc(id)}/state${checkpointId ? `/${enc(checkpointId)}` : ""}?subgraphs=true`),
      history: (id, limit = 100) => post(`/threads/${enc(id)}/history`, { limit }),
      update: (id, body) => post(`/threads/${enc(id)}/state`, body),
    },
    runs: {
      stream: (threadId, body, onEvent, signal) => stream(`/threads/${enc(threadId)}/runs/stream`, body, onEvent, signal),
      wait: (threadId, body, signal) => post(`/threads/${enc(threadId)}/runs/wait`, body, { signal }),
      cancel: (threadId, runId) => post(`/threads/${enc(threadId)}/runs/${enc(runId)}/cancel`, {}),
      list: (threadId) => get(`/threads/${enc(threadId)}/runs?limit=20`),
    },
    store: {
      namespaces: (body) => post("/store/namespaces", { limit: 100, ...body }),
      search: (body) => post("/store/items/search", { limit: 50, ...body }),
      put: (namespace, key, value) => call("PUT", "/store/items", { namespace, key, value }),
      remove: (namespace, key) => call("DELETE", "/store/items", { namespace, key }),
    },
  };
}

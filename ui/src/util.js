// Small helpers shared by the views: JSON text, state diffs, names of stream namespaces.

export const pretty = (v) => (v === undefined ? "" : JSON.stringify(v, null, 2));

export function parseJson(text) {
  if (!text.trim()) return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    return { ok: false, error: e.message };
  }
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

// Per-key changes from `before` to `after`: [{key, kind: added|removed|changed, before, after}].
export function diffValues(before, after) {
  const b = before || {};
  const a = after || {};
  const out = [];
  for (const key of new Set([...Object.keys(b), ...Object.keys(a)])) {
    if (!(key in b)) out.push({ key, kind: "added", after: a[key] });
    else if (!(key in a)) out.push({ key, kind: "removed", before: b[key] });
    else if (!same(a[key], b[key])) out.push({ key, kind: "changed", before: b[key], after: a[key] });
  }
  return out;
}

// "tasks|research:1b9e...|write:..." -> { mode: "tasks", path: ["research", "write"] }
export function splitEvent(event) {
  const [mode, ...ns] = event.split("|");
  return { mode, path: ns.map((part) => part.split(":")[0]) };
}

export const shortId = (id) => (id ? String(id).slice(0, 8) : "");

export function when(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString();
}

export function messageText(m) {
  const c = m?.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((p) => (typeof p === "string" ? p : p?.text ?? "")).join("");
  return c == null ? "" : JSON.stringify(c);
}

export const hasMessagesKey = (schema) => Boolean(schema?.properties?.messages);

// A form generated from a JSON schema object (strings, numbers, booleans, enums; other
// fields as JSON), with a switch to edit the whole value as JSON.
import { useId, useState } from "react";
import { JsonBox } from "./JsonBox.jsx";
import { parseJson, pretty } from "./util.js";

const kind = (s) => {
  if (!s || typeof s !== "object") return "json";
  if (Array.isArray(s.enum)) return "enum";
  const t = Array.isArray(s.type) ? s.type.find((x) => x !== "null") : s.type;
  if (t === "string" || t === "boolean" || t === "number" || t === "integer") return t;
  if (s.anyOf) {
    const simple = s.anyOf.find((x) => x && x.type && x.type !== "null");
    if (simple && ["string", "boolean", "number", "integer"].includes(simple.type)) return simple.type;
  }
  return "json";
};

export const formable = (schema) => Boolean(schema && typeof schema === "object" && schema.properties && Object.keys(schema.properties).length);

function initial(schema) {
  const out = {};
  for (const [k, s] of Object.entries(schema.properties || {})) {
    const t = kind(s);
    if (s && "default" in s) out[k] = t === "json" ? pretty(s.default) : s.default;
    else out[k] = t === "boolean" ? undefined : "";
  }
  return out;
}

// The value of the fields: empty ones left out; a JSON field that does not parse is an error.
function collect(schema, fields) {
  const value = {};
  for (const [k, s] of Object.entries(schema.properties || {})) {
    const t = kind(s);
    const v = fields[k];
    if (v === undefined || v === "") continue;
    if (t === "number" || t === "integer") value[k] = Number(v);
    else if (t === "json") {
      const p = parseJson(v);
      if (!p.ok) return { error: `${k}: ${p.error}` };
      if (p.value !== undefined) value[k] = p.value;
    } else value[k] = v;
  }
  return { value };
}

export function SchemaForm({ schema, onSubmit, submitLabel, busy, testId, extra, initialJson = null }) {
  const [fields, setFields] = useState(() => initial(schema));
  const [asJson, setAsJson] = useState(initialJson !== null || !formable(schema));
  const [text, setText] = useState(initialJson ?? "{}");
  const [error, setError] = useState("");
  const id = useId();
  const set = (k, v) => setFields((f) => ({ ...f, [k]: v }));
  const submit = (e) => {
    e.preventDefault();
    if (asJson) {
      const p = parseJson(text);
      if (!p.ok) return setError(p.error);
      setError("");
      return onSubmit(p.value ?? null);
    }
    const got = collect(schema, fields);
    if (got.error) return setError(got.error);
    setError("");
    onSubmit(got.value);
  };
  const switchMode = () => {
    if (!asJson) {
      const got = collect(schema, fields);
      setText(pretty(got.value ?? {}));
    }
    setAsJson(!asJson);
  };
  const required = new Set(schema?.required || []);
  return (
    <form onSubmit={submit} data-testid={testId} aria-label={schema?.title || submitLabel}>
      {formable(schema) && (
        <label className="inline small">
          <input type="checkbox" checked={asJson} onChange={switchMode} /> edit as JSON
        </label>
      )}
      {asJson ? (
        <JsonBox label="Value (JSON)" value={text} onChange={setText} rows={6} testId={testId && `${testId}-json`} />
      ) : (
        Object.entries(schema.properties).map(([k, s]) => {
          const t = kind(s);
          const fid = `${id}-${k}`;
          const title = `${s?.title || k}${required.has(k) ? " *" : ""}`;
          if (t === "boolean")
            return (
              <label key={k} className="inline">
                <input type="checkbox" name={k} checked={Boolean(fields[k])} onChange={(e) => set(k, e.target.checked)} /> {title}
              </label>
            );
          if (t === "json")
            return <JsonBox key={k} label={`${title} (JSON)`} value={fields[k] ?? ""} onChange={(v) => set(k, v)} rows={3} />;
          return (
            <div className="field" key={k}>
              <label htmlFor={fid}>{title}</label>
              {t === "enum" ? (
                <select id={fid} name={k} value={fields[k] ?? ""} onChange={(e) => set(k, e.target.value)}>
                  <option value="">(unset)</option>
                  {s.enum.map((o) => (
                    <option key={String(o)} value={o}>{String(o)}</option>
                  ))}
                </select>
              ) : (
                <input id={fid} name={k} type={t === "string" ? "text" : "number"} value={fields[k] ?? ""}
                  step={t === "integer" ? 1 : "any"} onChange={(e) => set(k, e.target.value)} />
              )}
              {s?.description && <span className="muted small">{s.description}</span>}
            </div>
          );
        })
      )}
      {extra}
      {error && <p className="error" role="alert">{error}</p>}
      <button type="submit" disabled={busy}>{submitLabel}</button>
    </form>
  );
}

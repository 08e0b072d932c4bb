// A labelled JSON text area that says when its text is not JSON.
import { useId } from "react";
import { parseJson } from "./util.js";

export function JsonBox({ label, value, onChange, rows = 6, testId, describe }) {
  const id = useId();
  const parsed = parseJson(value);
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        className="json"
        rows={rows}
        spellCheck={false}
        value={value}
        data-testid={testId}
        aria-invalid={!parsed.ok}
        aria-describedby={parsed.ok ? undefined : `${id}-err`}
        onChange={(e) => onChange(e.target.value)}
      />
      {!parsed.ok && (
        <span id={`${id}-err`} className="error small" role="status">
          Not JSON: {parsed.error}
        </span>
      )}
      {describe && <span className="muted small">{describe}</span>}
    </div>
  );
}

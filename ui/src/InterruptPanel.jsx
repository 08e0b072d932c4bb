// The thread's pending interrupts with their values, answered with a resume value: a form
// when the value carries a JSON schema (`schema`), JSON otherwise. A thread paused on a
// breakpoint (next nodes, no interrupt) can be continued.
import { useState } from "react";
import { JsonBox } from "./JsonBox.jsx";
import { SchemaForm, formable } from "./SchemaForm.jsx";
import { parseJson, pretty } from "./util.js";

export function pendingInterrupts(state) {
  if (!state) return [];
  const out = [];
  for (const t of state.tasks || []) for (const i of t.interrupts || []) out.push({ ...i, node: t.name });
  return out;
}

export function InterruptPanel({ state, running, onResume, onContinue }) {
  const interrupts = pendingInterrupts(state);
  if (!state || running) return null;
  if (!interrupts.length) {
    if (state.next?.length)
      return (
        <section className="interrupts" aria-label="paused">
          <p>Paused before <b>{state.next.join(", ")}</b>.</p>
          <button type="button" onClick={onContinue} data-testid="continue">Continue</button>
        </section>
      );
    return null;
  }
  return (
    <section className="interrupts" aria-label="interrupts" data-testid="interrupts">
      <h3>Waiting for you</h3>
      {interrupts.map((i) => (
        <Interrupt key={i.id} item={i} many={interrupts.length > 1} onResume={onResume} />
      ))}
    </section>
  );
}

function Interrupt({ item, many, onResume }) {
  const [text, setText] = useState('""');
  const schema = item.value && typeof item.value === "object" ? item.value.schema : null;
  const answer = (value) => onResume(many ? { [item.id]: value } : value);
  return (
    <article className="interrupt" data-testid="interrupt">
      <p>
        <b>{item.node}</b> asks{item.value?.question ? `: ${item.value.question}` : ""}
      </p>
      <details open={!item.value?.question}>
        <summary>interrupt value</summary>
        <pre className="json small">{pretty(item.value)}</pre>
      </details>
      {formable(schema) ? (
        <SchemaForm schema={schema} submitLabel="Resume" testId="resume-form" onSubmit={answer} />
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            const p = parseJson(text);
            if (p.ok) answer(p.value ?? null);
          }}
        >
          <JsonBox label="Resume value (JSON)" value={text} onChange={setText} rows={3} testId="resume-json" />
          <button type="submit">Resume</button>
        </form>
      )}
    </article>
  );
}

// For graphs with a `messages` key: the conversation of the thread, the tokens of the message
// being streamed, tool calls and tool results; a message box starts a run with a human turn.
import { useState } from "react";
import { messageText } from "./util.js";

const ROLE = { human: "you", user: "you", ai: "assistant", assistant: "assistant", tool: "tool", system: "system" };

export function ChatView({ messages, tokens, running, onSend, sent }) {
  const [text, setText] = useState("");
  const ids = new Set(messages.map((m) => m.id));
  const streaming = Object.entries(tokens).filter(([id]) => !ids.has(id));
  const send = (e) => {
    e.preventDefault();
    if (!text.trim()) return;
    onSend(text);
    setText("");
  };
  return (
    <section aria-label="chat" className="chat">
      <ol className="messages" aria-live="polite" data-testid="messages">
        {messages.map((m, i) => {
          const type = m.type || m.role;
          const streamed = tokens[m.id];
          return (
            <li key={m.id || i} className={`msg ${type}`} data-testid="message" data-type={type}
              data-chunks={streamed ? streamed.chunks : 0}>
              <span className="who">{ROLE[type] || type}{type === "tool" && m.name ? ` (${m.name})` : ""}</span>
              <span className="text">{messageText(m)}</span>
              {(m.tool_calls || []).map((c) => (
                <div key={c.id} className="tool-call" data-testid="tool-call">
                  calls <b>{c.name}</b> <code>{JSON.stringify(c.args)}</code>
                </div>
              ))}
            </li>
          );
        })}
        {sent && (
          <li className="msg human sending" data-testid="sending">
            <span className="who">you</span>
            <span className="text">{sent}</span>
          </li>
        )}
        {streaming.map(([id, t]) => (
          <li key={id} className="msg ai streaming" data-testid="streaming" data-chunks={t.chunks}>
            <span className="who">assistant{t.node ? ` (${t.node})` : ""}</span>
            <span className="text">{t.text}</span>
          </li>
        ))}
      </ol>
      <form onSubmit={send} className="row">
        <label htmlFor="chat-input" className="sr-only">Message</label>
        <input id="chat-input" value={text} onChange={(e) => setText(e.target.value)} placeholder="Message" autoComplete="off" />
        <button type="submit" disabled={running}>Send</button>
      </form>
    </section>
  );
}

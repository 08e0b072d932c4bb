// A tiny chat page for the browser check: one component per hook, chosen by the query string.
//   ?api=http://127.0.0.1:2024&hook=legacy|v3&graph=chat|chat_hitl[&thread=<id>]
// `legacy` = useStream from @langchain/langgraph-sdk/react (runs.stream, values + messages-tuple,
// history); `v3` = useStream from @langchain/react (thread streaming: /threads/{id}/commands +
// /threads/{id}/stream/events). The thread id is mirrored into the URL so a reload re-opens it.
import React, { useState } from "react";
import { createRoot } from "react-dom/client";
import { useStream as useLegacyStream } from "@langchain/langgraph-sdk/react";
import { useStream as useV3Stream } from "@langchain/react";

const params = new URLSearchParams(location.search);
const API = params.get("api") ?? "http://127.0.0.1:2024";
const HOOK = params.get("hook") ?? "legacy";
const GRAPH = params.get("graph") ?? "chat";
const INITIAL_THREAD = params.get("thread");

function rememberThread(id) {
  const p = new URLSearchParams(location.search);
  if (id && p.get("thread") !== id) {
    p.set("thread", id);
    history.replaceState(null, "", `${location.pathname}?${p}`);
  }
}

function typeOf(m) {
  if (typeof m?.getType === "function") return m.getType();
  if (typeof m?._getType === "function") return m._getType();
  return m?.type ?? m?.role ?? "unknown";
}
function textOf(m) {
  const c = m?.content;
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((b) => (typeof b === "string" ? b : b?.type === "text" ? b.text : "")).join("");
  return "";
}

function Messages({ messages }) {
  return (
    <div id="messages">
      {messages.map((m, i) => {
        const calls = m.tool_calls ?? [];
        return (
          <div className="msg" data-testid="message" data-type={typeOf(m)} key={m.id ?? i}>
            <b>{typeOf(m)}:</b> {textOf(m)}
            {calls.map((c) => (
              <div className="tool-call" data-testid="tool-call" key={c.id ?? c.name}>
                tool call {c.name}({JSON.stringify(c.args)})
              </div>
            ))}
          </div>
        );
      })}
    </div>
  );
}

function Interrupt({ value, onDecide }) {
  const req = value?.action_requests?.[0];
  return (
    <div id="interrupt" data-testid="interrupt">
      <div>Review: {req ? `${req.name} to ${req.args?.to}` : JSON.stringify(value)}</div>
      <button id="approve" onClick={() => onDecide("approve")}>Approve</button>{" "}
      <button id="reject" onClick={() => onDecide("reject")}>Reject</button>
    </div>
  );
}

function Composer({ onSend, disabled }) {
  const [text, setText] = useState("");
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        if (!text.trim()) return;
        onSend(text);
        setText("");
      }}
    >
      <input id="msg" value={text} onChange={(e) => setText(e.target.value)} placeholder="Type a message" />
      <button id="send" type="submit" disabled={disabled}>Send</button>
    </form>
  );
}

function Shell({ title, threadId, isLoading, error, children }) {
  return (
    <div>
      <header>
        <h3>{title}</h3>
        <small>
          graph <code id="graph">{GRAPH}</code> · thread <code id="thread-id">{threadId ?? ""}</code> ·{" "}
          <span id="status" data-loading={isLoading ? "1" : "0"}>{isLoading ? "streaming…" : "idle"}</span>
        </small>
      </header>
      {error ? <pre id="error">{String(error?.message ?? error)}</pre> : null}
      {children}
    </div>
  );
}

function LegacyChat() {
  const [threadId, setThreadId] = useState(INITIAL_THREAD);
  const stream = useLegacyStream({
    apiUrl: API,
    assistantId: GRAPH,
    threadId,
    onThreadId: (id) => {
      setThreadId(id);
      rememberThread(id);
    },
    messagesKey: "messages",
    fetchStateHistory: true,
  });
  const interruptValue = stream.interrupt?.value;
  return (
    <Shell title="useStream (@langchain/langgraph-sdk/react)" threadId={threadId} isLoading={stream.isLoading} error={stream.error}>
      <Messages messages={stream.messages} />
      {interruptValue && !stream.isLoading ? (
        <Interrupt value={interruptValue} onDecide={(type) => stream.submit(undefined, { command: { resume: { decisions: [{ type }] } } })} />
      ) : null}
      <Composer
        disabled={stream.isLoading}
        onSend={(text) =>
          stream.submit(
            { messages: [{ type: "human", content: text }] },
            { optimisticValues: (prev) => ({ ...prev, messages: [...(prev.messages ?? []), { type: "human", content: text }] }) },
          )
        }
      />
    </Shell>
  );
}

function V3Chat() {
  const stream = useV3Stream({
    apiUrl: API,
    assistantId: GRAPH,
    threadId: INITIAL_THREAD ?? undefined,
    onThreadId: rememberThread,
  });
  const interruptValue = stream.interrupt?.value;
  return (
    <Shell title="useStream (@langchain/react)" threadId={stream.threadId} isLoading={stream.isLoading} error={stream.error}>
      <Messages messages={stream.messages} />
      {interruptValue && !stream.isLoading ? (
        <Interrupt value={interruptValue} onDecide={(type) => stream.respond({ decisions: [{ type }] })} />
      ) : null}
      <Composer disabled={stream.isLoading} onSend={(text) => stream.submit({ messages: [{ type: "human", content: text }] })} />
    </Shell>
  );
}

createRoot(document.getElementById("root")).render(HOOK === "v3" ? <V3Chat /> : <LegacyChat />);

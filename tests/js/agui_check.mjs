#!/usr/bin/env node
// CopilotKit's AG-UI connector (@ag-ui/langgraph LangGraphAgent) against a LangGraph-compatible
// server: a streamed chat answer (graph `chat`) and a tool-call review interrupt + resume (graph
// `chat_hitl`), both through the connector exactly as CopilotKit's runtime drives it.
//
//   node agui_check.mjs --url http://127.0.0.1:2024 [--only G] [-v]
//
// What the connector sends (for a server implementer): assistants.search {graph_id, limit:1},
// assistants.getSchemas, threads.get (404 -> threads.create {thread_id}), threads.getState,
// assistants.getGraph, then POST /threads/{id}/runs/stream with stream_mode
// ["events","values","updates","messages-tuple"], stream_subgraphs unset, input = the new
// messages plus extra keys ("tools", "ag-ui", "copilotkit") the graph does not declare, and on
// resume `command: {resume: ...}` (+ input); after the stream, threads.getState again.
import { LangGraphAgent } from "@ag-ui/langgraph";
import { EventType } from "@ag-ui/client";
import { Runner, parseArgs, expect, eq, short, withTimeout } from "./lib/harness.mjs";

const args = parseArgs();
const R = new Runner(args);
const HITL_REQUEST = {
  action_requests: [
    { name: "send_email", args: { to: "ann@example.com", subject: "Hello", body: "Hi Ann!" }, description: "Review the e-mail to ann@example.com" },
  ],
  review_configs: [{ action_name: "send_email", allowed_decisions: ["approve", "reject"] }],
};

function runAgent(agent, input) {
  const events = [];
  return withTimeout(
    new Promise((resolve, reject) => {
      agent.run(input).subscribe({
        next: (e) => events.push(e),
        error: (e) => reject(Object.assign(new Error(`agent run errored: ${e?.message ?? short(e)}; events ${short(events.map((x) => x.type))}`), { events })),
        complete: () => resolve(events),
      });
    }),
    (args.timeout ?? 60) * 1000 - 1000,
    "agent run",
  );
}
const baseInput = (threadId, messages, extra = {}) => ({
  threadId,
  runId: crypto.randomUUID(),
  messages,
  tools: [],
  context: [],
  state: {},
  forwardedProps: {},
  ...extra,
});
const ofType = (events, t) => events.filter((e) => e.type === t);
const lastSnapshot = (events) => ofType(events, EventType.MESSAGES_SNAPSHOT).at(-1)?.messages ?? [];

R.add("G01", "LangGraphAgent streams a chat answer (TEXT_MESSAGE_* events, snapshots)", async () => {
  const agent = new LangGraphAgent({ deploymentUrl: args.url, graphId: "chat" });
  const threadId = crypto.randomUUID();
  const events = await runAgent(agent, baseInput(threadId, [{ id: crypto.randomUUID(), role: "user", content: "hi" }]));
  const types = events.map((e) => e.type);
  eq(types[0], EventType.RUN_STARTED, "first event");
  eq(types.at(-1), EventType.RUN_FINISHED, "last event");
  expect(!types.includes(EventType.RUN_ERROR), `RUN_ERROR: ${short(ofType(events, EventType.RUN_ERROR))}`);
  const starts = ofType(events, EventType.TEXT_MESSAGE_START);
  expect(starts.length >= 1, `no TEXT_MESSAGE_START: ${short(types)}`);
  const deltas = ofType(events, EventType.TEXT_MESSAGE_CONTENT).filter((e) => e.messageId === starts[0].messageId);
  expect(deltas.length >= 2, `tokens not streamed (${deltas.length} content events)`);
  eq(deltas.map((e) => e.delta).join(""), "hello from chat", "streamed text");
  expect(ofType(events, EventType.TEXT_MESSAGE_END).some((e) => e.messageId === starts[0].messageId), "TEXT_MESSAGE_END");
  const msgs = lastSnapshot(events);
  eq(msgs.map((m) => m.role), ["user", "assistant"], "MESSAGES_SNAPSHOT roles");
  eq(msgs[1].content, "hello from chat", "snapshot answer");
  expect(ofType(events, EventType.STEP_STARTED).some((e) => e.stepName === "respond"), `no STEP_STARTED respond: ${short(ofType(events, EventType.STEP_STARTED))}`);
});

R.add("G02", "LangGraphAgent second turn on the same thread keeps the history", async () => {
  const agent = new LangGraphAgent({ deploymentUrl: args.url, graphId: "chat" });
  const threadId = crypto.randomUUID();
  const first = await runAgent(agent, baseInput(threadId, [{ id: crypto.randomUUID(), role: "user", content: "hi" }]));
  const history = lastSnapshot(first);
  const second = await runAgent(agent, baseInput(threadId, [...history, { id: crypto.randomUUID(), role: "user", content: "again" }]));
  const msgs = lastSnapshot(second);
  eq(msgs.map((m) => m.role), ["user", "assistant", "user", "assistant"], "roles after two turns");
  eq(msgs.map((m) => m.content), ["hi", "hello from chat", "again", "hello from chat"], "contents after two turns");
});

R.add("G03", "LangGraphAgent chat_hitl: interrupt surfaces, resume approves", async () => {
  const agent = new LangGraphAgent({ deploymentUrl: args.url, graphId: "chat_hitl", emitInterruptOutcome: true });
  const threadId = crypto.randomUUID();
  const first = await runAgent(agent, baseInput(threadId, [{ id: crypto.randomUUID(), role: "user", content: "mail ann" }]));
  const fin = ofType(first, EventType.RUN_FINISHED).at(-1);
  eq(fin?.outcome?.type, "interrupt", "RUN_FINISHED outcome");
  const [intr] = fin.outcome.interrupts;
  eq(intr?.metadata?.langgraph?.raw, HITL_REQUEST, "interrupt raw value");
  const legacy = ofType(first, EventType.CUSTOM).find((e) => e.name === "on_interrupt");
  eq(legacy && JSON.parse(legacy.value), HITL_REQUEST, "legacy on_interrupt custom event");
  const toolCallMsg = lastSnapshot(first).find((m) => m.role === "assistant" && m.toolCalls?.length);
  eq(toolCallMsg?.toolCalls?.[0]?.function?.name, "send_email", "proposed tool call in the snapshot");
  const history = lastSnapshot(first);
  const second = await runAgent(
    agent,
    baseInput(threadId, history, { resume: [{ interruptId: intr.id, status: "resolved", payload: { decisions: [{ type: "approve" }] } }] }),
  );
  const types = second.map((e) => e.type);
  expect(!types.includes(EventType.RUN_ERROR), `RUN_ERROR: ${short(ofType(second, EventType.RUN_ERROR))}`);
  const streamed = ofType(second, EventType.TEXT_MESSAGE_CONTENT).map((e) => e.delta).join("");
  eq(streamed, "decision: approve", "streamed answer after resume");
  const msgs = lastSnapshot(second);
  eq(msgs.map((m) => m.role), ["user", "assistant", "tool", "assistant"], "roles after resume");
  eq(msgs.at(-1).content, "decision: approve", "final answer");
  eq(ofType(second, EventType.RUN_FINISHED).at(-1)?.outcome?.type ?? "success", "success", "RUN_FINISHED outcome after resume");
});

R.add("G04", "LangGraphAgent chat_hitl: legacy forwardedProps.command.resume rejects", async () => {
  const agent = new LangGraphAgent({ deploymentUrl: args.url, graphId: "chat_hitl" });
  const threadId = crypto.randomUUID();
  const first = await runAgent(agent, baseInput(threadId, [{ id: crypto.randomUUID(), role: "user", content: "mail ann" }]));
  expect(ofType(first, EventType.CUSTOM).some((e) => e.name === "on_interrupt"), "no on_interrupt event");
  const warn = console.warn;
  console.warn = () => {}; // the connector warns that forwardedProps.command.resume is deprecated
  let second;
  try {
    second = await runAgent(
      agent,
      baseInput(threadId, lastSnapshot(first), { forwardedProps: { command: { resume: JSON.stringify({ decisions: [{ type: "reject" }] }) } } }),
    );
  } finally {
    console.warn = warn;
  }
  eq(lastSnapshot(second).at(-1)?.content, "decision: reject", "final answer");
});

process.exitCode = await R.run();

#!/usr/bin/env node
// The official JS SDK (@langchain/langgraph-sdk) driven against a LangGraph-compatible server.
//
//   node sdk_check.mjs --url http://127.0.0.1:2024 [--only A,V] [--timeout 60] [-v]
//
// One "PASS|FAIL|SKIP <id> <desc>" line per check, then "N passed, M failed"; exit 1 on failure.
// The server must host the graphs of ../../shared/conformance/graphs_for_sdk_check.py (simple,
// nested, interrupt, nested_interrupt, slow, fail, chat) plus chat_hitl (examples/chat_hitl.py, graphs/chat_hitl_lg.py).
// Groups: A assistants, T threads, S classic runs.stream, I interrupts, B background runs,
// X store, M messages stream modes, V v3 thread streaming (client.threads.stream and the raw
// /threads/{id}/commands + /threads/{id}/stream/events protocol), C CORS.
// Validated against the real `langgraph dev` (langgraph-api 0.16.7); only talks to --url.
import { Client } from "@langchain/langgraph-sdk";
import {
  Runner, parseArgs, expect, eq, short, sleep, waitFor, withTimeout, readSSE, postJSON, CheckFailure,
} from "./lib/harness.mjs";

const args = parseArgs();
const URL_ = args.url;
const client = new Client({ apiUrl: URL_ });
const R = new Runner(args);

const GRAPHS = ["simple", "nested", "interrupt", "nested_interrupt", "slow", "fail", "chat", "chat_hitl"];
const SIMPLE_FINAL = { value: "xab", steps: ["a", "b"] };
const HITL_REQUEST = {
  action_requests: [
    { name: "send_email", args: { to: "ann@example.com", subject: "Hello", body: "Hi Ann!" }, description: "Review the e-mail to ann@example.com" },
  ],
  review_configs: [{ action_name: "send_email", allowed_decisions: ["approve", "reject"] }],
};
const uuid = () => crypto.randomUUID();
const collect = async (gen) => {
  const out = [];
  for await (const part of gen) out.push(part);
  return out;
};
const dataOf = (parts, event) => parts.filter((p) => p.event === event).map((p) => p.data);
const newThread = async (extra = {}) => (await client.threads.create(extra)).thread_id;
const statusOf = (e) => e?.status ?? e?.response?.status;
async function expectHttpError(promise, status, what) {
  try {
    await promise;
  } catch (e) {
    eq(statusOf(e), status, `${what}: HTTP status`);
    return e;
  }
  throw new CheckFailure(`${what}: expected HTTP ${status}, got success`);
}
const textOf = (m) =>
  typeof m?.content === "string"
    ? m.content
    : Array.isArray(m?.content)
      ? m.content.map((b) => (typeof b === "string" ? b : b?.text ?? "")).join("")
      : "";
const typeOf = (m) => m?.type ?? (typeof m?._getType === "function" ? m._getType() : m?.role);

// ============================================================================================
// A: assistants
// ============================================================================================
R.add("A01", "assistants.search finds one system assistant per graph", async () => {
  const found = await client.assistants.search({ limit: 100 });
  const ids = new Set(found.map((a) => a.graph_id));
  for (const g of GRAPHS) expect(ids.has(g), `no assistant for graph ${g}: ${short([...ids])}`);
  const byGraph = await client.assistants.search({ graphId: "simple", limit: 10 });
  expect(byGraph.length >= 1 && byGraph.every((a) => a.graph_id === "simple"), `graphId filter: ${short(byGraph)}`);
  const sys = byGraph.find((a) => a.metadata?.created_by === "system");
  expect(sys, `no system assistant (metadata.created_by=system) for simple: ${short(byGraph)}`);
  for (const k of ["assistant_id", "graph_id", "config", "metadata", "name", "created_at", "updated_at", "version"])
    expect(k in sys, `assistant lacks ${k}: ${short(sys)}`);
});

R.add("A02", "assistants.get by assistant_id and by graph id", async () => {
  const [sys] = await client.assistants.search({ graphId: "chat", limit: 1 });
  const a = await client.assistants.get(sys.assistant_id);
  eq(a.assistant_id, sys.assistant_id, "assistant_id");
  eq(a.graph_id, "chat", "graph_id");
});

R.add("A03", "assistants.getGraph (+xray shows the subgraph's nodes)", async () => {
  const [sys] = await client.assistants.search({ graphId: "simple", limit: 1 });
  const g = await client.assistants.getGraph(sys.assistant_id);
  const ids = g.nodes.map((n) => n.id);
  for (const n of ["__start__", "a", "b", "__end__"]) expect(ids.includes(n), `graph nodes ${short(ids)} lack ${n}`);
  expect(Array.isArray(g.edges) && g.edges.length >= 3, `edges: ${short(g.edges)}`);
  const [nsys] = await client.assistants.search({ graphId: "nested", limit: 1 });
  const x = await client.assistants.getGraph(nsys.assistant_id, { xray: true });
  const xids = x.nodes.map((n) => n.id);
  expect(xids.some((id) => id.includes("child_1")), `xray graph nodes ${short(xids)} lack child:child_1`);
});

R.add("A04", "assistants.getSchemas and getSubgraphs", async () => {
  const [sys] = await client.assistants.search({ graphId: "nested", limit: 1 });
  const s = await client.assistants.getSchemas(sys.assistant_id);
  expect(s.graph_id === "nested" && s.state_schema && typeof s.state_schema === "object", `schemas: ${short(s)}`);
  const sub = await client.assistants.getSubgraphs(sys.assistant_id);
  expect(Object.keys(sub).some((k) => k.startsWith("child")), `subgraphs: ${short(sub)}`);
});

// ============================================================================================
// T: threads
// ============================================================================================
R.add("T01", "threads.create with a client-chosen id, get, metadata", async () => {
  const tid = uuid();
  const t = await client.threads.create({ threadId: tid, metadata: { owner: "js-check" } });
  eq(t.thread_id, tid, "created thread_id");
  const got = await client.threads.get(tid);
  eq(got.thread_id, tid, "get thread_id");
  eq(got.metadata?.owner, "js-check", "metadata.owner");
  eq(got.status, "idle", "status");
});

R.add("T02", "threads.create duplicate id -> 409; ifExists=do_nothing returns it", async () => {
  const tid = uuid();
  await client.threads.create({ threadId: tid });
  await expectHttpError(client.threads.create({ threadId: tid }), 409, "duplicate create");
  const again = await client.threads.create({ threadId: tid, ifExists: "do_nothing" });
  eq(again.thread_id, tid, "do_nothing thread_id");
});

R.add("T03", "threads.get unknown id -> 404", async () => {
  await expectHttpError(client.threads.get(uuid()), 404, "get unknown thread");
});

R.add("T04", "threads.search by metadata.graph_id (stamped at the first run) returns values", async () => {
  const tag = uuid();
  const tid = await newThread({ metadata: { tag } });
  await client.runs.wait(tid, "simple", { input: { value: "x" } });
  const t = await client.threads.get(tid);
  eq(t.metadata?.graph_id, "simple", "metadata.graph_id after the first run");
  expect(t.metadata?.assistant_id, `metadata.assistant_id missing: ${short(t.metadata)}`);
  const hits = await client.threads.search({ metadata: { graph_id: "simple", tag }, limit: 10 });
  eq(hits.map((h) => h.thread_id), [tid], "search hits");
  eq(hits[0].values, SIMPLE_FINAL, "search hit values");
  const none = await client.threads.search({ metadata: { graph_id: "chat", tag }, limit: 10 });
  eq(none.length, 0, "search with another graph_id");
});

R.add("T05", "threads.getState and getHistory", async () => {
  const tid = await newThread();
  await client.runs.wait(tid, "simple", { input: { value: "x" } });
  const st = await client.threads.getState(tid);
  eq(st.values, SIMPLE_FINAL, "state values");
  eq(st.next, [], "state next");
  expect(st.checkpoint?.checkpoint_id, `state checkpoint: ${short(st.checkpoint)}`);
  const hist = await client.threads.getHistory(tid, { limit: 10 });
  expect(hist.length >= 4, `history length ${hist.length}`);
  eq(hist[0].values, SIMPLE_FINAL, "newest history entry");
  eq(hist[0].checkpoint.checkpoint_id, st.checkpoint.checkpoint_id, "history[0] is the current checkpoint");
  const first = hist[hist.length - 1];
  eq(first.metadata?.source, "input", "oldest history entry source");
});

// ============================================================================================
// S: classic runs.stream
// ============================================================================================
R.add("S01", "runs.stream values: metadata first (run_id), exact snapshots, onRunCreated", async () => {
  const tid = await newThread();
  let created;
  const parts = await collect(
    client.runs.stream(tid, "simple", { input: { value: "x" }, streamMode: "values", onRunCreated: (m) => (created = m) }),
  );
  eq(parts[0]?.event, "metadata", "first event");
  expect(parts[0].data?.run_id, `metadata data: ${short(parts[0].data)}`);
  eq(created?.run_id, parts[0].data.run_id, "onRunCreated run_id (Content-Location header)");
  eq(created?.thread_id, tid, "onRunCreated thread_id");
  eq(dataOf(parts, "values"), [{ value: "x", steps: [] }, { value: "xa", steps: ["a"] }, SIMPLE_FINAL], "values");
});

R.add("S02", "runs.stream [updates, custom]", async () => {
  const parts = await collect(client.runs.stream(null, "simple", { input: { value: "x" }, streamMode: ["updates", "custom"] }));
  eq(dataOf(parts, "updates"), [{ a: { value: "xa", steps: ["a"] } }, { b: { value: "xab", steps: ["b"] } }], "updates");
  eq(dataOf(parts, "custom"), [{ node: "a", value: "x" }], "custom");
});

R.add("S03", "runs.stream streamSubgraphs: namespaced events", async () => {
  const tid = await newThread();
  const parts = await collect(client.runs.stream(tid, "nested", { input: { value: "x" }, streamMode: ["values", "updates"], streamSubgraphs: true }));
  const sub = parts.filter((p) => /^(values|updates)\|child:/.test(p.event));
  expect(sub.length >= 2, `no child:<task id> namespaced events: ${short(parts.map((p) => p.event))}`);
  const childUpdates = parts.filter((p) => p.event.startsWith("updates|child:")).map((p) => p.data);
  eq(childUpdates, [{ child_1: { value: "xp1" } }, { child_2: { value: "xp12" } }], "child updates");
  eq(dataOf(parts, "values").at(-1), { value: "xp12f", steps: ["prep", "finish"] }, "final values");
  const plain = await collect(client.runs.stream(null, "nested", { input: { value: "x" }, streamMode: "updates" }));
  expect(plain.every((p) => !p.event.includes("|")), `namespaced events without streamSubgraphs: ${short(plain.map((p) => p.event))}`);
});

R.add("S04", "runs.stream error event for a failing graph", async () => {
  const parts = await collect(client.runs.stream(null, "fail", { input: { value: "x" }, streamMode: "values" }));
  const err = parts.find((p) => p.event === "error");
  expect(err, `no error event: ${short(parts.map((p) => p.event))}`);
  eq(err.data?.error, "ValueError", "error.error");
  eq(err.data?.message, "boom: x", "error.message");
});

R.add("S05", "runs.stream from a checkpoint {checkpoint_id, checkpoint_ns}", async () => {
  const tid = await newThread();
  await client.runs.wait(tid, "simple", { input: { value: "x" } });
  const hist = await client.threads.getHistory(tid, { limit: 10 });
  const afterA = hist.find((h) => h.values?.value === "xa");
  expect(afterA, `no checkpoint after a: ${short(hist.map((h) => h.values))}`);
  const parts = await collect(
    client.runs.stream(tid, "simple", {
      input: null,
      streamMode: "values",
      checkpoint: { checkpoint_id: afterA.checkpoint.checkpoint_id, checkpoint_ns: "" },
    }),
  );
  eq(dataOf(parts, "values").at(-1), SIMPLE_FINAL, "final values replayed from the checkpoint");
  const hist2 = await client.threads.getHistory(tid, { limit: 20 });
  expect(hist2.length > hist.length, "history grew (a fork was written)");
});

R.add("S06", "runs.stream streamResumable + onDisconnect=continue, joinStream with lastEventId", async () => {
  const tid = await newThread();
  let runId;
  const ac = new AbortController();
  const seen = [];
  try {
    for await (const p of client.runs.stream(tid, "slow", {
      input: { value: "x", delay: 1.0 },
      streamMode: ["values"],
      streamResumable: true,
      onDisconnect: "continue",
      signal: ac.signal,
      onRunCreated: (m) => (runId = m.run_id),
    })) {
      seen.push(p);
      if (p.event === "values") ac.abort(); // disconnect after the first snapshot
    }
  } catch (e) {
    if (e.name !== "AbortError" && !ac.signal.aborted) throw e;
  }
  expect(runId, "no run id from Content-Location");
  const parts = await collect(client.runs.joinStream(tid, runId, { streamMode: ["values"] }));
  eq(dataOf(parts, "values").at(-1), { delay: 1.0, value: "xz", steps: ["nap"] }, "joined stream final values");
  const run = await client.runs.get(tid, runId);
  eq(run.status, "success", "run status after a client disconnect with onDisconnect=continue");
  const ids = parts.map((p) => p.id).filter(Boolean);
  expect(ids.length > 0, `resumable stream parts carry no ids: ${short(parts)}`);
  const tail = await collect(client.runs.joinStream(tid, runId, { streamMode: ["values"], lastEventId: ids[0] }));
  expect(tail.filter((p) => p.event === "values").length < parts.filter((p) => p.event === "values").length,
    `lastEventId did not skip replayed events: ${short(tail.map((p) => p.id))} vs ${short(ids)}`);
});

R.add("S07", "runs.stream accepts human content blocks, extra input keys, and mode 'events'", async () => {
  const parts = await collect(
    client.runs.stream(null, "chat", {
      input: { messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }], not_a_channel: 1 },
      streamMode: ["values", "events"],
    }),
  );
  const last = dataOf(parts, "values").at(-1);
  eq(last?.messages?.map(typeOf), ["human", "ai"], "message types");
  eq(textOf(last.messages[1]), "hello from chat", "answer");
  eq(textOf(last.messages[0]), "hi", "human content from blocks");
  expect(!parts.some((p) => p.event === "error"), `error event: ${short(parts.filter((p) => p.event === "error"))}`);
});

// ============================================================================================
// I: interrupts
// ============================================================================================
R.add("I01", "interrupt: __interrupt__ in updates, thread state interrupts + next", async () => {
  const tid = await newThread();
  const parts = await collect(client.runs.stream(tid, "interrupt", { input: { value: "x" }, streamMode: ["values", "updates"] }));
  const intr = dataOf(parts, "updates").find((u) => u.__interrupt__);
  expect(intr, `no __interrupt__ update: ${short(dataOf(parts, "updates"))}`);
  eq(intr.__interrupt__[0].value, { question: "approve?", value: "x" }, "interrupt value");
  expect(intr.__interrupt__[0].id, "interrupt id");
  const st = await client.threads.getState(tid);
  eq(st.next, ["ask"], "next");
  eq(st.interrupts?.[0]?.value, { question: "approve?", value: "x" }, "state.interrupts[0].value");
  eq(st.tasks?.[0]?.interrupts?.[0]?.value, { question: "approve?", value: "x" }, "tasks[0].interrupts[0].value");
  const t = await client.threads.get(tid);
  eq(t.status, "interrupted", "thread status");
});

R.add("I02", "resume via runs.stream command {resume} with input {}", async () => {
  const tid = await newThread();
  await client.runs.wait(tid, "interrupt", { input: { value: "x" } });
  const parts = await collect(client.runs.stream(tid, "interrupt", { input: {}, command: { resume: "yes" }, streamMode: "values" }));
  eq(dataOf(parts, "values").at(-1), { value: "x|yes", answer: "yes", steps: ["ask", "after"] }, "final values");
  eq((await client.threads.get(tid)).status, "idle", "thread status after resume");
});

R.add("I03", "interrupt inside a subgraph (streamSubgraphs), resume", async () => {
  const tid = await newThread();
  const parts = await collect(client.runs.stream(tid, "nested_interrupt", { input: { value: "x" }, streamMode: ["updates"], streamSubgraphs: true }));
  const intr = parts.filter((p) => p.event.startsWith("updates") && p.data?.__interrupt__);
  expect(intr.length >= 1, `no __interrupt__: ${short(parts)}`);
  eq(intr[0].data.__interrupt__[0].value, { question: "inner?" }, "interrupt value");
  const st = await client.threads.getState(tid, undefined, { subgraphs: true });
  eq(st.next, ["inner"], "parent next");
  eq(st.tasks?.[0]?.state?.next, ["gate"], "subgraph next (subgraphs=true)");
  const done = await collect(client.runs.stream(tid, "nested_interrupt", { command: { resume: "ok" }, streamMode: "values" }));
  eq(dataOf(done, "values").at(-1), { value: "xp[ok]", steps: ["prep"] }, "final values");
});

R.add("I04", "chat_hitl: tool-call review interrupt, resume with decisions approve/reject", async () => {
  for (const kind of ["approve", "reject"]) {
    const tid = await newThread();
    const parts = await collect(
      client.runs.stream(tid, "chat_hitl", { input: { messages: [{ role: "user", content: "mail ann" }] }, streamMode: ["values", "updates"] }),
    );
    const intr = dataOf(parts, "updates").find((u) => u.__interrupt__);
    eq(intr?.__interrupt__?.[0]?.value, HITL_REQUEST, "interrupt value (HITL request)");
    const vals = dataOf(parts, "values").at(-1);
    eq(vals.messages.at(-1).tool_calls?.[0]?.name, "send_email", "proposed tool call");
    const done = await collect(
      client.runs.stream(tid, "chat_hitl", { command: { resume: { decisions: [{ type: kind }] } }, streamMode: "values" }),
    );
    const msgs = dataOf(done, "values").at(-1).messages;
    eq(msgs.map(typeOf), ["human", "ai", "tool", "ai"], "message types");
    eq(textOf(msgs[2]), kind, "tool message");
    eq(textOf(msgs[3]), `decision: ${kind}`, "answer");
  }
});

// ============================================================================================
// B: background runs
// ============================================================================================
R.add("B01", "background runs.create + join + get + list", async () => {
  const tid = await newThread();
  const run = await client.runs.create(tid, "slow", { input: { value: "x", delay: 0.3 } });
  expect(["pending", "running"].includes(run.status), `new run status ${run.status}`);
  const out = await client.runs.join(tid, run.run_id);
  eq(out, { delay: 0.3, value: "xz", steps: ["nap"] }, "join result");
  eq((await client.runs.get(tid, run.run_id)).status, "success", "run status");
  const list = await client.runs.list(tid);
  expect(list.some((r) => r.run_id === run.run_id), `runs.list: ${short(list.map((r) => r.run_id))}`);
});

R.add("B02", "runs.joinStream of a background run", async () => {
  const tid = await newThread();
  const run = await client.runs.create(tid, "slow", { input: { value: "x", delay: 0.5 }, streamMode: ["values", "updates"] });
  const parts = await collect(client.runs.joinStream(tid, run.run_id, { streamMode: ["values", "updates"] }));
  expect(dataOf(parts, "values").length + dataOf(parts, "updates").length > 0, `no events: ${short(parts)}`);
  const upd = dataOf(parts, "updates").find((u) => u.nap);
  eq(upd, { nap: { value: "xz", steps: ["nap"] } }, "nap update");
});

R.add("B03", "runs.cancel(wait=true) of a running run", async () => {
  const tid = await newThread();
  const run = await client.runs.create(tid, "slow", { input: { value: "x", delay: 20 } });
  await waitFor(async () => (await client.runs.get(tid, run.run_id)).status === "running", { what: "run to start" });
  eq((await client.threads.get(tid)).status, "busy", "thread status while running");
  const t0 = Date.now();
  await client.runs.cancel(tid, run.run_id, true);
  expect(Date.now() - t0 < 10000, "cancel(wait=true) took more than 10s");
  const after = await waitFor(async () => {
    const s = (await client.runs.get(tid, run.run_id)).status;
    return ["interrupted", "error", "success"].includes(s) && s;
  }, { what: "run to stop" });
  eq(after, "interrupted", "run status after cancel (action=interrupt)");
  expect((await client.threads.get(tid)).status !== "busy", "thread still busy after cancel");
});

R.add("B04", "multitaskStrategy=reject on a busy thread -> 409", async () => {
  const tid = await newThread();
  const run = await client.runs.create(tid, "slow", { input: { value: "x", delay: 3 } });
  await waitFor(async () => (await client.runs.get(tid, run.run_id)).status === "running", { what: "run to start" });
  await expectHttpError(client.runs.create(tid, "slow", { input: { value: "y" }, multitaskStrategy: "reject" }), 409, "second run");
  await client.runs.cancel(tid, run.run_id, true);
});

// ============================================================================================
// X: store
// ============================================================================================
R.add("X01", "store putItem/getItem/searchItems/listNamespaces/deleteItem", async () => {
  const ns = ["js-check", uuid()];
  await client.store.putItem(ns, "k1", { color: "red", n: 1 });
  await client.store.putItem(ns, "k2", { color: "blue", n: 2 });
  const it = await client.store.getItem(ns, "k1");
  eq(it?.value, { color: "red", n: 1 }, "getItem value");
  eq(it?.namespace, ns, "getItem namespace");
  const found = await client.store.searchItems(ns, { filter: { color: "blue" } });
  eq(found.items.map((i) => i.key), ["k2"], "searchItems filter");
  const spaces = await client.store.listNamespaces({ prefix: ["js-check"] });
  expect(spaces.namespaces.some((n) => n[1] === ns[1]), `listNamespaces: ${short(spaces)}`);
  await client.store.deleteItem(ns, "k1");
  eq(await client.store.getItem(ns, "k1"), null, "getItem after delete");
});

// ============================================================================================
// M: messages stream modes (what useStream / agent-chat-ui use)
// ============================================================================================
R.add("M01", "runs.stream messages-tuple: tokens + metadata", async () => {
  const parts = await collect(client.runs.stream(null, "chat", { input: { messages: [{ role: "user", content: "hi" }] }, streamMode: "messages-tuple" }));
  const tuples = dataOf(parts, "messages");
  expect(tuples.length >= 1, `no messages events: ${short(parts.map((p) => p.event))}`);
  const ai = tuples.filter(([m]) => m.type === "AIMessageChunk" || m.type === "ai");
  eq(ai.map(([m]) => textOf(m)).join(""), "hello from chat", "concatenated tokens");
  eq(ai[0][1]?.langgraph_node, "respond", "metadata.langgraph_node");
  expect(new Set(ai.map(([m]) => m.id)).size === 1, "one message id for all chunks");
});

R.add("M02", "runs.stream messages (legacy): messages/metadata + messages/partial", async () => {
  const parts = await collect(client.runs.stream(null, "chat", { input: { messages: [{ role: "user", content: "hi" }] }, streamMode: "messages" }));
  const names = parts.map((p) => p.event);
  expect(names.includes("messages/metadata"), `no messages/metadata: ${short(names)}`);
  const partial = parts.filter((p) => p.event === "messages/partial" || p.event === "messages/complete");
  expect(partial.length >= 1, `no messages/partial: ${short(names)}`);
  eq(textOf(partial.at(-1).data[0]), "hello from chat", "last accumulated content");
  const meta = parts.find((p) => p.event === "messages/metadata").data;
  const [mid] = Object.keys(meta);
  eq(mid, partial.at(-1).data[0].id, "metadata keyed by the message id");
  expect(meta[mid]?.metadata?.langgraph_node === "respond", `metadata: ${short(meta)}`);
});

R.add("M03", "runs.stream messages (legacy) on chat_hitl: messages/complete for node messages", async () => {
  const tid = await newThread();
  const first = await collect(client.runs.stream(tid, "chat_hitl", { input: { messages: [{ role: "user", content: "mail ann" }] }, streamMode: "messages" }));
  const names1 = first.map((p) => p.event);
  eq(names1, ["metadata", "messages/metadata", "messages/complete"], "events before the interrupt");
  const proposed = first.at(-1).data[0];
  eq([proposed.type, proposed.tool_calls?.[0]?.name], ["ai", "send_email"], "complete tool-call message");
  expect(first[1].data[proposed.id], `messages/metadata not keyed by ${proposed.id}: ${short(first[1].data)}`);
  const second = await collect(client.runs.stream(tid, "chat_hitl", { command: { resume: { decisions: [{ type: "approve" }] } }, streamMode: "messages" }));
  const complete = second.filter((p) => p.event === "messages/complete").map((p) => p.data[0]);
  eq(complete.map((m) => [m.type, textOf(m)]), [["tool", "approve"]], "complete messages after resume");
  const partial = second.filter((p) => p.event === "messages/partial").map((p) => textOf(p.data[0]));
  eq(partial.at(-1), "decision: approve", "last partial");
  const metaIds = second.filter((p) => p.event === "messages/metadata").map((p) => Object.keys(p.data)[0]);
  eq(metaIds.length, 2, "one messages/metadata per message");
});

// ============================================================================================
// V: v3 thread streaming — client.threads.stream (ThreadStream) and the raw protocol
// ============================================================================================
const cmd = (tid, id, method, params) => postJSON(`${URL_}/threads/${tid}/commands`, { id, method, params });
const events = (tid, body, opts = {}) => readSSE(`${URL_}/threads/${tid}/stream/events`, { body, ...opts });
const isTerminal = (f, ns = 0) =>
  f.data?.method === "lifecycle" && f.data.params.namespace.length === ns && ["completed", "failed", "interrupted"].includes(f.data.params.data.event);
const untilTerminal = (n = 1) => (frames) => frames.filter((f) => isTerminal(f)).length >= n;

R.add("V01", "threads.stream: run.start on a new client-chosen thread streams a chat answer", async () => {
  const tid = uuid();
  const thread = client.threads.stream(tid, { assistantId: "chat" });
  try {
    const texts = [];
    const consumer = (async () => {
      for await (const m of thread.messages) texts.push(await m.text);
    })();
    const res = await thread.run.start({ input: { messages: [{ role: "user", content: "hi" }] } });
    expect(res?.run_id, `run.start result: ${short(res)}`);
    const out = await withTimeout(Promise.resolve(thread.output), 15000, "thread.output");
    const msgs = out?.messages ?? [];
    eq(msgs.map(typeOf), ["human", "ai"], "final message types");
    eq(textOf(msgs[1]), "hello from chat", "final answer");
    await withTimeout(waitFor(() => texts.length > 0, { what: "streamed message" }), 5000, "messages");
    eq(texts, ["hello from chat"], "streamed message text");
    void consumer;
  } finally {
    await thread.close();
  }
  const t = await client.threads.get(tid);
  eq(t.metadata?.graph_id, "chat", "implicitly created thread's metadata.graph_id");
  eq(t.status, "idle", "thread status");
});

R.add("V02", "threads.stream: token deltas and lifecycle via subscribe()", async () => {
  const tid = uuid();
  const thread = client.threads.stream(tid, { assistantId: "chat" });
  try {
    await thread.run.start({ input: { messages: [{ role: "user", content: "hi" }] } });
    const sub = await thread.subscribe({ channels: ["messages", "lifecycle"] });
    const got = [];
    await withTimeout(
      (async () => {
        for await (const ev of sub) {
          got.push(ev);
          if (isTerminal({ data: ev })) break;
        }
      })(),
      15000,
      "subscription to reach a terminal lifecycle event",
    );
    const kinds = got.filter((e) => e.method === "messages").map((e) => e.params.data.event);
    eq(kinds[0], "message-start", "first messages event");
    eq(kinds.at(-1), "message-finish", "last messages event");
    expect(kinds.includes("content-block-start") && kinds.includes("content-block-finish"), `kinds: ${short(kinds)}`);
    const deltas = got.filter((e) => e.params.data.event === "content-block-delta").map((e) => e.params.data.delta.text);
    eq(deltas.join(""), "hello from chat", "text deltas");
    const life = got.filter((e) => e.method === "lifecycle").map((e) => e.params.data.event);
    eq(life.at(-1), "completed", "last lifecycle event");
    for (const e of got) {
      expect(e.type === "event" && typeof e.seq === "number" && typeof e.event_id === "string", `envelope: ${short(e)}`);
      expect(Array.isArray(e.params.namespace) && typeof e.params.timestamp === "number", `params: ${short(e.params)}`);
    }
  } finally {
    await thread.close();
  }
});

R.add("V03", "threads.stream: chat_hitl interrupt (input.requested) and input.respond", async () => {
  const tid = uuid();
  const thread = client.threads.stream(tid, { assistantId: "chat_hitl" });
  try {
    await thread.run.start({ input: { messages: [{ role: "user", content: "mail ann" }] } });
    await withTimeout(waitFor(() => thread.interrupted && thread.interrupts.length > 0, { timeout: 15000, what: "interrupt" }), 16000, "interrupt");
    const [intr] = thread.interrupts;
    eq(intr.payload, HITL_REQUEST, "interrupt payload");
    eq(intr.namespace, [], "interrupt namespace");
    expect(typeof intr.interruptId === "string" && intr.interruptId, "interrupt id");
    const st = await client.threads.getState(tid);
    eq(st.interrupts?.[0]?.id, intr.interruptId, "interrupt id == thread state interrupt id");
    await thread.input.respond({ namespace: [], interrupt_id: intr.interruptId, response: { decisions: [{ type: "approve" }] } });
    await waitFor(async () => (await client.threads.get(tid)).status === "idle", { timeout: 15000, what: "resumed run to finish" });
    const final = (await client.threads.getState(tid)).values.messages;
    eq(final.map(typeOf), ["human", "ai", "tool", "ai"], "message types");
    eq(textOf(final.at(-1)), "decision: approve", "answer");
  } finally {
    await thread.close();
  }
});

R.add("V04", "threads.stream: subgraph events carry the child namespace; subgraphs discovered", async () => {
  const tid = uuid();
  const thread = client.threads.stream(tid, { assistantId: "nested" });
  try {
    const found = [];
    const disc = (async () => {
      for await (const sg of thread.subgraphs) found.push(sg);
    })();
    await thread.run.start({ input: { value: "x" } });
    const sub = await thread.subscribe({ channels: ["values", "lifecycle"] });
    const got = [];
    await withTimeout(
      (async () => {
        for await (const ev of sub) {
          got.push(ev);
          if (isTerminal({ data: ev })) break;
        }
      })(),
      15000,
      "terminal lifecycle",
    );
    const childValues = got.filter((e) => e.method === "values" && e.params.namespace.length === 1);
    expect(childValues.length >= 1 && /^child:/.test(childValues[0].params.namespace[0]), `child values: ${short(got.map((e) => [e.method, e.params.namespace]))}`);
    eq(childValues.at(-1).params.data, { value: "xp12" }, "last child values");
    const started = got.find((e) => e.method === "lifecycle" && e.params.data.event === "started" && e.params.namespace.length === 1);
    expect(started, `no child 'started' lifecycle event: ${short(got.filter((e) => e.method === "lifecycle").map((e) => e.params))}`);
    eq(started.params.data.graph_name, "child", "child graph_name");
    await withTimeout(waitFor(() => found.length > 0, { what: "subgraph discovery" }), 5000, "subgraphs");
    eq(found[0].name, "child", "discovered subgraph name");
    void disc;
  } finally {
    await thread.close();
  }
});

R.add("V05", "raw v3: command envelope, SSE framing (id: <seq>), event envelope", async () => {
  const tid = uuid();
  const r = await cmd(tid, 7, "run.start", { assistant_id: "simple", input: { value: "x" } });
  eq(r.status, 200, "commands HTTP status");
  expect(r.headers.get("content-type")?.includes("application/json"), `content-type ${r.headers.get("content-type")}`);
  eq(r.json?.type, "success", "type");
  eq(r.json?.id, 7, "id echoes the command id");
  expect(typeof r.json?.result?.run_id === "string", `result.run_id: ${short(r.json)}`);
  expect(typeof r.json?.meta?.applied_through_seq === "number", `meta.applied_through_seq: ${short(r.json)}`);
  const s = await events(tid, { channels: ["values", "lifecycle"] }, { until: untilTerminal() });
  eq(s.status, 200, "stream HTTP status");
  expect(s.headers.get("content-type")?.startsWith("text/event-stream"), `stream content-type ${s.headers.get("content-type")}`);
  const frames = s.frames.filter((f) => f.data);
  expect(frames.length >= 4, `frames: ${short(frames)}`);
  let last = 0;
  for (const f of frames) {
    const e = f.data;
    eq(f.event, e.method, "SSE event: name == method");
    eq(f.id, String(e.seq), "SSE id == seq");
    expect(e.seq > last, `seq not increasing: ${e.seq} after ${last}`);
    last = e.seq;
    eq(Object.keys(e).sort(), ["event_id", "method", "params", "seq", "type"], "envelope keys");
    eq(e.type, "event", "type");
    expect(Array.isArray(e.params.namespace) && Number.isInteger(e.params.timestamp) && "data" in e.params, `params: ${short(e.params)}`);
  }
  eq(frames.filter((f) => f.event === "values").map((f) => f.data.params.data), [{ value: "x", steps: [] }, { value: "xa", steps: ["a"] }, SIMPLE_FINAL], "values");
  eq(frames[0].data.params.data.event, "running", "first lifecycle event");
  eq(frames.at(-1).data.params.data, { event: "completed", graph_name: "simple" }, "terminal lifecycle data");
});

R.add("V06", "raw v3: replay from `since`, filters by channel, thread-scoped seq across runs", async () => {
  const tid = uuid();
  await cmd(tid, 1, "run.start", { assistant_id: "simple", input: { value: "x" } });
  const all = await events(tid, { channels: ["values", "lifecycle"] }, { until: untilTerminal() });
  const seqs = all.frames.filter((f) => f.data).map((f) => f.data.seq);
  const cut = seqs[1];
  const tail = await events(tid, { channels: ["values", "lifecycle"], since: cut }, { until: untilTerminal() });
  eq(tail.frames.filter((f) => f.data).map((f) => f.data.seq), seqs.filter((s) => s > cut), "seqs replayed after `since`");
  const onlyLife = await events(tid, { channels: ["lifecycle"] }, { until: untilTerminal() });
  expect(onlyLife.frames.filter((f) => f.data).every((f) => f.event === "lifecycle"), `channel filter: ${short(onlyLife.frames.map((f) => f.event))}`);
  // a second run on the same thread continues the sequence
  await cmd(tid, 2, "run.start", { assistant_id: "simple", input: { value: "y" } });
  const both = await events(tid, { channels: ["values", "lifecycle"] }, { until: untilTerminal(2) });
  const seqs2 = both.frames.filter((f) => f.data).map((f) => f.data.seq);
  expect(seqs2.length > seqs.length && seqs2.every((s, i) => i === 0 || s > seqs2[i - 1]), `seqs across runs: ${short(seqs2)}`);
  eq(both.frames.filter((f) => f.event === "values").at(-1).data.params.data, { value: "yab", steps: ["a", "b", "a", "b"] }, "second run final values");
});

R.add("V07", "raw v3: interrupt -> input.requested + lifecycle interrupted; input.respond; errors", async () => {
  const tid = uuid();
  await cmd(tid, 1, "run.start", { assistant_id: "interrupt", input: { value: "x" } });
  const s = await events(tid, { channels: ["lifecycle", "input", "values"] }, { until: untilTerminal() });
  const req = s.frames.find((f) => f.event === "input.requested");
  expect(req, `no input.requested: ${short(s.frames.map((f) => f.event))}`);
  eq(req.data.params.data.payload, { question: "approve?", value: "x" }, "payload");
  const iid = req.data.params.data.interrupt_id;
  eq(s.frames.filter((f) => f.event === "lifecycle").at(-1).data.params.data.event, "interrupted", "terminal lifecycle");
  const ok = await cmd(tid, 2, "input.respond", { namespace: [], interrupt_id: iid, response: "yes" });
  eq(ok.json?.type, "success", `input.respond: ${short(ok.json)}`);
  eq(ok.json?.id, 2, "input.respond id");
  const s2 = await events(tid, { channels: ["lifecycle", "values"] }, { until: untilTerminal(2) });
  eq(s2.frames.filter((f) => f.event === "values").at(-1).data.params.data, { value: "x|yes", answer: "yes", steps: ["ask", "after"] }, "final values");
  const stale = await cmd(tid, 3, "input.respond", { namespace: [], interrupt_id: iid, response: "again" });
  eq([stale.json?.type, stale.json?.id, stale.json?.error], ["error", 3, "no_such_interrupt"], "stale respond");
  const unknown = await cmd(tid, 4, "no.such.command", {});
  eq([unknown.json?.type, unknown.json?.id, unknown.json?.error], ["error", 4, "unknown_command"], "unknown command");
  const noAssistant = await cmd(uuid(), 5, "run.start", { input: {} });
  eq([noAssistant.json?.type, noAssistant.json?.error], ["error", "invalid_argument"], "run.start without assistant_id");
});

R.add("V08", "raw v3: a failing run ends with lifecycle failed {error}", async () => {
  const tid = uuid();
  await cmd(tid, 1, "run.start", { assistant_id: "fail", input: { value: "x" } });
  const s = await events(tid, { channels: ["lifecycle"] }, { until: untilTerminal() });
  const last = s.frames.filter((f) => f.data).at(-1).data.params.data;
  eq([last.event, last.error], ["failed", "boom: x"], "failed lifecycle");
});

R.add("V09", "raw v3: nested interrupt surfaces in the child namespace; respond resumes", async () => {
  const tid = uuid();
  await cmd(tid, 1, "run.start", { assistant_id: "nested_interrupt", input: { value: "x" } });
  const s = await events(tid, { channels: ["lifecycle", "input", "values"] }, { until: untilTerminal() });
  const req = s.frames.find((f) => f.event === "input.requested");
  expect(req && /^inner:/.test(req.data.params.namespace[0] ?? ""), `input.requested namespace: ${short(req?.data?.params)}`);
  eq(req.data.params.data.payload, { question: "inner?" }, "payload");
  const ok = await cmd(tid, 2, "input.respond", { namespace: req.data.params.namespace, interrupt_id: req.data.params.data.interrupt_id, response: "ok" });
  eq(ok.json?.type, "success", `respond: ${short(ok.json)}`);
  const s2 = await events(tid, { channels: ["lifecycle", "values"], namespaces: [[]], depth: 0 }, { until: untilTerminal(2) });
  eq(s2.frames.filter((f) => f.event === "values").at(-1).data.params.data, { value: "xp[ok]", steps: ["prep"] }, "final values");
  expect(s2.frames.filter((f) => f.data).every((f) => f.data.params.namespace.length === 0), "namespaces=[[]], depth=0 keeps only root events");
});

R.add("V10", "raw v3: the event stream of an idle thread stays open with ': heartbeat' comments", async () => {
  const s = await events(uuid(), { channels: ["values"] }, { ms: 6500 });
  eq(s.status, 200, "status");
  expect(!s.closedByServer, "server closed an idle stream");
  expect(s.frames.some((f) => f.comment !== undefined && !f.data), `no heartbeat comment within 6.5s: ${short(s.text)}`);
});

// ============================================================================================
// C: CORS (browser clients)
// ============================================================================================
R.add("C01", "CORS: preflight answered; responses expose x-pagination-*, content-location", async () => {
  const origin = "http://localhost:5173";
  const pre = await fetch(`${URL_}/threads/${uuid()}/commands`, {
    method: "OPTIONS",
    headers: { Origin: origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,x-api-key" },
  });
  expect(pre.status === 200 || pre.status === 204, `preflight status ${pre.status}`);
  const allowOrigin = pre.headers.get("access-control-allow-origin");
  expect(allowOrigin === "*" || allowOrigin === origin, `allow-origin ${allowOrigin}`);
  expect(/POST/.test(pre.headers.get("access-control-allow-methods") ?? ""), `allow-methods ${pre.headers.get("access-control-allow-methods")}`);
  const allowHeaders = (pre.headers.get("access-control-allow-headers") ?? "").toLowerCase();
  expect(allowHeaders === "*" || (allowHeaders.includes("content-type") && allowHeaders.includes("x-api-key")), `allow-headers ${allowHeaders}`);
  const r = await fetch(`${URL_}/threads/search`, { method: "POST", headers: { Origin: origin, "content-type": "application/json" }, body: "{\"limit\":1}" });
  const expose = (r.headers.get("access-control-expose-headers") ?? "").toLowerCase().split(/\s*,\s*/);
  for (const h of ["x-pagination-total", "x-pagination-next", "content-location"]) expect(expose.includes(h), `expose-headers ${short(expose)} lacks ${h}`);
  const ao = r.headers.get("access-control-allow-origin");
  expect(ao === "*" || ao === origin, `allow-origin on POST ${ao}`);
  expect(r.headers.get("x-pagination-total") !== null, "x-pagination-total header on threads/search");
});

process.exitCode = await R.run();

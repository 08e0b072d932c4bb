#!/usr/bin/env node
// Capture the wire exchanges the JS clients rely on into tests/js/fixtures/*.txt.
//
//   node capture_fixtures.mjs --url http://127.0.0.1:2024 [--only v3-] [--no-browser]
//
// Run it against the REAL LangGraph dev server (run_real_langgraph_dev.sh) to refresh the
// reference fixtures; docs/protocol/v3-thread-streaming.md explains them. Every scenario goes
// through a loopback recording proxy (lib/capture_proxy.mjs); ids, timestamps and ports are
// normalised (<thread-1>, <run-1>, <uuid-3>, <ts>, <iso>, ...) so a re-capture diffs cleanly
// except where behaviour changed. Running it against `stepgraph serve` into another directory
// (--out DIR) and diffing against these files is a quick way to see protocol differences.
import fs from "node:fs";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { startCaptureProxy } from "./lib/capture_proxy.mjs";
import { parseArgs, sleep, readSSE, postJSON, waitFor } from "./lib/harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const args = parseArgs();
const OUT = path.resolve(args.out ?? path.join(HERE, "fixtures"));
fs.mkdirSync(OUT, { recursive: true });
const proxy = await startCaptureProxy({ target: args.url });
const P = proxy.url;
const client = new Client({ apiUrl: P });
const uuid = () => crypto.randomUUID();

// ---- normalisation ------------------------------------------------------------------------------
const KEEP_REQ = ["content-type", "accept", "origin", "last-event-id", "access-control-request-method", "access-control-request-headers"];
const KEEP_RES = ["content-type", "content-location", "location", "cache-control", "x-accel-buffering", "x-pagination-total", "x-pagination-next"];
function makeNormaliser() {
  const maps = new Map();
  const label = (kind, v) => {
    if (!maps.has(kind)) maps.set(kind, new Map());
    const m = maps.get(kind);
    if (!m.has(v)) m.set(v, `<${kind}-${m.size + 1}>`);
    return m.get(v);
  };
  const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
  return {
    // learn which uuids are threads / runs / assistants / checkpoints from structure first
    learn(ex) {
      const p = ex.path.match(/\/threads\/([0-9a-f-]{36})/);
      if (p) label("thread", p[1]);
      const r = ex.path.match(/\/runs\/([0-9a-f-]{36})/);
      if (r) label("run", r[1]);
      const texts = [ex.request_body, ex.response_body, ex.response_headers?.["content-location"] ?? ""];
      for (const t of texts) {
        for (const m of t.matchAll(/"thread_id":\s*"([0-9a-f-]{36})"/g)) label("thread", m[1]);
        for (const m of t.matchAll(/"run_id":\s*"([0-9a-f-]{36})"/g)) label("run", m[1]);
        for (const m of t.matchAll(/synth:([0-9a-f-]{36}):/g)) label("run", m[1]);
        for (const m of t.matchAll(/\/runs\/([0-9a-f-]{36})/g)) label("run", m[1]);
        for (const m of t.matchAll(/"assistant_id":\s*"([0-9a-f-]{36})"/g)) label("assistant", m[1]);
        for (const m of t.matchAll(/"checkpoint_id":\s*"([0-9a-f-]{36})"/g)) label("checkpoint", m[1]);
      }
    },
    text(s) {
      if (!s) return s;
      return s
        .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>")
        .replace(/lc_run--([0-9a-f-]{36})/g, (_, u) => `lc_run--${label("msg", u)}`)
        .replace(UUID, (u) => {
          for (const kind of ["thread", "run", "assistant", "checkpoint", "msg"]) if (maps.get(kind)?.has(u)) return maps.get(kind).get(u);
          return label("uuid", u);
        })
        .replace(/\b[0-9a-f]{32}\b/g, (h) => label("interrupt", h))
        .replace(/"event_id":"(\d{13})-(\d+(?:\.\d+)?)"/g, (_, _ms, n) => `"event_id":"<ms>-${n}"`)
        .replace(/\b1[67]\d{11}\b/g, "<ts>")
        .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?/g, "<iso>")
        .replace(/"(langgraph_request_id|run_attempt)":\s*("[^"]*"|\d+)/g, '"$1":<…>');
    },
  };
}

function render(name, description, exchanges) {
  const N = makeNormaliser();
  for (const ex of exchanges) N.learn(ex);
  const lines = [`# fixture: ${name}`, `# ${description}`, `# captured from ${args.serverLabel ?? "the reference server"} through a loopback proxy; ids/timestamps normalised.`, `# SSE bodies are shown with LF line ends (the reference server sends CRLF).`, ""];
  for (const ex of exchanges) {
    lines.push(`### ${ex.n} ${ex.method} ${N.text(ex.path)}`);
    for (const h of KEEP_REQ) if (ex.request_headers[h] !== undefined) lines.push(`> ${h}: ${N.text(String(ex.request_headers[h]))}`);
    if (ex.request_body) lines.push(`> ${N.text(ex.request_body)}`);
    lines.push(`< ${ex.status ?? "(no response)"}${ex.aborted_by_client ? "   (stream closed by the client)" : ""}`);
    const rh = ex.response_headers ?? {};
    for (const h of [...KEEP_RES, ...Object.keys(rh).filter((k) => k.startsWith("access-control-")).sort()])
      if (rh[h] !== undefined && !(h.startsWith("access-control-") && KEEP_RES.includes(h))) lines.push(`< ${h}: ${N.text(String(rh[h]))}`);
    const body = ex.response_body ?? "";
    const isSSE = String(rh["content-type"] ?? "").startsWith("text/event-stream");
    if (isSSE) {
      const b = N.text(body.replace(/\r\n/g, "\n"));
      for (const l of b.split("\n")) lines.push(`< ${l}`);
    } else if (body) {
      let b = N.text(body);
      if (b.length > 20000) b = `${b.slice(0, 20000)}…[${b.length - 20000} more chars]`;
      lines.push(`< ${b}`);
    }
    lines.push("");
  }
  return lines.join("\n").replace(/(< \n){2,}/g, "< \n");
}

const written = [];
async function scenario(name, description, fn) {
  if (args.only && !args.only.some((p) => name.startsWith(p))) return;
  proxy.reset();
  try {
    await fn();
  } catch (e) {
    console.error(`scenario ${name} failed: ${e?.stack ?? e}`);
    process.exitCode = 1;
  }
  await sleep(300);
  const exchanges = [...proxy.exchanges].sort((a, b) => a.n - b.n);
  fs.writeFileSync(path.join(OUT, `${name}.txt`), render(name, description, exchanges));
  written.push(`${name}.txt (${exchanges.length} exchanges)`);
}
const cmd = (tid, id, method, params) => postJSON(`${P}/threads/${tid}/commands`, { id, method, params });
const sse = (tid, body, opts = {}) => readSSE(`${P}/threads/${tid}/stream/events`, { body, ...opts });
const terminal = (n = 1) => (frames) =>
  frames.filter((f) => f.data?.method === "lifecycle" && f.data.params.namespace.length === 0 && ["completed", "failed", "interrupted"].includes(f.data.params.data.event)).length >= n;
const collect = async (gen) => {
  const out = [];
  for await (const x of gen) out.push(x);
  return out;
};

// ---- v3 through the JS SDK (ThreadStream) ---------------------------------------------------------
await scenario("v3-sdk-chat", "client.threads.stream(id, {assistantId:'chat'}): run.start, messages + values projections, close()", async () => {
  const thread = client.threads.stream(uuid(), { assistantId: "chat" });
  const texts = [];
  const c = (async () => {
    for await (const m of thread.messages) texts.push(await m.text);
  })();
  await thread.run.start({ input: { messages: [{ role: "user", content: "hi" }] } });
  await thread.output;
  await waitFor(() => texts.length > 0);
  await thread.close();
  void c;
});

await scenario("v3-sdk-hitl", "client.threads.stream on chat_hitl: interrupt (input.requested), input.respond with {decisions:[approve]}", async () => {
  const tid = uuid();
  const thread = client.threads.stream(tid, { assistantId: "chat_hitl" });
  await thread.run.start({ input: { messages: [{ role: "user", content: "mail ann" }] } });
  await waitFor(() => thread.interrupted && thread.interrupts.length, { timeout: 15000 });
  const [i] = thread.interrupts;
  await thread.input.respond({ namespace: i.namespace, interrupt_id: i.interruptId, response: { decisions: [{ type: "approve" }] } });
  await waitFor(async () => (await fetch(`${args.url}/threads/${tid}`).then((r) => r.json())).status === "idle", { timeout: 15000 });
  await sleep(500);
  await thread.close();
});

await scenario("v3-sdk-subgraphs", "client.threads.stream on nested: subscribe(values, lifecycle) + subgraph discovery", async () => {
  const thread = client.threads.stream(uuid(), { assistantId: "nested" });
  const d = (async () => {
    for await (const _ of thread.subgraphs);
  })();
  await thread.run.start({ input: { value: "x" } });
  const sub = await thread.subscribe({ channels: ["values", "lifecycle"] });
  for await (const ev of sub) if (ev.method === "lifecycle" && ev.params.namespace.length === 0 && ev.params.data.event === "completed") break;
  await thread.close();
  void d;
});

// ---- v3 raw protocol ------------------------------------------------------------------------------
await scenario("v3-raw-all-channels", "raw: event stream opened BEFORE run.start on a fresh thread, every channel, graph simple", async () => {
  const tid = uuid();
  const s = sse(tid, { channels: ["values", "updates", "messages", "tools", "custom", "lifecycle", "input", "checkpoints", "tasks"] }, { until: terminal(), ms: 8000 });
  await sleep(300);
  await cmd(tid, 1, "run.start", { assistant_id: "simple", input: { value: "x" } });
  await s;
});

await scenario("v3-raw-nested", "raw: nested graph, values+lifecycle, then the same thread filtered to the root namespace (namespaces:[[]], depth:0)", async () => {
  const tid = uuid();
  await cmd(tid, 1, "run.start", { assistant_id: "nested", input: { value: "x" } });
  await sse(tid, { channels: ["values", "lifecycle"] }, { until: terminal() });
  await sse(tid, { channels: ["values", "lifecycle"], namespaces: [[]], depth: 0 }, { until: terminal() });
});

await scenario("v3-raw-reconnect", "raw: replay with since=<seq>, a second run on the same thread continues the seq", async () => {
  const tid = uuid();
  await cmd(tid, 1, "run.start", { assistant_id: "simple", input: { value: "x" } });
  await sse(tid, { channels: ["values", "lifecycle"] }, { until: terminal() });
  await sse(tid, { channels: ["values", "lifecycle"], since: 3 }, { until: terminal() });
  await cmd(tid, 2, "run.start", { assistant_id: "simple", input: { value: "y" } });
  await sse(tid, { channels: ["lifecycle"], since: 5 }, { until: terminal(1) });
});

await scenario("v3-raw-interrupt", "raw: interrupt graph: input.requested, input.respond, stale respond; nested_interrupt namespaces", async () => {
  const tid = uuid();
  await cmd(tid, 1, "run.start", { assistant_id: "interrupt", input: { value: "x" } });
  const s = await sse(tid, { channels: ["lifecycle", "input", "values"] }, { until: terminal() });
  const req = s.frames.find((f) => f.event === "input.requested");
  await cmd(tid, 2, "input.respond", { namespace: [], interrupt_id: req.data.params.data.interrupt_id, response: "yes" });
  await sse(tid, { channels: ["lifecycle", "input", "values"], since: s.frames.filter((f) => f.data).at(-1).data.seq }, { until: terminal() });
  await cmd(tid, 3, "input.respond", { namespace: [], interrupt_id: req.data.params.data.interrupt_id, response: "yes" });
  const t2 = uuid();
  await cmd(t2, 1, "run.start", { assistant_id: "nested_interrupt", input: { value: "x" } });
  const s2 = await sse(t2, { channels: ["lifecycle", "input"] }, { until: terminal() });
  const r2 = s2.frames.find((f) => f.event === "input.requested");
  await cmd(t2, 2, "input.respond", { namespace: r2.data.params.namespace, interrupt_id: r2.data.params.data.interrupt_id, response: "ok" });
  await sse(t2, { channels: ["lifecycle", "input"], since: s2.frames.filter((f) => f.data).at(-1).data.seq }, { until: terminal() });
});

await scenario("v3-raw-run-start-resumes", "raw: run.start on an interrupted thread resumes it with `input` as the resume value", async () => {
  const tid = uuid();
  await cmd(tid, 1, "run.start", { assistant_id: "interrupt", input: { value: "x" } });
  await sse(tid, { channels: ["lifecycle"] }, { until: terminal() });
  await cmd(tid, 2, "run.start", { assistant_id: "interrupt", input: "yes" });
  await sse(tid, { channels: ["lifecycle", "values"] }, { until: terminal(2) });
});

await scenario("v3-raw-errors", "raw: error envelopes (unknown command, missing/unknown assistant, unsupported commands), failed run, idle stream heartbeat", async () => {
  const tid = uuid();
  await cmd(tid, 1, "nope.nothing", {});
  await cmd(tid, 2, "run.start", { input: {} });
  await cmd(tid, 3, "run.start", { assistant_id: "no-such-graph", input: {} });
  await cmd(tid, 4, "state.get", { namespace: [] });
  await cmd(tid, 5, "agent.getTree", {});
  await cmd(tid, 6, "subscription.subscribe", { channels: ["values"] });
  await fetch(`${P}/threads/${tid}`);
  await cmd(tid, 7, "run.start", { assistant_id: "fail", input: { value: "x" } });
  await sse(tid, { channels: ["lifecycle", "values"] }, { until: terminal() });
  await sse(uuid(), { channels: ["values"] }, { ms: 5600 });
});

await scenario("v3-raw-chat", "raw: chat graph, messages channel only (token deltas) then values at depth 0", async () => {
  const tid = uuid();
  await cmd(tid, 1, "run.start", { assistant_id: "chat", input: { messages: [{ role: "user", content: "hi" }] } });
  await sse(tid, { channels: ["messages", "lifecycle"] }, { until: terminal() });
  await cmd(tid, 2, "run.start", { assistant_id: "chat", input: { messages: [{ role: "user", content: [{ type: "text", text: "again" }] }] }, config: { configurable: { x: 1 } }, metadata: { m: 1 }, multitask_strategy: "enqueue", multitaskStrategy: "enqueue" });
  await sse(tid, { channels: ["values", "lifecycle"], since: 0 }, { until: terminal(2) });
});

// ---- classic runs API ---------------------------------------------------------------------------
await scenario("classic-messages-modes", "runs.stream on chat with stream_mode messages-tuple, then messages (legacy partial/complete/metadata), then events", async () => {
  await collect(client.runs.stream(null, "chat", { input: { messages: [{ role: "user", content: "hi" }] }, streamMode: "messages-tuple" }));
  await collect(client.runs.stream(null, "chat", { input: { messages: [{ role: "user", content: "hi" }] }, streamMode: "messages" }));
  await collect(client.runs.stream(null, "chat", { input: { messages: [{ role: "user", content: "hi" }] }, streamMode: ["values", "events"] }));
});

await scenario("classic-messages-hitl", "runs.stream on chat_hitl with stream_mode messages then messages-tuple, each across interrupt + resume", async () => {
  for (const mode of ["messages", "messages-tuple"]) {
    const tid = (await client.threads.create({ threadId: uuid() })).thread_id;
    await collect(client.runs.stream(tid, "chat_hitl", { input: { messages: [{ role: "user", content: "mail ann" }] }, streamMode: mode }));
    await collect(client.runs.stream(tid, "chat_hitl", { command: { resume: { decisions: [{ type: "approve" }] } }, streamMode: mode }));
  }
});

await scenario("classic-subgraphs-interrupt", "runs.stream values+updates with stream_subgraphs on nested_interrupt, getState(subgraphs), resume with input {} + command", async () => {
  const tid = (await client.threads.create({ threadId: uuid() })).thread_id;
  await collect(client.runs.stream(tid, "nested_interrupt", { input: { value: "x" }, streamMode: ["values", "updates"], streamSubgraphs: true }));
  await client.threads.getState(tid, undefined, { subgraphs: true });
  await collect(client.runs.stream(tid, "nested_interrupt", { input: {}, command: { resume: "ok" }, streamMode: ["values"], streamSubgraphs: true }));
  await client.threads.search({ metadata: { graph_id: "nested_interrupt" }, limit: 1 });
});

await scenario("classic-resumable", "runs.stream stream_resumable + on_disconnect=continue, client disconnect, joinStream with and without Last-Event-ID", async () => {
  const tid = (await client.threads.create({ threadId: uuid() })).thread_id;
  let runId;
  const ac = new AbortController();
  try {
    for await (const p of client.runs.stream(tid, "slow", { input: { value: "x", delay: 1 }, streamMode: ["values"], streamResumable: true, onDisconnect: "continue", signal: ac.signal, onRunCreated: (m) => (runId = m.run_id) }))
      if (p.event === "values") ac.abort();
  } catch {}
  const parts = await collect(client.runs.joinStream(tid, runId, { streamMode: ["values"] }));
  await collect(client.runs.joinStream(tid, runId, { streamMode: ["values"], lastEventId: parts.find((p) => p.id)?.id }));
});

await scenario("cors", "CORS preflight and a simple cross-origin request", async () => {
  await fetch(`${P}/threads/${uuid()}/commands`, { method: "OPTIONS", headers: { Origin: "http://localhost:5173", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type" } });
  await fetch(`${P}/threads/${uuid()}/stream/events`, { method: "OPTIONS", headers: { Origin: "http://localhost:5173", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type,x-api-key,authorization" } });
  await fetch(`${P}/threads/search`, { method: "POST", headers: { Origin: "http://localhost:5173", "content-type": "application/json" }, body: '{"limit":1}' });
  await fetch(`${P}/threads/${uuid()}`, { headers: { Origin: "http://localhost:5173" } });
});

// ---- real clients as subprocesses through the proxy -------------------------------------------------
function runNode(script, extra) {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [path.join(HERE, script), "--url", P, ...extra], { cwd: HERE, stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    p.stdout.on("data", (c) => (out += c));
    p.on("close", (code) => {
      if (code !== 0) {
        console.error(`${script} ${extra.join(" ")} exited ${code}:\n${out}`);
        process.exitCode = 1;
      }
      resolve();
    });
  });
}
await scenario("agui-chat", "@ag-ui/langgraph LangGraphAgent on chat (agui_check G01)", () => runNode("agui_check.mjs", ["--only", "G01"]));
await scenario("agui-hitl", "@ag-ui/langgraph LangGraphAgent on chat_hitl: interrupt then resume (agui_check G03)", () => runNode("agui_check.mjs", ["--only", "G03"]));
if (!args["no-browser"]) {
  await scenario("react-legacy-chat", "browser: useStream from @langchain/langgraph-sdk/react, two turns, reload (browser_check W01+W02)", () => runNode("browser_check.mjs", ["--only", "W01,W02"]));
  await scenario("react-legacy-hitl", "browser: useStream from @langchain/langgraph-sdk/react on chat_hitl, approve (browser_check W03)", () => runNode("browser_check.mjs", ["--only", "W03", "--no-build"]));
  await scenario("react-v3-chat", "browser: useStream from @langchain/react, two turns, reload (browser_check W11+W12)", () => runNode("browser_check.mjs", ["--only", "W11,W12", "--no-build"]));
  await scenario("react-v3-hitl", "browser: useStream from @langchain/react on chat_hitl, approve (browser_check W13)", () => runNode("browser_check.mjs", ["--only", "W13", "--no-build"]));
}

await proxy.close();
console.log(`wrote ${written.length} fixtures to ${OUT}:\n  ${written.join("\n  ")}`);

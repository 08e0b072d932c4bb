#!/usr/bin/env node
// Custom auth through the official JS SDK (@langchain/langgraph-sdk), as two users.
//
//   node auth_check.mjs --url http://127.0.0.1:2024 [--only U03] [--timeout 60] [-v]
//
// The server must host tests/server/auth_app/langgraph.json (bearer token -> user, owner
// stamped on create, owner filter; graph "whoami" reports the user it ran as). One
// "PASS|FAIL|SKIP <id> <desc>" line per check, then "N passed, M failed"; only talks to --url.
import { Client } from "@langchain/langgraph-sdk";
import { Runner, parseArgs, eq, expect, short, readSSE, postJSON, CheckFailure } from "./lib/harness.mjs";

const args = parseArgs();
const URL_ = args.url;
const R = new Runner(args);
const ALICE = { Authorization: "Bearer token-alice" };
const BOB = { Authorization: "Bearer token-bob" };
const alice = new Client({ apiUrl: URL_, defaultHeaders: ALICE });
const bob = new Client({ apiUrl: URL_, defaultHeaders: BOB });
const anon = new Client({ apiUrl: URL_ });
const statusOf = (e) => e?.status ?? e?.response?.status;

async function expectStatus(promise, status, what) {
  try {
    await promise;
  } catch (e) {
    eq(statusOf(e), status, `${what}: HTTP status`);
    return;
  }
  throw new CheckFailure(`${what}: expected HTTP ${status}, got success`);
}

const state = {};

R.add("U01", "no token: 401 on threads, runs, store", async () => {
  await expectStatus(anon.threads.search({}), 401, "threads.search");
  await expectStatus(anon.threads.create({}), 401, "threads.create");
  await expectStatus(anon.runs.wait(null, "whoami", { input: {} }), 401, "runs.wait");
  await expectStatus(anon.store.getItem(["notes"], "k"), 401, "store.getItem");
  eq((await fetch(`${URL_}/ok`)).status, 200, "/ok stays public");
});

R.add("U02", "alice creates a thread: owner stamped; her run sees her", async () => {
  const thread = await alice.threads.create({ metadata: { topic: "js" } });
  eq(thread.metadata.owner, "alice", "metadata.owner");
  state.thread = thread.thread_id;
  const out = await alice.runs.wait(thread.thread_id, "whoami", { input: { value: "js" } });
  eq(out.who.user_id, "alice", "langgraph_auth_user_id in the graph");
  eq(out.who.identity, "alice", "langgraph_auth_user['identity']");
  eq(out.who.server_user, "alice", "runtime.server_info.user");
  const runs = await alice.runs.list(thread.thread_id);
  state.run = runs[0].run_id;
});

R.add("U03", "bob cannot read alice's thread, state, history, runs: 404", async () => {
  const t = state.thread;
  await expectStatus(bob.threads.get(t), 404, "threads.get");
  await expectStatus(bob.threads.getState(t), 404, "threads.getState");
  await expectStatus(bob.threads.getHistory(t), 404, "threads.getHistory");
  await expectStatus(bob.threads.copy(t), 404, "threads.copy");
  await expectStatus(bob.runs.list(t), 404, "runs.list");
  await expectStatus(bob.runs.get(t, state.run), 404, "runs.get");
  await expectStatus(bob.runs.join(t, state.run), 404, "runs.join");
  await expectStatus(bob.runs.wait(t, "whoami", { input: {} }), 404, "runs.wait on her thread");
});

R.add("U04", "bob's searches leave alice's threads out", async () => {
  const found = await bob.threads.search({ limit: 100 });
  expect(!found.some((t) => t.thread_id === state.thread), `bob found alice's thread: ${short(found)}`);
  eq(await bob.threads.search({ metadata: { topic: "js" } }), [], "search by her metadata");
  const hers = await alice.threads.search({ metadata: { topic: "js" } });
  eq(hers.map((t) => t.thread_id), [state.thread], "alice's own search");
});

R.add("U05", "streams: bob's joinStream and v3 event stream of alice's thread are 404", async () => {
  let status;
  try {
    for await (const _ of bob.runs.joinStream(state.thread, state.run)) {
      // nothing should arrive
    }
  } catch (e) {
    status = statusOf(e);
  }
  eq(status, 404, "runs.joinStream");
  const v3 = await readSSE(`${URL_}/threads/${state.thread}/stream/events`, { body: { channels: ["values"] }, headers: BOB, ms: 1500 });
  eq(v3.status, 404, "v3 stream/events as bob");
  const own = await readSSE(`${URL_}/threads/${state.thread}/stream/events`, { body: { channels: ["values"] }, headers: ALICE, ms: 500 });
  eq(own.status, 200, "v3 stream/events as alice");
  const cmd = await postJSON(`${URL_}/threads/${state.thread}/commands`, { id: 1, method: "run.start", params: { assistant_id: "whoami", input: {} } }, BOB);
  eq(cmd.json?.type, "error", `v3 run.start as bob: ${short(cmd.json)}`);
});

R.add("U06", "store: alice's items live under her name, bob sees none", async () => {
  await alice.store.putItem(["notes"], "k", { text: "alice's" });
  const item = await alice.store.getItem(["notes"], "k");
  eq(item.namespace, ["alice", "notes"], "namespace rewritten by the handler");
  eq(await bob.store.getItem(["notes"], "k"), null, "bob's getItem");
  eq((await bob.store.searchItems(["notes"])).items, [], "bob's searchItems");
});

R.add("U07", "a handler returning False answers 403 (bob may not delete)", async () => {
  const own = await bob.threads.create({});
  await expectStatus(bob.threads.delete(own.thread_id), 403, "threads.delete");
  eq((await bob.threads.get(own.thread_id)).thread_id, own.thread_id, "still there");
});

process.exitCode = await R.run();

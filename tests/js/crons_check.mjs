#!/usr/bin/env node
// The JS SDK's crons client (@langchain/langgraph-sdk `client.crons`) against a LangGraph-compatible server.
//
//   node crons_check.mjs --url http://127.0.0.1:2024 [--only K0] [--timeout 60] [-v]
//
// One "PASS|FAIL|SKIP <id> <desc>" line per check, then "N passed, M failed"; exit 1 on failure.
// The server must host the `simple` graph. Firing on schedule is checked from Python
// (tests/server/test_server_crons.py); here: the requests and answers of every crons call.
import { Client } from "@langchain/langgraph-sdk";
import { Runner, parseArgs, expect, eq, short, CheckFailure } from "./lib/harness.mjs";

const args = parseArgs();
const client = new Client({ apiUrl: args.url });
const R = new Runner(args);
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
const FIELDS = ["assistant_id", "created_at", "cron_id", "enabled", "end_time", "metadata", "next_run_date",
  "on_run_completed", "payload", "schedule", "thread_id", "timezone", "updated_at", "user_id"];
const tag = `js-${crypto.randomUUID()}`;
let threadCron = null;
let statelessCron = null;
let threadId = null;

R.add("K01", "crons.createForThread answers a Cron bound to the thread", async () => {
  threadId = (await client.threads.create()).thread_id;
  threadCron = await client.crons.createForThread(threadId, "simple", {
    schedule: "0 0 1 1 *", input: { value: "js" }, metadata: { tag },
  });
  eq(Object.keys(threadCron).sort(), FIELDS, "cron fields");
  eq(threadCron.thread_id, threadId, "thread_id");
  eq(threadCron.schedule, "0 0 1 1 *", "schedule");
  eq(threadCron.payload.input, { value: "js" }, "payload.input");
  eq(threadCron.payload.config.configurable.cron_id, threadCron.cron_id, "payload cron_id");
  expect(threadCron.next_run_date?.endsWith("-01-01T00:00:00+00:00"), `next_run_date ${threadCron.next_run_date}`);
  eq(threadCron.enabled, true, "enabled");
});

R.add("K02", "crons.create (stateless) with a time zone, end time and onRunCompleted", async () => {
  const endTime = new Date(Date.now() + 400 * 86400_000);
  statelessCron = await client.crons.create("simple", {
    schedule: "30 9 * * *", timezone: "Europe/Paris", endTime, onRunCompleted: "keep", metadata: { tag },
  });
  eq(statelessCron.thread_id, null, "thread_id");
  eq(statelessCron.on_run_completed, "keep", "on_run_completed");
  eq(statelessCron.timezone, "Europe/Paris", "timezone");
  expect(Math.abs(new Date(statelessCron.end_time) - endTime) < 1000, `end_time ${statelessCron.end_time}`);
  const local = new Intl.DateTimeFormat("en-GB", { timeZone: "Europe/Paris", hour: "2-digit", minute: "2-digit" })
    .format(new Date(statelessCron.next_run_date));
  eq(local, "09:30", "next run, Paris time");
});

R.add("K03", "crons.search filters, sorts and selects; crons.count", async () => {
  const found = await client.crons.search({ metadata: { tag }, sortBy: "next_run_date", sortOrder: "asc" });
  eq(found.map((c) => c.cron_id), [statelessCron.cron_id, threadCron.cron_id], "search by metadata, soonest first");
  const onThread = await client.crons.search({ threadId, select: ["cron_id", "schedule"] });
  eq(onThread, [{ cron_id: threadCron.cron_id, schedule: "0 0 1 1 *" }], "search by thread, select");
  eq(await client.crons.count({ metadata: { tag } }), 2, "count by metadata");
  eq(await client.crons.count({ threadId }), 1, "count by thread");
  await expectHttpError(client.crons.search({ assistantId: "simple" }), 422, "a graph id as assistant_id");
});

R.add("K04", "crons.update changes the schedule and enabled, keeps the rest", async () => {
  const updated = await client.crons.update(threadCron.cron_id, { schedule: "15 * * * *", enabled: false });
  eq(updated.schedule, "15 * * * *", "schedule");
  eq(updated.enabled, false, "enabled");
  eq(updated.payload.input, { value: "js" }, "payload.input kept");
  eq(new Date(updated.next_run_date).getUTCMinutes(), 15, "next run minute");
  eq((await client.crons.search({ threadId, enabled: false })).length, 1, "search enabled=false");
});

R.add("K05", "crons.delete; a second delete is 404; bad schedule is 422", async () => {
  await client.crons.delete(threadCron.cron_id);
  await client.crons.delete(statelessCron.cron_id);
  await expectHttpError(client.crons.delete(threadCron.cron_id), 404, "deleting twice");
  eq(await client.crons.count({ metadata: { tag } }), 0, "count after delete");
  await expectHttpError(client.crons.create("simple", { schedule: "not a schedule" }), 422, "bad schedule");
});

R.add("K06", "/info reports crons", async () => {
  const info = await (await fetch(`${args.url}/info`)).json();
  eq(info.flags?.crons, true, `flags.crons (${short(info.flags)})`);
});

process.exit(await R.run());

#!/usr/bin/env node
// The studio (/ui, issue 16) in headless Debian Chromium through playwright-core, against a
// `stepgraph dev` hosting examples/studio.json (started by test_studio_browser.py):
//
//   node tests/ui/studio_check.mjs --url http://127.0.0.1:PORT [--only U3] [-v]
//
// U1 draw the graph (and its subgraph with xray), U2 run it: live node highlight, Send
// fan-out counts, streamed tokens, U3 answer the interrupt from its schema form, U4 fork from
// the third checkpoint with an edited value and see the branch, U5 browse the store, U6
// threads and assistants views, U7 keyboard operation and dark mode. Screenshots go to
// tests/ui/artifacts/ (git-ignored). Prints "N passed, M failed" like the tests/js checks.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Runner, parseArgs, expect, eq, short } from "../js/lib/harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..", "..");
const args = parseArgs();
const R = new Runner(args);
const ARTIFACTS = path.join(HERE, "artifacts");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const STEP_MS = Number(process.env.STUDIO_STEP_MS ?? 60000); // generous: a loaded machine renders slowly
fs.mkdirSync(ARTIFACTS, { recursive: true });

// playwright-core from ui/node_modules (scripts/build_ui.sh installs it) or tests/js/node_modules
const found = ["ui", "tests/js"].map((d) => path.join(REPO, d, "node_modules", "playwright-core", "index.mjs")).find((p) => fs.existsSync(p));
if (!found || !fs.existsSync(CHROMIUM)) {
  console.log(`FAIL U00 ${!found ? "playwright-core (npm ci in ui/)" : `chromium at ${CHROMIUM}`} missing`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}
const { chromium } = await import(pathToFileURL(found).href);
const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--metrics-recording-only", "--disable-default-apps"],
});

const api = async (method, p, body) => {
  const res = await fetch(args.url + p, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
};

async function openStudio(hash, { dark = false } = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, colorScheme: dark ? "dark" : "light" });
  const page = await context.newPage();
  pages.add(page);
  const problems = [];
  const outside = [];
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && problems.push(`console.error: ${m.text()}`));
  page.on("response", (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()} ${r.request().method()} ${r.url()}`));
  page.on("request", (r) => {
    if (!r.url().startsWith(args.url)) outside.push(r.url());
  });
  await page.goto(`${args.url}/ui/#${hash}`);
  await page.waitForSelector("[data-testid=graph-svg], [aria-label=threads], [aria-label=store]", { timeout: STEP_MS });
  return { context, page, problems, outside };
}
const shot = (page, name) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
const clean = ({ problems, outside }) => {
  expect(problems.length === 0, `browser problems: ${short(problems, 800)}`);
  expect(outside.length === 0, `requests beyond the server: ${short(outside)}`);
};
const idle = (page) => page.waitForSelector("[data-testid=run-status][data-running='0'], .chat form button:not([disabled])", { timeout: STEP_MS });
async function runDone(page) {
  await page.waitForFunction(() => !document.querySelector(".chat form button[disabled]") && !document.querySelector("[data-running='1']"), null, { timeout: STEP_MS });
}
const attr = (page, sel, name) => page.$eval(sel, (e, n) => e.getAttribute(n), name);

// a failing check leaves a screenshot of the page it failed on
const pages = new Set();
const opened = new Set(); // contexts, closed after the failure screenshot
const lastShot = async (id) => {
  for (const p of pages) await p.screenshot({ path: path.join(ARTIFACTS, `failed-${id}.png`), fullPage: true }).catch(() => {});
};
const add = (id, desc, fn) => R.add(id, desc, async () => {
  try {
    await fn();
  } catch (e) {
    await lastShot(id);
    throw e;
  } finally {
    pages.clear();
    for (const c of opened) await c.close().catch(() => {});
    opened.clear();
  }
});

const shared = {}; // the thread of U2, used by U3 and U4

add("U1", "graph drawn: nodes, conditional edge, subgraph expanded with xray", async () => {
  const s = await openStudio("view=graph&assistant=studio");
  try {
    const { page } = s;
    await page.waitForSelector("[data-node=chat]", { timeout: STEP_MS });
    const nodes = await page.$$eval("[data-node]", (els) => els.map((e) => e.dataset.node).sort());
    eq(nodes, ["__end__", "__start__", "answer", "chat", "research", "review"], "nodes");
    expect(await page.$("[data-edge='chat->research'].conditional"), "the Send edge chat->research drawn dashed (conditional)");
    await shot(page, "studio-graph");
    await page.getByLabel("expand subgraphs (xray)").check();
    await page.waitForSelector("[data-node='research:search']", { timeout: STEP_MS });
    expect(await page.$("[data-subgraph=research]"), "the research subgraph boxed");
    expect(await page.$("[data-edge='research:search->research:write']"), "the subgraph's own edge");
    await shot(page, "studio-graph-xray");
    clean(s);
  } finally {
    opened.add(s.context);
  }
});

add("U2", "run from the chat view: live node highlight, Send counts, streamed tokens, tool call", async () => {
  const s = await openStudio("view=graph&assistant=studio");
  try {
    const { page } = s;
    await page.waitForSelector("#chat-input", { timeout: STEP_MS });
    // slower tokens for this run (the graph reads configurable.token_pause_s), so that the
    // page can be seen mid-run
    await page.getByRole("tab", { name: "Run" }).click();
    await page.click("text=Run config (JSON: config, context)");
    await page.getByLabel("config / context").fill('{"config": {"configurable": {"token_pause_s": 1.0}}}');
    await page.getByRole("tab", { name: "Chat" }).click();
    await page.fill("#chat-input", "owls");
    await page.keyboard.press("Enter");
    // the node running now is highlighted while it runs, its tokens arrive one by one
    await page.waitForSelector("[data-node=chat][data-active=true]", { timeout: STEP_MS });
    await page.waitForSelector("[data-testid=streaming]", { timeout: STEP_MS });
    const partial = await page.textContent("[data-testid=streaming] .text");
    await shot(page, "studio-run-live");
    expect(partial.length > 0 && "Let me look into owls.".startsWith(partial), `streamed tokens on screen (${JSON.stringify(partial)})`);
    await runDone(page);
    const seen = (await attr(page, "[data-testid=graph-svg]", "data-seen")).split(",");
    for (const n of ["chat", "research"]) expect(seen.includes(n), `${n} was highlighted (seen: ${seen})`);
    eq(await attr(page, "[data-node=research]", "data-count"), "3", "research tasks (Send fan-out)");
    expect(await page.$("[data-node=research] .count"), "the fan-out count drawn on the node");
    const msgs = await page.$$eval("[data-testid=message]", (els) => els.map((e) => ({ type: e.dataset.type, text: e.querySelector(".text").textContent, chunks: Number(e.dataset.chunks) })));
    eq(msgs.map((m) => m.type), ["human", "ai"], "message types");
    eq(msgs[1].text, "Let me look into owls.", "streamed answer");
    expect(msgs[1].chunks > 1, `the answer arrived as streamed tokens (${msgs[1].chunks} chunks)`);
    expect((await page.textContent("[data-testid=tool-call]")).includes("research"), "tool call shown");
    await page.waitForSelector("[data-testid=interrupt]", { timeout: STEP_MS });
    expect(await page.$("[data-node=review].paused"), "the interrupted node marked on the graph");
    shared.thread = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get("thread"));
    expect(shared.thread, "the run's thread in the URL");
    await shot(page, "studio-run-interrupted");
    clean(s);
  } finally {
    opened.add(s.context);
  }
});

add("U3", "answer the interrupt with the form of its schema; the run resumes and streams", async () => {
  expect(shared.thread, "U2 made a thread");
  const s = await openStudio(`view=graph&assistant=studio&thread=${shared.thread}`);
  try {
    const { page } = s;
    const form = await page.waitForSelector("[data-testid=resume-form]", { timeout: STEP_MS });
    expect((await page.textContent("[data-testid=interrupt]")).includes("Approve 6 notes on owls?"), "interrupt value shown");
    expect(await form.$("input[type=checkbox][name=approved]"), "a checkbox for the boolean `approved`");
    await form.$eval("input[name=comment]", (e) => e.focus());
    await page.keyboard.type("looks good");
    await shot(page, "studio-interrupt-form");
    await form.$eval("button[type=submit]", (b) => b.click());
    await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=message]")].some((m) => m.textContent.includes("Summary of owls")), null, { timeout: STEP_MS });
    await runDone(page);
    const msgs = await page.$$eval("[data-testid=message]", (els) => els.map((e) => ({ type: e.dataset.type, text: e.querySelector(".text").textContent, chunks: Number(e.dataset.chunks) })));
    eq(msgs.map((m) => m.type), ["human", "ai", "tool", "ai"], "message types");
    eq(msgs[3].text, "Summary of owls: 6 notes approved.", "final answer");
    expect(msgs[3].chunks > 1, "final answer streamed");
    eq(await page.$("[data-testid=interrupt]"), null, "interrupt answered");
    const state = await api("GET", `/threads/${shared.thread}/state`);
    eq([state.values.approved, state.values.comment], [true, "looks good"], "resume value reached the graph");
    await shot(page, "studio-interrupt-answered");
    clean(s);
  } finally {
    opened.add(s.context);
  }
});

add("U4", "fork from the third checkpoint with an edited value, run it, see the branch", async () => {
  expect(shared.thread, "U2 made a thread");
  const s = await openStudio(`view=graph&assistant=studio&thread=${shared.thread}`);
  try {
    const { page } = s;
    await page.getByRole("tab", { name: "Timeline" }).click();
    await page.waitForSelector("[data-testid=checkpoint][data-index='2']", { timeout: STEP_MS });
    const before = await page.$$eval("[data-testid=checkpoint]", (els) => els.length);
    eq(await attr(page, "[data-testid=checkpoints]", "data-branches"), "1", "one branch before the fork");
    await page.click("[data-testid=checkpoint][data-index='2']");
    await page.waitForSelector("[data-testid=checkpoint][data-index='2'][aria-pressed=true]");
    const third = await attr(page, "[data-testid=checkpoint][data-index='2']", "data-checkpoint");
    expect((await page.textContent("[data-testid=diff]")).includes("topic"), "the diff of the third checkpoint names `topic`");
    await page.selectOption("#fork-key", "topic");
    await page.fill("[data-testid=fork-value]", '"forked owls"');
    await page.selectOption("#fork-as-node", "chat");
    await shot(page, "studio-fork-edit");
    await page.click("[data-testid=fork-run]");
    await page.waitForSelector("[data-testid=interrupt]", { timeout: STEP_MS });
    expect((await page.textContent("[data-testid=interrupt]")).includes("forked owls"), "the branch ran with the edited value");
    await page.waitForFunction((n) => document.querySelectorAll("[data-testid=checkpoint]").length > n, before, { timeout: STEP_MS });
    const lanes = Number(await attr(page, "[data-testid=checkpoints]", "data-branches"));
    expect(lanes >= 2, `a second branch in the timeline (${lanes})`);
    const branch = await page.$$eval("li[data-branch='1'] [data-testid=checkpoint]", (els) => els.length);
    expect(branch >= 2, `the new branch's checkpoints listed (${branch})`);
    const history = await api("POST", `/threads/${shared.thread}/history`, { limit: 50 });
    const forked = history.filter((h) => h.parent_checkpoint?.checkpoint_id === third);
    eq(forked.length, 2, "the third checkpoint has two children (old and new branch)");
    await shot(page, "studio-fork-branch");
    // replay the original branch from its fourth checkpoint (next: review): a third branch
    const fourth = await page.$eval("li[data-branch='0'] [data-testid=checkpoint][data-index='3']", (e) => e.dataset.checkpoint);
    await page.click(`[data-checkpoint='${fourth}']`);
    await page.waitForSelector(`[data-checkpoint='${fourth}'][aria-pressed=true]`);
    await page.click("[data-testid=replay]");
    await page.waitForFunction(() => Number(document.querySelector("[data-testid=checkpoints]")?.dataset.branches) >= 3, null, { timeout: STEP_MS });
    const replayed = (await api("POST", `/threads/${shared.thread}/history`, { limit: 50 })).filter((h) => h.parent_checkpoint?.checkpoint_id === fourth);
    eq(replayed.length, 2, "the replayed checkpoint has two children");
    await page.waitForSelector("[data-testid=interrupt]", { timeout: STEP_MS });
    expect((await page.textContent("[data-testid=interrupt]")).includes("on owls?"), "the replay asks about the original topic");
    await shot(page, "studio-replay");
    clean(s);
  } finally {
    opened.add(s.context);
  }
});

add("U5", "browse the store: namespaces, items, search with a filter", async () => {
  await api("PUT", "/store/items", { namespace: ["studio", "notes"], key: "owl", value: { text: "owls hoot", kind: "bird" } });
  await api("PUT", "/store/items", { namespace: ["studio", "notes"], key: "cat", value: { text: "cats purr", kind: "mammal" } });
  await api("PUT", "/store/items", { namespace: ["users", "ann"], key: "prefs", value: { theme: "dark" } });
  const s = await openStudio("view=store");
  try {
    const { page } = s;
    await page.waitForSelector("[data-namespace='studio/notes']", { timeout: STEP_MS });
    expect(await page.$("[data-namespace='users/ann']"), "both namespaces listed");
    await page.click("[data-namespace='studio/notes']");
    await page.waitForSelector("[data-testid=items] tr[data-key=owl]", { timeout: STEP_MS });
    eq((await page.$$eval("[data-testid=items] tbody tr", (r) => r.map((x) => x.dataset.key))).sort(), ["cat", "owl"], "items of studio/notes");
    await shot(page, "studio-store");
    await page.getByLabel("Filter (JSON)").fill('{"kind": "bird"}');
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=items] tbody tr").length === 1, null, { timeout: STEP_MS });
    eq(await page.$$eval("[data-testid=items] tbody tr", (r) => r.map((x) => x.dataset.key)), ["owl"], "filtered items");
    clean(s);
  } finally {
    opened.add(s.context);
  }
});

add("U6", "threads (search, copy, delete) and assistants (edit config: a new version)", async () => {
  expect(shared.thread, "U2 made a thread");
  const s = await openStudio("view=threads");
  try {
    const { page } = s;
    await page.waitForSelector(`tr[data-thread='${shared.thread}']`, { timeout: STEP_MS });
    await page.selectOption("#thread-status", "interrupted");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=thread-table] tbody tr").length >= 1, null, { timeout: STEP_MS });
    const statuses = await page.$$eval("[data-testid=thread-table] tbody tr td:nth-child(2)", (t) => t.map((x) => x.textContent));
    expect(statuses.every((x) => x === "interrupted"), `only interrupted threads (${statuses})`);
    await page.selectOption("#thread-status", "");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    const count = () => page.$$eval("[data-testid=thread-table] tbody tr", (r) => r.length);
    await page.waitForSelector(`tr[data-thread='${shared.thread}']`, { timeout: STEP_MS });
    const n = await count();
    await page.click(`tr[data-thread='${shared.thread}'] >> text=Copy`);
    await page.waitForFunction((k) => document.querySelectorAll("[data-testid=thread-table] tbody tr").length === k + 1, n, { timeout: STEP_MS });
    await shot(page, "studio-threads");
    const copy = await page.$$eval("[data-testid=thread-table] tbody tr", (r, t) => r.map((x) => x.dataset.thread).find((x) => x !== t), shared.thread);
    await page.click(`tr[data-thread='${copy}'] >> text=Delete`);
    await page.waitForFunction((k) => document.querySelectorAll("[data-testid=thread-table] tbody tr").length === k, n, { timeout: STEP_MS });
    await page.getByRole("button", { name: "Assistants" }).click();
    await page.waitForSelector("#assistant-name", { timeout: STEP_MS });
    await page.selectOption("#assistant-select", { label: "studio" });
    await page.getByLabel("Config (JSON)").fill('{"configurable": {"tone": "dry"}}');
    await page.getByRole("button", { name: "Save (new version)" }).click();
    await page.waitForSelector("text=saved as a new version", { timeout: STEP_MS });
    await page.waitForSelector("text=2 (latest)", { timeout: STEP_MS });
    await shot(page, "studio-assistants");
    clean(s);
  } finally {
    opened.add(s.context);
  }
});

add("U7", "keyboard: a breakpoint set on a node with the keyboard pauses the run; dark mode", async () => {
  const s = await openStudio("view=graph&assistant=simple", { dark: true });
  try {
    const { page } = s;
    await page.waitForSelector("[data-node=b]", { timeout: STEP_MS });
    await page.focus("[data-node=b]");
    await page.keyboard.press("Enter");
    await page.getByLabel("Interrupt before").focus();
    await page.keyboard.press("Space");
    expect(await page.getByLabel("Interrupt before").isChecked(), "breakpoint set from the keyboard");
    // the panes are tabs: arrow keys move between them
    await page.getByRole("tab", { name: "Run" }).focus();
    await page.keyboard.press("ArrowRight");
    eq(await page.getByRole("tab", { name: "Timeline" }).getAttribute("aria-selected"), "true", "ArrowRight selects Timeline");
    await page.keyboard.press("ArrowLeft");
    eq(await page.getByRole("tab", { name: "Run" }).getAttribute("aria-selected"), "true", "ArrowLeft selects Run again");
    await page.fill("[data-testid=input-form] input[name=value]", "x");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.waitForSelector("[data-testid=continue]", { timeout: STEP_MS });
    expect((await page.textContent("[aria-label=paused]")).includes("b"), "paused before b");
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg !== "rgb(255, 255, 255)", `dark background (${bg})`);
    await shot(page, "studio-breakpoint-dark");
    await page.click("[data-testid=continue]");
    await page.waitForFunction(() => !document.querySelector("[data-testid=continue]") && document.querySelector("[data-running='0']"), null, { timeout: STEP_MS });
    clean(s);
  } finally {
    opened.add(s.context);
  }
});

add("U8", "cancel a running run from the Run pane", async () => {
  const s = await openStudio("view=graph&assistant=slow");
  try {
    const { page } = s;
    await page.getByRole("tab", { name: "Run" }).click();
    await page.fill("[data-testid=input-form] input[name=delay]", "30");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.waitForSelector("[data-node=nap][data-active=true]", { timeout: STEP_MS });
    await shot(page, "studio-cancel-running");
    await page.click("[data-testid=cancel]");
    await page.waitForSelector("[data-testid=run-status][data-running='0']", { timeout: STEP_MS });
    const thread = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get("thread"));
    const runs = await api("GET", `/threads/${thread}/runs`);
    eq(runs.length, 1, "one run");
    expect(["interrupted", "error"].includes(runs[0].status), `the run was cancelled (status ${runs[0].status})`);
    clean(s);
  } finally {
    opened.add(s.context);
  }
});

add("U9", "an interrupt inside a subgraph: nested subgraph checkpoint in the timeline, answered as JSON", async () => {
  const s = await openStudio("view=graph&assistant=nested_interrupt");
  try {
    const { page } = s;
    await page.getByRole("tab", { name: "Run" }).click();
    await page.fill("[data-testid=input-form] input[name=value]", "v");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.waitForSelector("[data-testid=interrupt] [data-testid=resume-json]", { timeout: STEP_MS });
    expect((await page.textContent("[data-testid=interrupt]")).includes("inner?"), "the subgraph's interrupt value shown");
    await page.getByRole("tab", { name: "Timeline" }).click();
    const last = await page.$$eval("[data-testid=checkpoint]", (els) => els.length - 1);
    await page.click(`[data-testid=checkpoint][data-index='${last}']`);
    await page.waitForSelector("[data-testid=subgraph-state]", { timeout: STEP_MS });
    expect((await page.textContent("[data-testid=subgraph-state]")).includes("next: gate"), "the subgraph's own checkpoint (next: gate) nested under its task");
    await shot(page, "studio-subgraph-checkpoint");
    await page.fill("[data-testid=resume-json]", '"yes"');
    await page.click("[data-testid=interrupt] button[type=submit]");
    await page.waitForFunction(() => !document.querySelector("[data-testid=interrupt]"), null, { timeout: STEP_MS });
    const thread = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get("thread"));
    await page.waitForFunction((n) => document.querySelectorAll("[data-testid=checkpoint]").length > n, last + 1, { timeout: STEP_MS });
    const state = await api("GET", `/threads/${thread}/state`);
    expect(String(state.values.value).includes("[yes]"), `resumed inside the subgraph (${state.values.value})`);
    clean(s);
  } finally {
    opened.add(s.context);
  }
});

let code = 1;
try {
  code = await R.run();
} finally {
  await browser.close().catch(() => {});
}
process.exitCode = code;

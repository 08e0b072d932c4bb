#!/usr/bin/env node
// The studio, served by stepgraph, pointed at ANOTHER LangGraph-API server (the page's
// `?api=`): by default the real `langgraph dev` of tests/js/run_real_langgraph_dev.sh. A manual
// check (not run by pytest: it needs langgraph-cli[inmem] installed).
//
//   VENV=/tmp/lgdev PORT=2126 tests/js/run_real_langgraph_dev.sh &     # LangGraph's own server
//   stepgraph dev --config examples/studio.json --port 2024 &          # serves the page
//   node tests/ui/langgraph_server_check.mjs --page http://127.0.0.1:2024 --url http://127.0.0.1:2126
//
// L1 draw `nested` (xray), L2 run `simple` from the input form (events, highlight), L3 chat_hitl:
// interrupt answered as JSON, L4 fork from the third checkpoint and see the branch, L5 store.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Runner, parseArgs, expect, eq, short } from "../js/lib/harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "..", "..");
const args = parseArgs();
const R = new Runner(args);
const PAGE = String(args.page || "http://127.0.0.1:2024").replace(/\/$/, "");
const ARTIFACTS = path.join(HERE, "artifacts");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const STEP_MS = 30000;
fs.mkdirSync(ARTIFACTS, { recursive: true });
const found = ["ui", "tests/js"].map((d) => path.join(REPO, d, "node_modules", "playwright-core", "index.mjs")).find((p) => fs.existsSync(p));
const { chromium } = await import(pathToFileURL(found).href);
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"] });
const api = async (method, p, body) => {
  const res = await fetch(args.url + p, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
};
async function open(hash) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => m.type() === "error" && problems.push(`console.error: ${m.text()}`));
  await page.goto(`${PAGE}/ui/?api=${encodeURIComponent(args.url)}#${hash}`);
  return { context, page, problems };
}
const shot = (page, name) => page.screenshot({ path: path.join(ARTIFACTS, `langgraph-${name}.png`), fullPage: true });
const clean = (problems) => expect(problems.length === 0, `browser problems: ${short(problems, 800)}`);
async function check(hash, fn) {
  const s = await open(hash);
  try {
    await fn(s.page);
    clean(s.problems);
  } catch (e) {
    await s.page.screenshot({ path: path.join(ARTIFACTS, "langgraph-failed.png"), fullPage: true }).catch(() => {});
    throw e;
  } finally {
    await s.context.close();
  }
}
const shared = {};

R.add("L1", "nested drawn from LangGraph's /graph, subgraph with xray", () => check("view=graph&assistant=nested", async (page) => {
  await page.waitForSelector("[data-node=child]", { timeout: STEP_MS });
  await page.getByLabel("expand subgraphs (xray)").check();
  await page.waitForSelector("[data-subgraph]", { timeout: STEP_MS });
  await shot(page, "nested-xray");
}));

R.add("L2", "simple run from the input form: events and highlighted nodes", () => check("view=graph&assistant=simple", async (page) => {
  await page.waitForSelector("[data-node=a]", { timeout: STEP_MS });
  await page.getByRole("tab", { name: "Run" }).click();
  await page.fill("[data-testid=input-form] input[name=value]", "x");
  await page.getByRole("button", { name: "Run", exact: true }).click();
  await page.waitForSelector("[data-testid=run-status][data-running='0'][data-testid]", { timeout: STEP_MS });
  await page.waitForFunction(() => document.querySelector("[data-testid=run-status]").textContent === "finished", null, { timeout: STEP_MS });
  const seen = (await page.$eval("[data-testid=graph-svg]", (e) => e.dataset.seen)).split(",");
  expect(seen.includes("a") && seen.includes("b"), `a and b highlighted (${seen})`);
  const modes = await page.$$eval("[data-testid=events] li", (els) => els.map((e) => e.dataset.mode));
  expect(modes.includes("updates"), `updates events (${modes})`);
  await shot(page, "simple-run");
}));

R.add("L3", "chat_hitl: streamed chat, interrupt answered as JSON", () => check("view=graph&assistant=chat_hitl", async (page) => {
  await page.waitForSelector("#chat-input", { timeout: STEP_MS });
  await page.fill("#chat-input", "hi");
  await page.keyboard.press("Enter");
  await page.waitForSelector("[data-testid=resume-json]", { timeout: STEP_MS });
  shared.thread = await page.evaluate(() => new URLSearchParams(location.hash.slice(1)).get("thread"));
  await page.fill("[data-testid=resume-json]", '{"decisions": [{"type": "approve"}]}');
  await page.click("[data-testid=interrupt] button[type=submit]");
  await page.waitForFunction(() => [...document.querySelectorAll("[data-testid=message]")].some((m) => m.textContent.includes("decision: approve")), null, { timeout: STEP_MS });
  const types = await page.$$eval("[data-testid=message]", (els) => els.map((e) => e.dataset.type));
  eq(types, ["human", "ai", "tool", "ai"], "messages");
  await shot(page, "chat-hitl");
}));

R.add("L4", "fork chat_hitl's thread from its third checkpoint and see the branch", () => check(`view=graph&assistant=chat_hitl&thread=${shared.thread}`, async (page) => {
  expect(shared.thread, "L3 made a thread");
  await page.waitForSelector("[data-testid=message]", { timeout: STEP_MS });
  await page.getByRole("tab", { name: "Timeline" }).click();
  await page.click("[data-testid=checkpoint][data-index='2']");
  await page.selectOption("#fork-key", "messages");
  await page.fill("[data-testid=fork-value]", '[{"type": "human", "content": "forked"}]');
  await page.click("[data-testid=fork]");
  await page.waitForFunction(() => Number(document.querySelector("[data-testid=checkpoints]").dataset.branches) >= 2, null, { timeout: STEP_MS });
  await shot(page, "fork");
}));

R.add("L5", "store namespaces and items", async () => {
  await api("PUT", "/store/items", { namespace: ["lg", "notes"], key: "k1", value: { text: "from langgraph" } });
  await check("view=store", async (page) => {
    await page.waitForSelector("[data-namespace='lg/notes']", { timeout: STEP_MS });
    await page.click("[data-namespace='lg/notes']");
    await page.waitForSelector("[data-testid=items] tr[data-key=k1]", { timeout: STEP_MS });
    await shot(page, "store");
  });
});

let code = 1;
try {
  code = await R.run();
} finally {
  await browser.close().catch(() => {});
}
process.exitCode = code;

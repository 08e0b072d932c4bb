#!/usr/bin/env node
// The Vite page of web/ (useStream from @langchain/langgraph-sdk/react and from @langchain/react)
// driven in headless Debian Chromium (apt-get install chromium) through playwright-core — no
// browser download. The page is served from its own loopback origin, so every API call is a
// cross-origin request (CORS preflight included), as in a real deployment.
//
//   node browser_check.mjs --url http://127.0.0.1:2024 [--only W0] [--no-build] [-v]
//
// Checks per hook: chat (streamed answer), a second turn, reload from history, and a chat_hitl
// interrupt approved from the page. Screenshots go to tests/js/artifacts/ (git-ignored).
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { Runner, parseArgs, expect, eq, short } from "./lib/harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const args = parseArgs();
const R = new Runner(args);
const ARTIFACTS = path.join(HERE, "artifacts");
const DIST = path.join(HERE, "web", "dist");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const STEP_MS = 20000;
fs.mkdirSync(ARTIFACTS, { recursive: true });

if (!args["no-build"] || !fs.existsSync(path.join(DIST, "index.html"))) {
  const b = spawnSync(process.execPath, [path.join(HERE, "node_modules", "vite", "bin", "vite.js"), "build", path.join(HERE, "web")], {
    cwd: HERE,
    stdio: args.verbose ? "inherit" : "pipe",
  });
  if (b.status !== 0) {
    console.error(String(b.stderr ?? ""));
    console.log("FAIL W00 vite build of web/");
    console.log("0 passed, 1 failed");
    process.exit(1);
  }
}
if (!fs.existsSync(CHROMIUM)) {
  console.log(`FAIL W00 chromium at ${CHROMIUM} (apt-get install chromium)`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}

// ---- static server for web/dist on its own loopback origin ---------------------------------
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".json": "application/json" };
const server = http.createServer((req, res) => {
  const u = new URL(req.url, "http://x");
  let p = path.normalize(path.join(DIST, decodeURIComponent(u.pathname)));
  if (!p.startsWith(DIST)) return res.writeHead(403).end();
  if (!fs.existsSync(p) || fs.statSync(p).isDirectory()) p = path.join(DIST, "index.html");
  res.writeHead(200, { "content-type": TYPES[path.extname(p)] ?? "application/octet-stream" });
  fs.createReadStream(p).pipe(res);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const PAGE = `http://127.0.0.1:${server.address().port}/`;

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--metrics-recording-only", "--disable-default-apps"],
});

async function openPage(hook, graph, thread) {
  const context = await browser.newContext({ viewport: { width: 900, height: 700 } });
  const page = await context.newPage();
  const problems = [];
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console.error: ${m.text()}`);
  });
  page.on("requestfailed", (r) => {
    const f = r.failure()?.errorText ?? "";
    if (!/ERR_ABORTED/.test(f)) problems.push(`requestfailed: ${r.method()} ${r.url()} ${f}`);
  });
  const q = new URLSearchParams({ api: args.url, hook, graph, ...(thread ? { thread } : {}) });
  await page.goto(`${PAGE}?${q}`);
  await page.waitForSelector("#msg", { timeout: STEP_MS });
  return { context, page, problems };
}
const shot = (page, name) => page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
async function messages(page) {
  return page.$$eval("[data-testid=message]", (els) => els.map((e) => ({ type: e.dataset.type, text: e.textContent.replace(/^[^:]*:\s*/, "") })));
}
async function waitMessages(page, pred, what) {
  try {
    await page.waitForFunction(
      (src) => {
        const msgs = [...document.querySelectorAll("[data-testid=message]")].map((e) => ({ type: e.dataset.type, text: e.textContent.replace(/^[^:]*:\s*/, "") }));
        const busy = document.querySelector("#status")?.dataset.loading === "1";
        return !busy && new Function("msgs", `return (${src})(msgs)`)(msgs);
      },
      pred.toString(),
      { timeout: STEP_MS },
    );
  } catch {
    const err = await page.$eval("#error", (e) => e.textContent).catch(() => "");
    throw new Error(`timed out waiting for ${what}; messages ${short(await messages(page))}${err ? `; page error ${err}` : ""}`);
  }
}
async function send(page, text) {
  await page.fill("#msg", text);
  await page.click("#send");
}
const threadIdOf = (page) => page.$eval("#thread-id", (e) => e.textContent.trim());
const noProblems = (problems) => expect(problems.length === 0, `browser problems: ${short(problems, 800)}`);
const texts = (msgs) => msgs.map((m) => `${m.type}:${m.text}`);

for (const [hook, label] of [["legacy", "useStream (@langchain/langgraph-sdk/react)"], ["v3", "useStream (@langchain/react)"]]) {
  const P = hook === "legacy" ? "W0" : "W1";
  const state = {};
  R.add(`${P}1`, `${label}: chat answer, then a second turn`, async () => {
    const { context, page, problems } = await openPage(hook, "chat");
    try {
      await send(page, "hi");
      await waitMessages(page, (m) => m.length >= 2 && m[1].text.includes("hello from chat"), "the answer");
      await shot(page, `${hook}-chat-turn1`);
      await send(page, "again");
      await waitMessages(page, (m) => m.length >= 4 && m[3].text.includes("hello from chat"), "the second answer");
      await shot(page, `${hook}-chat-turn2`);
      eq(texts(await messages(page)), ["human:hi", "ai:hello from chat", "human:again", "ai:hello from chat"], "messages");
      state.thread = await threadIdOf(page);
      expect(/^[0-9a-f-]{36}$/.test(state.thread), `thread id shown: ${state.thread}`);
      expect(page.url().includes(`thread=${state.thread}`), `thread id not in the URL: ${page.url()}`);
      state.url = page.url();
      noProblems(problems);
    } finally {
      await context.close();
    }
  });
  R.add(`${P}2`, `${label}: reload re-opens the thread from its history`, async () => {
    expect(state.url, "needs the thread of the previous check");
    const { context, page, problems } = await openPage(hook, "chat", state.thread);
    try {
      await waitMessages(page, (m) => m.length >= 4, "the thread's messages after a reload");
      eq(texts(await messages(page)), ["human:hi", "ai:hello from chat", "human:again", "ai:hello from chat"], "messages after reload");
      eq(await threadIdOf(page), state.thread, "thread id after reload");
      await shot(page, `${hook}-chat-reloaded`);
      await send(page, "third");
      await waitMessages(page, (m) => m.length >= 6, "a third turn on the reloaded thread");
      noProblems(problems);
    } finally {
      await context.close();
    }
  });
  R.add(`${P}3`, `${label}: chat_hitl interrupt shown, approved from the page, survives a reload`, async () => {
    const { context, page, problems } = await openPage(hook, "chat_hitl");
    try {
      await send(page, "mail ann");
      await page.waitForSelector("#interrupt", { timeout: STEP_MS });
      const shown = await page.$eval("#interrupt", (e) => e.textContent);
      expect(shown.includes("send_email to ann@example.com"), `interrupt panel: ${shown}`);
      await shot(page, `${hook}-hitl-interrupt`);
      const thread = await threadIdOf(page);
      // the interrupt also survives a reload (hydrated from the thread state)
      const again = await openPage(hook, "chat_hitl", thread);
      try {
        await again.page.waitForSelector("#interrupt", { timeout: STEP_MS });
        noProblems(again.problems);
      } finally {
        await again.context.close();
      }
      await page.click("#approve");
      await waitMessages(page, (m) => m.some((x) => x.type === "ai" && x.text.includes("decision: approve")), "the answer after approval");
      await shot(page, `${hook}-hitl-approved`);
      const msgs = await messages(page);
      eq(msgs.map((m) => m.type), ["human", "ai", "tool", "ai"], "message types");
      expect(msgs[1].text.includes("send_email"), `tool call rendered: ${short(msgs[1])}`);
      eq(await page.$("#interrupt"), null, "interrupt panel gone");
      noProblems(problems);
    } finally {
      await context.close();
    }
  });
}

let code = 1;
try {
  code = await R.run();
} finally {
  await browser.close().catch(() => {});
  server.closeAllConnections?.();
  server.close();
}
process.exitCode = code;

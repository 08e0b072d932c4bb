#!/usr/bin/env node
// LangChain's agent-chat-ui (the Next.js template of npm `create-agent-chat-app`, built by
// setup.sh with `next build`, source unchanged) served by `next start` on loopback and driven in
// headless Debian Chromium through playwright-core (no browser download) against a
// LangGraph-compatible server.
//
//   node tests/js/agent_chat_ui/agent_chat_ui_check.mjs --url http://127.0.0.1:2024 [--only U0] [-v]
//
// Run setup.sh first. The server is passed with the app's own `apiUrl` / `assistantId` URL
// parameters (its build-time NEXT_PUBLIC_* defaults point at a fixed URL, and this template's
// thread-history sidebar reads only the URL parameters). Screenshots: tests/js/artifacts/acu-*.png.
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { Runner, parseArgs, expect, eq, short, skip, sleep } from "../lib/harness.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const APP = path.join(HERE, "work", "web");
const ARTIFACTS = path.join(HERE, "..", "artifacts");
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const STEP_MS = 30000;
const args = parseArgs();
const R = new Runner(args);
fs.mkdirSync(ARTIFACTS, { recursive: true });

function bail(msg) {
  console.log(`FAIL U00 ${msg}`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}
if (!fs.existsSync(path.join(APP, ".next", "BUILD_ID"))) bail(`no agent-chat-ui build in ${APP} (run tests/js/agent_chat_ui/setup.sh)`);
if (!fs.existsSync(CHROMIUM)) bail(`chromium at ${CHROMIUM} (apt-get install chromium)`);
const { chromium } = createRequire(path.join(HERE, "..", "package.json"))("playwright-core");

// ---- `next start` on a free loopback port ----------------------------------------------------
const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
const port = await freePort();
const PAGE = `http://127.0.0.1:${port}/`;
const next = spawn(process.execPath, [path.join(APP, "node_modules", "next", "dist", "bin", "next"), "start", "-H", "127.0.0.1", "-p", String(port)], {
  cwd: APP,
  env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
  stdio: ["ignore", "pipe", "pipe"],
  detached: true,
});
let nextLog = "";
next.stdout.on("data", (d) => (nextLog += d));
next.stderr.on("data", (d) => (nextLog += d));
const stopNext = () => {
  try {
    process.kill(-next.pid, "SIGTERM");
  } catch {}
};
process.on("exit", stopNext);
for (let i = 0; ; i++) {
  try {
    if ((await fetch(PAGE)).ok) break;
  } catch {}
  if (i > 300 || next.exitCode !== null) {
    stopNext();
    bail(`next start did not answer on ${PAGE}: ${short(nextLog, 1500)}`);
  }
  await sleep(100);
}

const browser = await chromium.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--metrics-recording-only", "--disable-default-apps"],
});

// ---- helpers ---------------------------------------------------------------------------------
async function openPage(query) {
  // >= 1024px wide: the thread-history sidebar is shown inline (lg:flex)
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
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
  // only loopback: anything else (a font CDN, telemetry) is refused and reported
  await context.route((u) => !/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(u.hostname), (route) => {
    problems.push(`non-loopback request: ${route.request().url()}`);
    return route.abort();
  });
  const q = query === null ? "" : `?${new URLSearchParams(query)}`;
  await page.goto(`${PAGE}${q}`);
  return { context, page, problems };
}
const appQuery = (assistantId, extra = {}) => ({ apiUrl: args.url, assistantId, chatHistoryOpen: "true", ...extra });
const shot = (page, name) => page.screenshot({ path: path.join(ARTIFACTS, `acu-${name}.png`), fullPage: true });
const INPUT = 'textarea[placeholder="Type your message..."]';
async function send(page, text) {
  await page.waitForSelector(INPUT, { timeout: STEP_MS });
  await page.fill(INPUT, text);
  await page.click('button[type=submit]:has-text("Send")');
}
const count = (hay, needle) => hay.split(needle).length - 1;
async function waitText(page, pred, what) {
  const t0 = Date.now();
  let last = "";
  while (Date.now() - t0 < STEP_MS) {
    last = await page.evaluate(() => document.body.innerText);
    const idle = (await page.$('button[type=submit]:has-text("Send")')) !== null;
    if (idle && pred(last)) return last;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}; page text ${short(last, 600)}`);
}
const threadIdOf = (page) => new URL(page.url()).searchParams.get("threadId");
const noProblems = (problems) => expect(problems.length === 0, `browser problems: ${short(problems, 800)}`);

// ---- checks ----------------------------------------------------------------------------------
const state = {};
R.add("U00", "the build took its server settings from NEXT_PUBLIC_API_URL / NEXT_PUBLIC_ASSISTANT_ID (no setup form)", async () => {
  const { context, page } = await openPage(null);
  try {
    await page.waitForSelector(INPUT, { timeout: STEP_MS });
    expect(!(await page.$('input[name="apiUrl"]')), "the 'Deployment URL' setup form is shown");
    // the Inter font of next/font/google was bundled from the offline mock
    const fontOk = await page.evaluate(async () => {
      await document.fonts.ready;
      return [...document.fonts].some((f) => /Inter/.test(f.family) && f.status === "loaded");
    });
    expect(fontOk, "the Inter web font (next/font/google, mocked offline at build time) did not load");
  } finally {
    await context.close();
  }
});
R.add("U01", "type a message, the streamed answer appears", async () => {
  const { context, page, problems } = await openPage(appQuery("chat"));
  state.context = context;
  state.page = page;
  state.problems = problems;
  await send(page, "hi");
  const text = await waitText(page, (t) => count(t, "hello from chat") >= 1, "the answer");
  expect(text.includes("hi"), "the human message is shown");
  await shot(page, "chat-turn1");
  state.thread = await (async () => {
    for (let i = 0; i < 50 && !threadIdOf(page); i++) await sleep(100);
    return threadIdOf(page);
  })();
  expect(/^[0-9a-f-]{36}$/.test(state.thread ?? ""), `thread id in the URL: ${page.url()}`);
  noProblems(problems);
});
R.add("U02", "a second turn on the same thread", async () => {
  const { page, problems } = state;
  expect(page, "needs the page of U01");
  await send(page, "again");
  await waitText(page, (t) => count(t, "hello from chat") >= 2 && t.includes("again"), "the second answer");
  eq(threadIdOf(page), state.thread, "thread id after the second turn");
  await shot(page, "chat-turn2");
  noProblems(problems);
  await state.context.close();
});
R.add("U03", "reload: the thread is in the history sidebar and re-opens with both turns", async () => {
  expect(state.thread, "needs the thread of U01");
  const { context, page, problems } = await openPage(appQuery("chat"));
  try {
    await page.waitForSelector("text=Thread History", { timeout: STEP_MS });
    // the sidebar lists threads of graph_id=chat (threads/search); ours shows its first message "hi"
    const item = page.locator("div.lg\\:flex button p", { hasText: /^hi$/ });
    await item.first().waitFor({ timeout: STEP_MS });
    await shot(page, "history");
    await item.first().click();
    for (let i = 0; i < 100 && threadIdOf(page) !== state.thread; i++) await sleep(100);
    eq(threadIdOf(page), state.thread, "thread opened from the sidebar");
    await waitText(page, (t) => count(t, "hello from chat") >= 2 && t.includes("again"), "the thread's messages");
    await shot(page, "history-reopened");
    noProblems(problems);
  } finally {
    await context.close();
  }
});
R.add("U04", "chat_hitl_inbox: the send_email review request is shown, Accept answers 'decision: approve'", async () => {
  // Released agent-chat-ui builds offer Accept only for the agent-inbox interrupt shape, which
  // chat_hitl_inbox (examples/chat_hitl.py) uses; chat_hitl's newer shape is covered by the
  // useStream / @langchain/react page and the SDK checks.
  const { context, page, problems } = await openPage(appQuery("chat_hitl_inbox"));
  try {
    await send(page, "mail ann");
    await waitText(page, (t) => t.includes("send_email") && t.includes("ann@example.com"), "the interrupt");
    await shot(page, "hitl-interrupt");
    const accept = page.locator('button:has-text("Accept"), button:has-text("Approve")');
    await accept.first().waitFor({ timeout: 15000 });
    await accept.first().click();
    await waitText(page, (t) => t.includes("decision: approve"), "the answer after approval");
    await shot(page, "hitl-approved");
    noProblems(problems);
  } finally {
    await context.close();
  }
});

let code = 1;
try {
  code = await R.run();
} finally {
  await browser.close().catch(() => {});
  stopNext();
}
process.exitCode = code;
process.exit(code);

#!/usr/bin/env node
// The server's /docs page (an API reference rendering /openapi.json) in headless Debian Chromium
// through playwright-core: every operation is listed, the filter works, "try it" reaches the
// server, and the page loads nothing from another origin (its CSP would block it; checked too).
//
//   node docs_check.mjs --url http://127.0.0.1:2024 [-v]
import { chromium } from "playwright-core";
import fs from "node:fs";
import { Runner, parseArgs, expect, eq } from "./lib/harness.mjs";

const args = parseArgs();
const R = new Runner(args);
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
if (!fs.existsSync(CHROMIUM)) {
  console.log(`FAIL D00 chromium at ${CHROMIUM} (apt-get install chromium)`);
  console.log("0 passed, 1 failed");
  process.exit(1);
}
const spec = await (await fetch(`${args.url}/openapi.json`)).json();
const nOps = Object.values(spec.paths).reduce((n, ops) => n + Object.keys(ops).length, 0);
const browser = await chromium.launch({
  executablePath: CHROMIUM, headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-default-apps"],
});
const page = await browser.newPage();
const requests = [];
const problems = [];
page.on("request", (r) => requests.push(r.url()));
page.on("pageerror", (e) => problems.push(String(e)));
page.on("console", (m) => { if (m.type() === "error") problems.push(m.text()); });

R.add("D01", "/docs renders every operation of /openapi.json", async () => {
  await page.goto(`${args.url}/docs`);
  await page.waitForSelector("details.op", { timeout: 15000 });
  eq(await page.locator("details.op").count(), nOps, "operations shown");
  expect((await page.locator("#title").textContent()).length > 0, "title");
  eq(problems, [], "page errors");
});

R.add("D02", "the filter narrows the list", async () => {
  await page.fill("#filter", "/runs/crons/search");
  eq(await page.locator("details.op:not(.hidden)").count(), 1, "visible after filtering");
  await page.fill("#filter", "");
});

R.add("D03", "an operation shows its body schema and 'try it' calls the server", async () => {
  const op = page.locator("details.op", { hasText: "/assistants/search" }).first();
  await op.locator("summary").click();
  await op.locator("text=Request body (application/json)").waitFor({ timeout: 5000 });
  await op.locator("textarea").fill('{"limit": 1}');
  await op.locator("button", { hasText: "Send" }).click();
  await op.locator("pre", { hasText: "200" }).waitFor({ timeout: 10000 });
  expect((await op.locator("pre").textContent()).includes("assistant_id"), "response shown");
});

R.add("D04", "nothing is loaded from another origin", async () => {
  const origin = new URL(args.url).origin;
  const foreign = requests.filter((u) => !u.startsWith(origin) && !u.startsWith("data:"));
  eq(foreign, [], "foreign requests");
});

const code = await R.run();
await browser.close();
process.exit(code);

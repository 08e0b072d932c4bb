// Tiny check harness shared by sdk_check.mjs / agui_check.mjs / browser_check.mjs.
// Prints one "PASS|FAIL|SKIP <id> <desc>[: reason]" line per check and a final
// "N passed, M failed" line (", K skipped" appended when something was skipped).
import { isDeepStrictEqual, inspect } from "node:util";

export function parseArgs(argv = process.argv.slice(2)) {
  const out = { url: process.env.LANGGRAPH_URL ?? "http://127.0.0.1:2024", only: null, timeout: 60, verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--url") out.url = argv[++i];
    else if (a.startsWith("--url=")) out.url = a.slice(6);
    else if (a === "--only") out.only = argv[++i].split(",").filter(Boolean);
    else if (a === "--timeout") out.timeout = Number(argv[++i]);
    else if (a === "--verbose" || a === "-v") out.verbose = true;
    else if (a === "--help" || a === "-h") {
      console.log("usage: node <check>.mjs --url http://127.0.0.1:PORT [--only A,V03] [--timeout 60] [-v]");
      process.exit(0);
    } else out[a.replace(/^--/, "")] = argv[i + 1]?.startsWith("--") ? true : argv[++i];
  }
  out.url = out.url.replace(/\/$/, "");
  const host = new URL(out.url).hostname;
  if (!/^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/.test(host)) {
    console.error(`refusing to talk to non-loopback ${out.url}`);
    process.exit(2);
  }
  return out;
}

// A client library may reject a promise nobody awaits when the server misbehaves (e.g. a
// ThreadStream projection whose stream got a 404). Report it and keep going: the check that
// caused it fails on its own assertions or time-out, the remaining checks still run.
let unhandledCount = 0;
const onUnhandled = (err) => {
  unhandledCount++;
  if (unhandledCount <= 5) console.error(`(unhandled rejection: ${String(err?.message ?? err).split("\n")[0].slice(0, 300)})`);
};
process.on("unhandledRejection", onUnhandled);
process.on("uncaughtException", onUnhandled);

export class CheckFailure extends Error {}
export class CheckSkip extends Error {}

export const short = (v, n = 300) => {
  const s = typeof v === "string" ? v : inspect(v, { depth: 6, breakLength: Infinity });
  return s.length > n ? s.slice(0, n) + "…" : s;
};
export function expect(cond, msg) {
  if (!cond) throw new CheckFailure(typeof msg === "function" ? msg() : msg);
}
export function eq(actual, expected, what = "value") {
  if (!isDeepStrictEqual(actual, expected)) {
    throw new CheckFailure(`${what}: expected ${short(expected)}, got ${short(actual)}`);
  }
}
export function skip(msg) {
  throw new CheckSkip(msg);
}
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function waitFor(fn, { timeout = 10000, interval = 100, what = "condition" } = {}) {
  const t0 = Date.now();
  let last;
  while (Date.now() - t0 < timeout) {
    last = await fn();
    if (last) return last;
    await sleep(interval);
  }
  throw new CheckFailure(`timed out after ${timeout}ms waiting for ${what} (last: ${short(last)})`);
}

export function withTimeout(promise, ms, what) {
  let t;
  return Promise.race([
    promise.finally(() => clearTimeout(t)),
    new Promise((_, rej) => {
      t = setTimeout(() => rej(new CheckFailure(`timed out after ${ms}ms: ${what}`)), ms);
    }),
  ]);
}

export class Runner {
  constructor({ only = null, timeout = 60, verbose = false } = {}) {
    this.only = only;
    this.timeoutMs = timeout * 1000;
    this.verbose = verbose;
    this.checks = [];
    this.passed = 0;
    this.failed = 0;
    this.skipped = 0;
  }
  add(id, desc, fn) {
    this.checks.push({ id, desc, fn });
  }
  selected(id) {
    return !this.only || this.only.some((p) => id.startsWith(p));
  }
  async run() {
    for (const { id, desc, fn } of this.checks) {
      if (!this.selected(id)) continue;
      const t0 = Date.now();
      try {
        await withTimeout(Promise.resolve().then(fn), this.timeoutMs, `${id}`);
        this.passed++;
        console.log(`PASS ${id} ${desc}${this.verbose ? ` (${Date.now() - t0}ms)` : ""}`);
      } catch (e) {
        if (e instanceof CheckSkip) {
          this.skipped++;
          console.log(`SKIP ${id} ${desc}: ${e.message}`);
        } else {
          this.failed++;
          const reason = e instanceof CheckFailure ? e.message : `${e?.name ?? "Error"}: ${e?.message ?? e}`;
          console.log(`FAIL ${id} ${desc}: ${reason.replace(/\s+/g, " ").slice(0, 600)}`);
          if (this.verbose && !(e instanceof CheckFailure)) console.error(e);
        }
      }
    }
    const tail = this.skipped ? `, ${this.skipped} skipped` : "";
    console.log(`${this.passed} passed, ${this.failed} failed${tail}`);
    return this.failed === 0 ? 0 : 1;
  }
}

// ---- raw HTTP / SSE helpers (plain fetch, no SDK) --------------------------------------------

/** Parse an SSE body (CRLF or LF) into frames {event, data (parsed JSON when possible), id, comments}. */
export function parseSSE(text) {
  const frames = [];
  for (const block of text.replace(/\r\n/g, "\n").replace(/\r/g, "\n").split("\n\n")) {
    if (!block.trim()) continue;
    const f = { event: undefined, data: undefined, id: undefined, comment: undefined };
    const data = [];
    for (const line of block.split("\n")) {
      if (line.startsWith(":")) f.comment = (f.comment ?? "") + line.slice(1).trim();
      else {
        const i = line.indexOf(":");
        const field = i < 0 ? line : line.slice(0, i);
        let value = i < 0 ? "" : line.slice(i + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "event") f.event = value;
        else if (field === "data") data.push(value);
        else if (field === "id") f.id = value;
      }
    }
    if (data.length) {
      const raw = data.join("\n");
      try {
        f.data = JSON.parse(raw);
      } catch {
        f.data = raw;
      }
    }
    frames.push(f);
  }
  return frames;
}

/**
 * POST/GET a streaming endpoint and read it until `until(frames)` is true, the server closes
 * it, or `ms` elapses; returns {status, headers, text, frames, closedByServer}.
 */
export async function readSSE(url, { method = "POST", body, headers = {}, ms = 5000, until } = {}) {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), ms);
  let text = "";
  let closedByServer = false;
  let res;
  try {
    res = await fetch(url, {
      method,
      headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: ac.signal,
    });
    const dec = new TextDecoder();
    for await (const chunk of res.body) {
      text += dec.decode(chunk, { stream: true });
      if (until && until(parseSSE(text))) {
        ac.abort();
        break;
      }
    }
    if (!ac.signal.aborted) closedByServer = true;
  } catch (e) {
    if (e.name !== "AbortError") throw e;
  } finally {
    clearTimeout(timer);
  }
  return { status: res?.status, headers: res?.headers, text, frames: parseSSE(text), closedByServer };
}

export async function postJSON(url, body, headers = {}) {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  const text = await r.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: r.status, headers: r.headers, json, text };
}

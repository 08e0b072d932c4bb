// A loopback reverse proxy that records every HTTP exchange (request + full response body,
// SSE streams included, even when the client aborts them) between a JS client and a server.
// Used by capture_fixtures.mjs to write tests/js/fixtures/*.txt, and usable by hand:
//
//   node lib/capture_proxy.mjs --target http://127.0.0.1:2024 --port 2999 --out /tmp/x.jsonl
//
// Only ever forwards to --target (which must be a loopback URL).
import http from "node:http";
import fs from "node:fs";
import { URL } from "node:url";

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/;

export async function startCaptureProxy({ target, port = 0, onExchange } = {}) {
  const t = new URL(target);
  if (!LOOPBACK.test(t.hostname)) throw new Error(`refusing non-loopback target ${target}`);
  const exchanges = [];
  let seq = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const reqBody = Buffer.concat(chunks).toString("utf8");
      const ex = {
        n: ++seq,
        started: Date.now(),
        method: req.method,
        path: req.url,
        request_headers: { ...req.headers },
        request_body: reqBody,
        status: null,
        response_headers: null,
        response_body: "",
        aborted_by_client: false,
      };
      exchanges.push(ex);
      const headers = { ...req.headers, host: t.host };
      const up = http.request(
        { hostname: t.hostname, port: t.port, path: req.url, method: req.method, headers },
        (ur) => {
          ex.status = ur.statusCode;
          ex.response_headers = { ...ur.headers };
          res.writeHead(ur.statusCode, ur.headers);
          ur.on("data", (c) => {
            ex.response_body += c.toString("utf8");
            res.write(c);
          });
          ur.on("end", () => {
            ex.finished = Date.now();
            res.end();
            onExchange?.(ex);
          });
          ur.on("error", () => {});
        },
      );
      up.on("error", (e) => {
        ex.error = String(e);
        if (!res.headersSent) res.writeHead(502);
        res.end();
        onExchange?.(ex);
      });
      res.on("close", () => {
        if (!ex.finished) {
          ex.aborted_by_client = true;
          ex.finished = Date.now();
          up.destroy();
          onExchange?.(ex);
        }
      });
      if (reqBody) up.write(reqBody);
      up.end();
    });
  });
  await new Promise((r) => server.listen(port, "127.0.0.1", r));
  const addr = server.address();
  return {
    url: `http://127.0.0.1:${addr.port}`,
    exchanges,
    reset() {
      exchanges.length = 0;
      seq = 0;
    },
    async close() {
      server.closeAllConnections?.();
      await new Promise((r) => server.close(() => r()));
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = Object.fromEntries(
    process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith("--") ? [...acc, [a.slice(2), all[i + 1]]] : acc), []),
  );
  const out = args.out ? fs.createWriteStream(args.out, { flags: "a" }) : null;
  const p = await startCaptureProxy({
    target: args.target,
    port: Number(args.port ?? 0),
    onExchange: (ex) => out?.write(JSON.stringify(ex) + "\n"),
  });
  console.error(`capture proxy ${p.url} -> ${args.target}`);
}

#!/usr/bin/env bash
# Run every JS/browser client check of issue 6 against one server.
#
#   tests/js/run_all.sh http://127.0.0.1:2024     # a running server (stepgraph serve / langgraph dev)
#   tests/js/run_all.sh real                      # start the reference `langgraph dev` (VENV, default
#                                                 # /tmp/lgdev) on a free loopback port, run, stop it
#
# Env: SKIP_BROWSER=1 skips browser_check.mjs; CHROMIUM_PATH (default /usr/bin/chromium);
#      CHECK_TIMEOUT per-check seconds (default 60); CAPTURE_DIR=dir also re-captures fixtures there.
# Installs node_modules with `npm ci` when missing. Prints each script's lines, then a total
# "N passed, M failed" line; exits 1 when anything failed.
set -uo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
cd "$HERE"
URL="${1:?usage: run_all.sh URL|real}"
TIMEOUT="${CHECK_TIMEOUT:-60}"
SERVER_PID=""
cleanup() { if [ -n "$SERVER_PID" ]; then kill -- -"$SERVER_PID" 2>/dev/null || kill "$SERVER_PID" 2>/dev/null; fi; }
trap cleanup EXIT

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  npm ci --no-audit --no-fund >/dev/null || { echo "npm ci failed"; echo "0 passed, 1 failed"; exit 1; }
fi

if [ "$URL" = "real" ]; then
  VENV="${VENV:-/tmp/lgdev}"
  PORT="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()')"
  LOG="$(mktemp /tmp/lgdev-js-log.XXXXXX)"
  setsid env VENV="$VENV" PORT="$PORT" "$HERE/run_real_langgraph_dev.sh" >"$LOG" 2>&1 &
  SERVER_PID=$!
  URL="http://127.0.0.1:$PORT"
  for _ in $(seq 1 120); do curl -sf "$URL/ok" >/dev/null 2>&1 && break; sleep 0.5; done
  curl -sf "$URL/ok" >/dev/null || { echo "reference server did not start (log: $LOG)"; echo "0 passed, 1 failed"; exit 1; }
  echo "# reference langgraph dev on $URL (log $LOG)"
fi

total_pass=0; total_fail=0; total_skip=0
run() {
  local name="$1"; shift
  echo "# --- $name"
  local out; out="$(node "$@" --url "$URL" --timeout "$TIMEOUT" 2>&1)"; local rc=$?
  echo "$out" | grep -v -E '^[0-9]+ passed, [0-9]+ failed'
  local tail; tail="$(echo "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed' | tail -1)"
  if [ -z "$tail" ]; then echo "FAIL $name produced no summary (exit $rc)"; total_fail=$((total_fail + 1)); return; fi
  local p f s
  p="$(echo "$tail" | sed -E 's/^([0-9]+) passed.*/\1/')"
  f="$(echo "$tail" | sed -E 's/.* ([0-9]+) failed.*/\1/')"
  s="$(echo "$tail" | grep -oE '[0-9]+ skipped' | grep -oE '[0-9]+' || echo 0)"
  total_pass=$((total_pass + p)); total_fail=$((total_fail + f)); total_skip=$((total_skip + s))
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then echo "FAIL $name exited $rc"; total_fail=$((total_fail + 1)); fi
}
run sdk_check sdk_check.mjs
run agui_check agui_check.mjs
if [ "${SKIP_BROWSER:-0}" = "1" ]; then
  echo "SKIP browser_check: SKIP_BROWSER=1"; total_skip=$((total_skip + 1))
elif [ ! -x "${CHROMIUM_PATH:-/usr/bin/chromium}" ]; then
  echo "FAIL browser_check: no chromium at ${CHROMIUM_PATH:-/usr/bin/chromium} (apt-get install chromium)"; total_fail=$((total_fail + 1))
else
  run browser_check browser_check.mjs
fi
if [ -n "${CAPTURE_DIR:-}" ]; then
  node capture_fixtures.mjs --url "$URL" --out "$CAPTURE_DIR" || true
fi
if [ "$total_skip" -gt 0 ]; then
  echo "$total_pass passed, $total_fail failed, $total_skip skipped"
else
  echo "$total_pass passed, $total_fail failed"
fi
[ "$total_fail" -eq 0 ]

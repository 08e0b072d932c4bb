#!/usr/bin/env bash
# Start the REAL LangGraph dev server (PyPI: langgraph-cli[inmem] / langgraph-api) as the reference
# for the JS/browser checks: the graphs of ../../shared/conformance/graphs_for_sdk_check.py plus
# `chat_hitl` (graphs/chat_hitl_lg.py).  A copy of the shared run_real_langgraph_dev.sh with that
# one graph added.  Loopback only; no browser, reload, telemetry, version check or LangSmith.
#
#   VENV=/tmp/lgdev PORT=2126 tests/js/run_real_langgraph_dev.sh        # foreground
#
# Install once:  python3 -m venv $VENV && $VENV/bin/pip install "langgraph-cli[inmem]==0.4.40" \
#                "langgraph-api==0.16.7" "langgraph==1.2.22" "langgraph-sdk==0.4.14"
# The dev server persists its in-memory DB under ./.langgraph_api of its working directory, so it
# is started from a fresh temporary directory every time.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
SHARED="${CONFORMANCE_DIR:-$HERE/../../../shared/conformance}"
[ -f "$SHARED/graphs_for_sdk_check.py" ] || SHARED="/work/shared/conformance"
VENV="${VENV:?set VENV to a virtual environment with langgraph-cli[inmem] installed}"
PORT="${PORT:-2126}"
WORK="$(mktemp -d /tmp/lgdev-js.XXXXXX)"
cp "$SHARED/graphs_for_sdk_check.py" "$WORK/"
cp "$HERE/graphs/chat_hitl_lg.py" "$WORK/"
cat > "$WORK/langgraph.json" <<'JSON'
{
  "dependencies": ["."],
  "graphs": {
    "simple": "./graphs_for_sdk_check.py:simple",
    "nested": "./graphs_for_sdk_check.py:nested",
    "interrupt": "./graphs_for_sdk_check.py:interrupt_graph",
    "nested_interrupt": "./graphs_for_sdk_check.py:nested_interrupt",
    "slow": "./graphs_for_sdk_check.py:slow",
    "fail": "./graphs_for_sdk_check.py:fail",
    "chat": "./graphs_for_sdk_check.py:chat",
    "chat_hitl": "./chat_hitl_lg.py:chat_hitl"
  }
}
JSON
cd "$WORK"
export LANGGRAPH_CLI_NO_ANALYTICS=1        # CLI usage analytics POST (background thread)
export LANGGRAPH_NO_VERSION_CHECK=true     # PyPI "newer langgraph-api?" check (background thread)
export LANGSMITH_TRACING=false LANGCHAIN_TRACING_V2=false
unset LANGSMITH_API_KEY LANGCHAIN_API_KEY LANGGRAPH_API_KEY LANGGRAPH_CLOUD_LICENSE_KEY || true
echo "serving from $WORK on http://127.0.0.1:$PORT" >&2
# langgraph dev silently moves to a random free port if $PORT is taken: check the banner.
exec "$VENV/bin/langgraph" dev --host 127.0.0.1 --port "$PORT" --no-browser --no-reload

#!/usr/bin/env bash
# Create benchmarks/.lgdevvenv with the reference LangGraph dev server used by
# benchmarks/server_bench.py (`langgraph dev`, in-memory runtime).
# Idempotent: re-running only (re)installs when a pinned version is missing.
#
#   bash benchmarks/setup_langgraph_dev.sh            # uses python3 from PATH
#   PYTHON=/usr/bin/python3.11 bash benchmarks/setup_langgraph_dev.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.lgdevvenv"
PYTHON="${PYTHON:-python3}"

PKGS=("langgraph-cli[inmem]==0.4.40" "langgraph-api==0.16.7" "langgraph==1.2.22" "langgraph-sdk==0.4.14")

if [ ! -x "$VENV/bin/python" ]; then
    echo "creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi

check() {
    "$VENV/bin/python" - <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
want = {"langgraph-cli": "0.4.40", "langgraph-api": "0.16.7", "langgraph": "1.2.22", "langgraph-sdk": "0.4.14"}
ok = all(version(name) == v for name, v in want.items())
import langgraph_api, langgraph_runtime_inmem, langgraph.graph  # noqa: E401,F401  (the [inmem] extra)
sys.exit(0 if ok else 1)
EOF
}

if check && [ -x "$VENV/bin/langgraph" ]; then
    echo "langgraph dev (langgraph-cli 0.4.40, langgraph-api 0.16.7, langgraph 1.2.22) already installed in $VENV"
    exit 0
fi

"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PKGS[@]}"
if ! check; then
    echo "error: $VENV does not have the pinned versions after pip install" >&2
    exit 1
fi
"$VENV/bin/python" -c "from importlib.metadata import version as v; print('installed langgraph-cli', v('langgraph-cli'), '/ langgraph-api', v('langgraph-api'), '/ langgraph', v('langgraph'), '/ langgraph-sdk', v('langgraph-sdk'), '/ langgraph-runtime-inmem', v('langgraph-runtime-inmem'))"

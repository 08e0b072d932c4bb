#!/usr/bin/env bash
# Create benchmarks/.lgvenv with the reference LangGraph release used by
# benchmarks/run.py.  Idempotent: re-running only (re)installs what is missing.
#
#   bash benchmarks/setup_langgraph.sh            # uses python3 from PATH
#   PYTHON=/usr/bin/python3.11 bash benchmarks/setup_langgraph.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$HERE/.lgvenv"
PYTHON="${PYTHON:-python3}"

LANGGRAPH_VERSION="1.2.22"
LANGGRAPH_SQLITE_VERSION="3.1.2"
PKGS=("langgraph==${LANGGRAPH_VERSION}" "langgraph-checkpoint-sqlite==${LANGGRAPH_SQLITE_VERSION}" "langgraph-sdk==0.4.14")

if [ ! -x "$VENV/bin/python" ]; then
    echo "creating $VENV"
    "$PYTHON" -m venv "$VENV"
fi

# Already installed at the pinned versions?  Then nothing to do.
if "$VENV/bin/python" - "$LANGGRAPH_VERSION" "$LANGGRAPH_SQLITE_VERSION" <<'EOF' 2>/dev/null
import sys
from importlib.metadata import version
ok = (version("langgraph") == sys.argv[1]
      and version("langgraph-checkpoint-sqlite") == sys.argv[2])
import langgraph.graph, langgraph.checkpoint.sqlite  # noqa: E401,F401
sys.exit(0 if ok else 1)
EOF
then
    echo "langgraph ${LANGGRAPH_VERSION} already installed in $VENV"
    exit 0
fi

"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${PKGS[@]}"
"$VENV/bin/python" -c "import langgraph.graph, langgraph.checkpoint.sqlite; from importlib.metadata import version; print('installed langgraph', version('langgraph'), '/ langgraph-checkpoint', version('langgraph-checkpoint'), '/ langgraph-checkpoint-sqlite', version('langgraph-checkpoint-sqlite'))"

"""Custom auth through the JS SDK: ``auth_check.mjs`` against ``stepgraph serve`` hosting
``tests/server/auth_app/langgraph.json`` (the two-user matrix of
``tests/server/test_server_auth.py``, one case per area, from JavaScript).

Skipped (with the reason) when ``node``/``npm`` are missing; ``npm ci`` runs first when
``node_modules`` is not up to date, as for the other JS checks.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from js_harness import HERE, REPO, npm_ci, require_node, run_check, serve  # noqa: E402
from test_js_clients import _node_modules_current  # noqa: E402

AUTH_CONFIG = REPO / "tests" / "server" / "auth_app" / "langgraph.json"


@pytest.mark.timeout(240)
def test_js_sdk_custom_auth(tmp_path: Path) -> None:
    node, npm = require_node("the JS custom-auth check")
    if not _node_modules_current():
        npm_ci(npm)
    with serve(tmp_path, AUTH_CONFIG) as url:
        run_check(node, HERE / "auth_check.mjs", url, timeout=200)

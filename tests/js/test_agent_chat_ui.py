"""LangChain's agent-chat-ui against ``stepgraph serve`` in headless Chromium (issue 6), from pytest.

``agent_chat_ui/setup.sh`` scaffolds the Next.js template of npm ``create-agent-chat-app``
(agent-chat-ui, source unchanged) into the git-ignored ``agent_chat_ui/work/``, installs it
with ``npm ci`` from ``agent_chat_ui/web.package-lock.json`` and runs ``next build`` offline
(the Google font comes from ``agent_chat_ui/fonts`` via ``NEXT_FONT_GOOGLE_MOCKED_RESPONSES``);
it is skipped when already built. ``agent_chat_ui/agent_chat_ui_check.mjs`` then serves the
build with ``next start`` and drives it in Debian Chromium through playwright-core against a
``stepgraph serve`` subprocess: chat, second turn, reload + thread-history sidebar, chat_hitl
interrupt. It must end with ``N passed, 0 failed``.

Skipped (with the reason) when node/npm or Chromium is missing, or when the setup fails
outside CI (no registry access); in CI (``CI`` set) a failing setup is an error.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from js_harness import (  # noqa: E402
    HERE,
    npm_ci,
    require_chromium,
    require_node,
    run_check,
    serve,
    setup_failed,
)

ACU = HERE / "agent_chat_ui"


@pytest.fixture(scope="module")
def acu_ready() -> str:
    """``node`` with playwright-core (tests/js) and a built agent-chat-ui (``setup.sh``)."""
    node, npm = require_node("agent-chat-ui")
    require_chromium()
    if not (HERE / "node_modules" / "playwright-core" / "package.json").is_file():
        npm_ci(npm)
    t0 = time.monotonic()
    done = subprocess.run(["bash", str(ACU / "setup.sh")], cwd=ACU, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        setup_failed(f"agent_chat_ui/setup.sh failed after {time.monotonic() - t0:.0f}s:\n"
                     f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
    return node


@pytest.fixture(scope="module")
def acu_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``stepgraph serve`` on loopback for the agent-chat-ui check; yields its URL."""
    with serve(tmp_path_factory.mktemp("acu-server")) as url:
        yield url


@pytest.mark.timeout(1200)
def test_agent_chat_ui(acu_ready: str, acu_server: str) -> None:
    """agent-chat-ui (``next build``): chat, second turn, reload + history sidebar, approving an interrupt."""
    run_check(acu_ready, ACU / "agent_chat_ui_check.mjs", acu_server, timeout=400, check_timeout=90)

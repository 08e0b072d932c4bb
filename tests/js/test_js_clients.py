"""LangGraph's JavaScript clients against ``stepgraph serve`` (issue 6), from pytest.

Runs the Node checks of this directory (``README.md``) against a real ``stepgraph serve``
subprocess on a free loopback port, hosting ``examples/stepgraph.json`` (the conformance
graphs plus ``chat_hitl``) on a temporary SQLite file:

* ``sdk_check.mjs``: ``@langchain/langgraph-sdk`` (classic runs API and v3 thread streams);
* ``crons_check.mjs``: the same SDK's ``client.crons``;
* ``docs_check.mjs``: the server's ``/docs`` page in headless Chromium;
* ``agui_check.mjs``: CopilotKit's ``@ag-ui/langgraph``;
* ``browser_check.mjs``: a Vite page with both ``useStream`` hooks in headless Debian
  Chromium (``/usr/bin/chromium`` or ``CHROMIUM_PATH``); screenshots go to ``artifacts/``.

Each must end with ``N passed, 0 failed``. ``npm ci`` runs first unless ``node_modules``
is up to date with ``package-lock.json``. Skipped (with the reason) when ``node``/``npm``
or Chromium is missing, or when ``npm ci`` fails outside CI (no registry access); in CI
(``CI`` set) a failing ``npm ci`` is an error.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from js_harness import HERE, npm_ci, require_chromium, require_node, run_check, serve  # noqa: E402

PACKAGES = ("@langchain/langgraph-sdk", "@langchain/react", "@ag-ui/langgraph", "playwright-core", "vite")


def _node_modules_current() -> bool:
    """Whether ``npm ci`` already installed exactly ``package-lock.json``."""
    stamp = HERE / "node_modules" / ".package-lock.json"
    if not stamp.is_file() or not all((HERE / "node_modules" / p / "package.json").is_file() for p in PACKAGES):
        return False
    return stamp.stat().st_mtime >= (HERE / "package-lock.json").stat().st_mtime


@pytest.fixture(scope="module")
def node_ready() -> str:
    """``node`` with the pinned packages installed (``npm ci`` when needed)."""
    node, npm = require_node("the JavaScript client checks")
    if not _node_modules_current():
        npm_ci(npm)
    return node


@pytest.fixture(scope="module")
def js_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``stepgraph serve`` on loopback for this module's checks; yields its URL."""
    with serve(tmp_path_factory.mktemp("js-server")) as url:
        yield url


@pytest.mark.timeout(120)
def test_js_sdk_crons(node_ready: str, js_server: str) -> None:
    """The JS SDK's crons client: create (thread, stateless), search, count, update, delete."""
    run_check(node_ready, "crons_check.mjs", js_server, timeout=110)


@pytest.mark.timeout(180)
def test_docs_page_in_a_browser(node_ready: str, js_server: str) -> None:
    """``/docs`` in headless Chromium: every operation rendered, filter, "try it", no foreign loads."""
    require_chromium()
    run_check(node_ready, "docs_check.mjs", js_server, timeout=170)


@pytest.mark.timeout(300)
def test_js_sdk(node_ready: str, js_server: str) -> None:
    """The JS SDK: assistants, threads, classic streams, interrupts, runs, store, v3 thread streams, CORS."""
    run_check(node_ready, "sdk_check.mjs", js_server, timeout=280)


@pytest.mark.timeout(180)
def test_agui(node_ready: str, js_server: str) -> None:
    """``@ag-ui/langgraph``: streamed chat answer, second turn, interrupt and resume."""
    run_check(node_ready, "agui_check.mjs", js_server, timeout=160)


@pytest.mark.timeout(420)
def test_browser(node_ready: str, js_server: str) -> None:
    """``useStream`` (both hooks) in headless Chromium: chat, reload from history, interrupt + approve."""
    require_chromium()
    run_check(node_ready, "browser_check.mjs", js_server, timeout=400)

"""The studio in headless Debian Chromium (issue 16's acceptance), from pytest.

Starts ``stepgraph dev --config examples/studio.json`` on a free loopback port (checking that
it prints the studio's URL), then runs ``studio_check.mjs`` (playwright-core, no browser
download): draw the graph, run it with the live node highlight and streamed tokens, answer an
interrupt, fork from the third checkpoint with an edited value and see the branch, browse the
store, threads and assistants, keyboard and dark mode. It must end with ``N passed, 0 failed``;
screenshots go to ``tests/ui/artifacts/`` (git-ignored).

Skipped (with the reason) when node/npm or Chromium is missing; playwright-core comes from
``ui/node_modules`` (installed here with ``npm ci`` when absent) or ``tests/js/node_modules``.
In CI (``CI`` set) a failing set-up is an error. Marked ``slow`` (``-m "not slow"`` leaves it out).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "tests" / "js"))

from js_harness import require_chromium, require_node, run_check, serve, setup_failed  # noqa: E402

CONFIG = REPO / "examples" / "studio.json"
UI = REPO / "ui"


def _playwright(npm: str) -> None:
    for folder in (UI, REPO / "tests" / "js"):
        if (folder / "node_modules" / "playwright-core" / "index.mjs").is_file():
            return
    done = subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=UI, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        setup_failed(f"npm ci failed in {UI}:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


@pytest.fixture(scope="module")
def node() -> str:
    node, npm = require_node("the studio's browser tests")
    require_chromium()
    _playwright(npm)
    return node


@pytest.fixture(scope="module")
def studio_dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``stepgraph dev`` hosting examples/studio.json; yields its URL and its log."""
    tmp = tmp_path_factory.mktemp("studio-dev")
    with serve(tmp, CONFIG, command="dev") as url:
        yield url, tmp / "server.log"


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_studio_in_chromium(node: str, studio_dev: tuple[str, Path]) -> None:
    url, log = studio_dev
    assert f"studio: {url}/ui/" in log.read_text(), log.read_text()[-2000:]
    run_check(node, HERE / "studio_check.mjs", url, timeout=500, check_timeout=120)
    shots = sorted(p.name for p in (HERE / "artifacts").glob("studio-*.png"))
    for name in ("studio-graph.png", "studio-run-live.png", "studio-interrupt-answered.png",
                 "studio-fork-branch.png", "studio-store.png"):
        assert name in shots, shots

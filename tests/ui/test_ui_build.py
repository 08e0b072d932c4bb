"""The committed build of the studio (``src/stepgraph/server/ui_dist``) is the build of ``ui/``.

``scripts/build_ui.sh`` records the hash of the sources and of each built file in
``build-info.json``; a source change without a rebuild, or a hand-edited build, fails here
(no Node needed). ``test_rebuild_matches`` really rebuilds when ``ui/node_modules`` exists
(CI installs it) and compares the output byte for byte.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
DIST = REPO / "src" / "stepgraph" / "server" / "ui_dist"


def _ui_hash() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ui_hash", REPO / "scripts" / "ui_hash.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_build_is_of_the_current_sources() -> None:
    info = json.loads((DIST / "build-info.json").read_text())
    assert info["sources_sha256"] == _ui_hash().sources_sha256(), (
        "ui/ changed since the committed build: run scripts/build_ui.sh and commit src/stepgraph/server/ui_dist")


def test_built_files_are_the_recorded_ones() -> None:
    info = json.loads((DIST / "build-info.json").read_text())
    on_disk = {p.relative_to(DIST).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
               for p in DIST.rglob("*") if p.is_file() and p.name != "build-info.json"}
    assert on_disk == info["files"]


def test_nothing_is_fetched_from_elsewhere() -> None:
    """No CDN, no web fonts: the page refers only to its own assets."""
    page = (DIST / "index.html").read_text()
    refs = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert refs and all(r.startswith("./assets/") or r == "data:," for r in refs), refs
    for css in DIST.glob("assets/*.css"):
        text = css.read_text()
        assert "@import" not in text and not re.search(r"url\((?!data:)", text), css.name
    for js in DIST.glob("assets/*.js"):
        text = js.read_text()
        assert "fonts.googleapis" not in text and "cdn." not in text, js.name


def test_the_package_ships_the_build() -> None:
    """Hatch packages everything under src/stepgraph that git does not ignore."""
    ignored = subprocess.run(["git", "check-ignore", "-q", str(DIST / "index.html")], cwd=REPO)
    assert ignored.returncode == 1, "ui_dist is git-ignored: the wheel would not ship it"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_rebuild_matches(tmp_path: Path) -> None:
    """``scripts/build_ui.sh --check``: a fresh build equals the committed one (needs ui/node_modules)."""
    if not (REPO / "ui" / "node_modules" / "vite" / "package.json").is_file() or shutil.which("node") is None:
        pytest.skip("ui/node_modules not installed (cd ui && npm ci); the hash check above still runs")
    done = subprocess.run(["bash", str(REPO / "scripts" / "build_ui.sh"), "--check"], cwd=REPO,
                          capture_output=True, text=True, timeout=280)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]

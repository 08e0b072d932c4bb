"""The fingerprint of the studio's sources (``ui/``) and of its build (``ui_dist/``).

``scripts/build_ui.sh`` records both in ``src/stepgraph/server/ui_dist/build-info.json``;
``tests/ui/test_ui_build.py`` recomputes them, so a source change without a rebuild (or a
hand-edited build) fails the suite. Standard library only.

    python3 scripts/ui_hash.py            # print the sources' hash
    python3 scripts/ui_hash.py --write    # write build-info.json (the build script does)
    python3 scripts/ui_hash.py --verify   # exit 1 unless build-info.json matches sources and build
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
UI = REPO / "ui"
DIST = REPO / "src" / "stepgraph" / "server" / "ui_dist"
INFO = DIST / "build-info.json"
SOURCE_FILES = ("index.html", "vite.config.mjs", "package.json", "package-lock.json")


def source_paths(ui: Path = UI) -> list[Path]:
    """The files the build reads: the top-level ones above and everything under ``src/``."""
    paths = [ui / name for name in SOURCE_FILES]
    paths += sorted(p for p in (ui / "src").rglob("*") if p.is_file())
    return paths


def sources_sha256(ui: Path = UI) -> str:
    digest = hashlib.sha256()
    for path in source_paths(ui):
        digest.update(path.relative_to(ui).as_posix().encode() + b"\0")
        digest.update(path.read_bytes().replace(b"\r\n", b"\n") + b"\0")
    return digest.hexdigest()


def dist_files(dist: Path = DIST) -> dict[str, str]:
    """``{relative path: sha256}`` of the build's files (``build-info.json`` left out)."""
    return {p.relative_to(dist).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(dist.rglob("*")) if p.is_file() and p != dist / INFO.name}


def write_info() -> dict[str, object]:
    info = {"sources_sha256": sources_sha256(), "files": dist_files(),
            "rebuild": "scripts/build_ui.sh"}
    INFO.write_text(json.dumps(info, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return info


def verify() -> list[str]:
    """What ``build-info.json`` gets wrong about the sources and the build (empty: nothing)."""
    info = json.loads(INFO.read_text(encoding="utf-8"))
    problems = []
    if info.get("sources_sha256") != sources_sha256():
        problems.append("ui/ changed since the build (sources_sha256 differs)")
    if info.get("files") != dist_files():
        problems.append("the files of ui_dist are not the recorded ones")
    return problems


if __name__ == "__main__":
    if "--write" in sys.argv[1:]:
        print(json.dumps(write_info(), indent=2, sort_keys=True))
    elif "--verify" in sys.argv[1:]:
        found = verify()
        for problem in found:
            print(problem, file=sys.stderr)
        sys.exit(1 if found else 0)
    else:
        print(sources_sha256())

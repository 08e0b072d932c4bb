"""``import stepgraph`` stays lean: no heavy or optional packages are imported."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("langchain_core", "pydantic", "ormsgpack", "msgpack", "psycopg", "asyncio", "langsmith", "numpy")


def test_core_import_pulls_no_heavy_package() -> None:
    """Importing the graph API imports none of the heavy/optional packages."""
    code = (
        "import sys, stepgraph.graph, stepgraph.types, stepgraph.channels, stepgraph.pregel;"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

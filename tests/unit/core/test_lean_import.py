"""``import stepgraph`` stays lean: no heavy or optional packages are imported."""

from __future__ import annotations

import subprocess
import sys

HEAVY = (
    "langchain_core",
    "pydantic",
    "ormsgpack",
    "msgpack",
    "psycopg",
    "asyncio",
    "langsmith",
    "numpy",
)


def test_core_import_pulls_no_heavy_package() -> None:
    """Importing the graph API imports none of the heavy/optional packages."""
    code = (
        "import sys, stepgraph.graph, stepgraph.types, stepgraph.channels, stepgraph.pregel;"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_runs_without_callbacks_import_no_callback_machinery() -> None:
    """A run without callbacks (and warnings/runtime/callbacks modules themselves) pull in
    neither langchain-core nor langsmith: tracing costs nothing when unused."""
    code = (
        "import sys\n"
        "from typing import TypedDict\n"
        "import stepgraph.warnings, stepgraph.runtime\n"
        "from stepgraph.graph import StateGraph, START\n"
        "class S(TypedDict):\n    x: int\n"
        "g = StateGraph(S).add_node('a', lambda s: {'x': s['x'] + 1}).add_edge(START, 'a')\n"
        "assert g.compile().invoke({'x': 1}) == {'x': 2}\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    env = {"PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip() == "[]"


def test_compile_loads_the_run_modules_that_import_leaves_out() -> None:
    """``import stepgraph.graph`` leaves the run loop out; compiling a graph loads it, so
    the graph's first run does not pay that import."""
    code = (
        "import sys\n"
        "from typing import TypedDict\n"
        "from stepgraph.graph import StateGraph, START\n"
        "class S(TypedDict):\n    x: int\n"
        "g = StateGraph(S).add_node('a', lambda s: {'x': s['x'] + 1}).add_edge(START, 'a')\n"
        "before = 'stepgraph.engine.loop' in sys.modules\n"
        "g.compile()\n"
        "print(before, 'stepgraph.engine.loop' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False True"

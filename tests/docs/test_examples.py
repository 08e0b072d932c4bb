"""The README quickstart and every script in examples/ run and print what they promise."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(
    p for p in (ROOT / "examples").glob("*.py") if "__main__" in p.read_text()
)
MODULES = sorted(p for p in (ROOT / "examples").glob("*.py") if p not in EXAMPLES)


def _run(*args: str) -> str:
    proc = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path: Path) -> None:
    """Each example exits 0 and prints something."""
    assert _run(str(path)).strip()


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_example_module_imports(path: Path) -> None:
    """Example modules without a main block (graphs a server hosts) import cleanly."""
    _run("-c", f"import runpy; runpy.run_path({str(path)!r})")


def test_agent_loop_answers() -> None:
    """The agent example calls two tools and answers 43."""
    out = _run("examples/agent_loop.py")
    assert "[tools] tool: 42" in out and "The answer is 43." in out


def test_readme_python_blocks_run() -> None:
    """Every ```python block in the README executes without error."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python code block"
    for block in blocks:
        exec(compile(block, "README.md", "exec", dont_inherit=True), {"__name__": "__readme__"})


def test_agent_loop_checkpoints_to_sqlite(tmp_path: Path) -> None:
    """The README's first command: the agent run is checkpointed to a SQLite file, twice."""
    db = tmp_path / "stepgraph.sqlite"
    first = _run("examples/agent_loop.py", "--db", str(db))
    assert "The answer is 43." in first and "6 messages" in first
    second = _run("examples/agent_loop.py", "--db", str(db))
    assert "The answer is 43." in second and "thread 'demo-" in second

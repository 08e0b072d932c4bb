"""The run state is private to the loop, checked on the source with ``ast``.

``RunLoop`` (``engine/loop.py``, with its input-phase methods in ``engine/start.py``, its
per-step methods in ``engine/step.py`` and its methods for code outside the steps in
``engine/loop_access.py``) is the only code that
changes a run's fields. Every other module reads them and asks for changes
through the loop's methods or constructor arguments. A write from outside is an assignment
(``=``, ``+=``, annotated, ``del``) whose target goes through a loop: ``loop.x``,
``loop.x.y``, ``loop.x[k]``, ``task.run.x``, ``self.loop.x``; or ``setattr(loop, ...)``.

Run this file directly to list the writes: ``python tests/unit/core/test_run_state.py``.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[3] / "src" / "stepgraph"

LOOP_MODULES = frozenset(
    {"engine/loop.py", "engine/start.py", "engine/step.py", "engine/loop_access.py"}
)
"""Where the loop's own methods live (``InputPhase``, ``StepPhase`` and ``LoopAccess`` are
base classes of ``RunLoop``)."""

_LOOP_NAMES = frozenset({"loop"})
"""Local names that hold a ``RunLoop`` across the source."""
_LOOP_ATTRS = frozenset({"loop", "_loop", "run"})
"""Attributes that hold a ``RunLoop`` (``Task.run``, ``SaveOps.loop``, ``RunTracer.loop``)."""


def _is_loop(node: ast.expr) -> bool:
    if isinstance(node, ast.Name):
        return node.id in _LOOP_NAMES
    if isinstance(node, ast.Attribute) and node.attr in _LOOP_ATTRS:
        # ``self.run`` inside a class is that class's own field (a tracer's langchain run)
        return node.attr != "run" or not (
            isinstance(node.value, ast.Name) and node.value.id == "self"
        )
    return False


def _through_loop(target: ast.expr) -> bool:
    """``target`` writes into a loop: an attribute or item chain that starts at one."""
    node = target
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if _is_loop(node.value):
            return True
        node = node.value
    return False


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        out: list[ast.expr] = []
        for t in node.targets:
            out.extend(t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t])
        return out
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
        return [node.target]
    if isinstance(node, ast.Delete):
        return list(node.targets)
    return []


def outside_writes() -> list[str]:
    """``module:line: target`` for each write to a loop outside the loop's modules."""
    found: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).as_posix()
        if rel in LOOP_MODULES:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            for target in _targets(node):
                if _through_loop(target):
                    found.append(f"{rel}:{node.lineno}: {ast.unparse(target)}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("setattr", "delattr")
                and node.args
                and (_is_loop(node.args[0]) or _through_loop(node.args[0]))
            ):
                found.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_outside_the_loop_writes_run_state() -> None:
    assert outside_writes() == []


def test_the_check_sees_each_kind_of_write() -> None:
    code = (
        "loop.step += 1\n"
        "loop.saves.enabled = True\n"
        "loop.channels['a'] = 1\n"
        "task.run.resuming = True\n"
        "self.loop.checkpoint_id = 'x'\n"
        "a, loop.updated = 1, set()\n"
        "del loop.control\n"
        "self.run = None\n"  # a class's own ``run`` field: not a loop
        "x = loop.step\n"  # a read
    )
    hits = [t for node in ast.walk(ast.parse(code)) for t in _targets(node) if _through_loop(t)]
    assert [ast.unparse(t) for t in hits] == [
        "loop.step",
        "loop.saves.enabled",
        "loop.channels['a']",
        "task.run.resuming",
        "self.loop.checkpoint_id",
        "loop.updated",
        "loop.control",
    ]


if __name__ == "__main__":
    print("\n".join(outside_writes()) or "no writes to run state outside the loop")

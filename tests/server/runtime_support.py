"""Helpers of the run-machinery tests: deadlock guards and a server with ``runtime_graphs``."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import runtime_graphs
from server_harness import RunningServer, example_graphs, start_server

T = TypeVar("T")

GUARD = float(os.environ.get("STEPGRAPH_TEST_GUARD", "120"))
"""Seconds after which a call that should return is declared stuck (a deadlock guard for a
failing build, never a timing assertion; ``STEPGRAPH_TEST_GUARD`` changes it)."""


def within(fn: Callable[[], T], what: str, guard: float = GUARD) -> T:
    """``fn()``, failing the test if it has not returned after ``guard`` seconds."""
    box: dict[str, Any] = {}

    def call() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test's thread
            box["error"] = exc

    worker = threading.Thread(target=call, daemon=True)
    worker.start()
    worker.join(guard)
    if worker.is_alive():
        raise AssertionError(f"{what}: still waiting after {guard:.0f} s (stuck)")
    if "error" in box:
        raise box["error"]
    return box["value"]


def wait_until(check: Callable[[], Any], what: str, guard: float = GUARD) -> Any:
    """Poll ``check()`` until it is truthy (``guard`` seconds at most)."""
    deadline = time.monotonic() + guard
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not reached after {guard:.0f} s")
        time.sleep(0.02)


def runtime_server(db: Path, **settings: Any) -> RunningServer:
    """A server hosting the example, test and runtime graphs on the SQLite file ``db``."""
    return start_server(db, graphs={**example_graphs(), **runtime_graphs.GRAPHS}, **settings)

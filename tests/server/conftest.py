"""Fixtures of the server tests: one real server per module (see ``server_harness``).

The ``server`` fixture hosts ``examples/server_graphs.py`` plus the test graphs of
``server_test_graphs.py``, on a SQLite file in a temporary directory.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from server_harness import EXAMPLES, REPO, RunningServer, example_graphs, start_server  # noqa: E402

__all__ = ["EXAMPLES", "REPO", "RunningServer", "example_graphs", "start_server"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One server per test module on a fresh SQLite file (heartbeats every 0.3 s)."""
    srv = start_server(tmp_path_factory.mktemp("server") / "db.sqlite", heartbeat=0.3)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def client(server: RunningServer) -> Any:
    """The official sync ``langgraph_sdk`` client for ``server``."""
    from langgraph_sdk import get_sync_client

    return get_sync_client(url=server.url, api_key=None)


@pytest.fixture
def http(server: RunningServer) -> Iterator[Any]:
    """A plain ``httpx`` client for ``server``."""
    import httpx

    with httpx.Client(base_url=server.url, timeout=30) as c:
        yield c

"""Fixtures of the cluster tests (real processes on PostgreSQL and Redis at 127.0.0.1).

Every test skips with the reason when PostgreSQL or Redis is unreachable. The smoke tests
run by default; the long chaos scenarios carry the ``cluster`` marker (``-m cluster``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from cluster_harness import Cluster, unreachable  # noqa: E402


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    """An empty cluster on Postgres + Redis (add processes with ``cluster.add(role)``)."""
    reason = unreachable(redis=True)
    if reason:
        pytest.skip(reason)
    c = Cluster(tmp_path, redis=True)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def pg_cluster(tmp_path: Path) -> Iterator[Cluster]:
    """An empty cluster in Postgres-only mode (events in a table, LISTEN/NOTIFY)."""
    reason = unreachable(redis=False)
    if reason:
        pytest.skip(reason)
    c = Cluster(tmp_path, redis=False)
    try:
        yield c
    finally:
        c.close()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The ``cluster`` chaos scenarios run only when asked for (``-m cluster`` or
    ``STEPGRAPH_CLUSTER_CHAOS=1``): they take minutes."""
    asked = "cluster" in (config.getoption("markexpr") or "") or bool(os.environ.get("STEPGRAPH_CLUSTER_CHAOS"))
    if asked:
        return
    skip = pytest.mark.skip(reason="cluster chaos scenario: run with -m cluster (or STEPGRAPH_CLUSTER_CHAOS=1)")
    for item in items:
        if item.get_closest_marker("cluster") is not None:
            item.add_marker(skip)

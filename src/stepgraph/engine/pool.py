"""One long-lived thread pool for running sync nodes in parallel (no pool per invoke)."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

_POOL: ThreadPoolExecutor | None = None
_LOCK = threading.Lock()


def shared_pool() -> ThreadPoolExecutor:
    """The process-wide pool, created on first use (threads are started lazily)."""
    global _POOL
    if _POOL is None:
        with _LOCK:
            if _POOL is None:
                workers = int(os.environ.get("STEPGRAPH_MAX_THREADS", "0")) or min(
                    64, (os.cpu_count() or 1) * 4 + 8
                )
                _POOL = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="stepgraph")
    return _POOL

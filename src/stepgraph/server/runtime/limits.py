"""The run machinery's bounds: memory budgets in bytes and the attempts of a run lost in a crash.

Every in-memory buffer the server keeps for runs is bounded by the encoded bytes it holds,
evicting oldest first: one run's event log, the logs of finished runs kept for
``Last-Event-ID`` replays, the v3 thread logs (each, and all together), and the finished
runs kept for ``join``. ``RuntimeLimits.from_env()`` reads overrides from the environment
(``STEPGRAPH_RUN_LOG_BYTES=8MiB`` and so on; see ``ENV``); a malformed value stops the server
with the variable's name. The saver's caches have their own budget
(``STEPGRAPH_SAVER_CACHE_BYTES``, ``stepgraph.checkpoint._lru``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields

from stepgraph.checkpoint._lru import parse_bytes

__all__ = ["ENV", "LimitError", "RuntimeLimits", "parse_bytes"]

MiB = 1 << 20


class LimitError(ValueError):
    """A budget given in the environment cannot be read."""


@dataclass(frozen=True)
class RuntimeLimits:
    """Budgets (bytes) of the server's run buffers, and ``max_attempts`` of a crashed run."""

    run_log_bytes: int = 16 * MiB
    """One run's event log (running or finished): oldest events are dropped beyond it."""
    finished_logs_bytes: int = 64 * MiB
    """All finished runs' logs kept for replay together: oldest finished logs go first."""
    thread_log_bytes: int = 16 * MiB
    """One thread's v3 event log."""
    thread_logs_bytes: int = 64 * MiB
    """All v3 thread logs together."""
    finished_runs_bytes: int = 32 * MiB
    """Finished runs kept in memory for ``join`` (their result, record and log); older ones
    are answered from storage."""
    max_attempts: int = 3
    """Executions of a run interrupted by a crash (the first one included); then ``error``."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise LimitError(f"{f.name} must be a positive integer, got {value!r}")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RuntimeLimits:
        """The defaults, overridden by the ``ENV`` variables that are set."""
        env = os.environ if env is None else env
        values: dict[str, int] = {}
        for name, var in ENV.items():
            raw = env.get(var)
            if raw is None or not raw.strip():
                continue
            try:
                values[name] = int(raw) if name == "max_attempts" else parse_bytes(raw)
            except ValueError:
                raise LimitError(f"{var}={raw!r}: expected a positive "
                                 f"{'integer' if name == 'max_attempts' else 'size such as 8MiB'}") from None
        try:
            return cls(**values)
        except LimitError as exc:
            name = str(exc).split(" ", 1)[0]
            raise LimitError(f"{ENV.get(name, name)}: {exc}") from None


ENV = {
    "run_log_bytes": "STEPGRAPH_RUN_LOG_BYTES",
    "finished_logs_bytes": "STEPGRAPH_FINISHED_LOGS_BYTES",
    "thread_log_bytes": "STEPGRAPH_THREAD_LOG_BYTES",
    "thread_logs_bytes": "STEPGRAPH_THREAD_LOGS_BYTES",
    "finished_runs_bytes": "STEPGRAPH_FINISHED_RUNS_BYTES",
    "max_attempts": "STEPGRAPH_MAX_ATTEMPTS",
}
"""The environment variable of each field."""

"""``ClusterOptions``: the role of this process and the lease timings (flags or environment)."""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["ROLES", "ClusterOptions"]

ROLES = ("all", "api", "worker")


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number of seconds") from None
    if value <= 0:
        raise ValueError(f"{name} must be positive, got {raw!r}")
    return value


@dataclass
class ClusterOptions:
    """How this process takes part in a cluster.

    ``role``: ``api`` serves HTTP and never executes graph code; ``worker`` claims and
    executes runs (it still answers HTTP, e.g. for health checks); ``all`` does both.
    ``lease_ttl`` seconds a claim stays valid without a heartbeat; heartbeats every
    ``heartbeat`` seconds; the reaper looks for expired leases every ``reaper`` seconds.
    ``redis_url`` carries the event streams (``None``: a Postgres table + LISTEN/NOTIFY).
    ``prefix`` names the Redis keys (several clusters may share one Redis).
    """

    role: str = "all"
    redis_url: str | None = None
    lease_ttl: float = 30.0
    heartbeat: float = 10.0
    reaper: float = 15.0
    prefix: str = "sg:"
    stream_retention: float = 3600.0
    poll: float = 1.0
    """Seconds between queue polls when no wake-up arrives (delayed runs, lost notifications)."""

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"role must be one of {', '.join(ROLES)}, got {self.role!r}")
        if self.heartbeat >= self.lease_ttl:
            raise ValueError(f"the heartbeat interval ({self.heartbeat} s) must be shorter than the lease "
                             f"({self.lease_ttl} s)")

    @property
    def executes(self) -> bool:
        """Whether this process claims and executes runs."""
        return self.role in ("all", "worker")

    @classmethod
    def from_env(cls, *, role: str = "all", redis_url: str | None = None, lease_ttl: float | None = None,
                 heartbeat: float | None = None, reaper: float | None = None) -> ClusterOptions:
        """Flags first, then ``STEPGRAPH_LEASE_TTL_S`` / ``_HEARTBEAT_S`` / ``_REAPER_S`` (30/10/15)."""
        return cls(
            role=role, redis_url=redis_url or os.environ.get("STEPGRAPH_REDIS_URL") or None,
            lease_ttl=lease_ttl or _env_float("STEPGRAPH_LEASE_TTL_S", 30.0),
            heartbeat=heartbeat or _env_float("STEPGRAPH_HEARTBEAT_S", 10.0),
            reaper=reaper or _env_float("STEPGRAPH_REAPER_S", 15.0),
            prefix=os.environ.get("STEPGRAPH_REDIS_PREFIX", "sg:"),
        )


def pool_size(role: str, jobs: int) -> int:
    """Connections of this process's pool: an API process needs few, a worker about two per
    concurrent run (a step commit and a heartbeat or event write at once)."""
    if role == "api":
        return 8
    if role == "worker":
        return min(40, 2 * jobs + 4)
    return min(40, 2 * jobs + 8)

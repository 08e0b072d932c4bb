"""Scale-out: N API and M worker processes on shared PostgreSQL (and optionally Redis).

Postgres decides everything that must be unique: the run queue (``pgqueue``: rows claimed
with ``FOR UPDATE SKIP LOCKED``, one running run per thread by a partial unique index),
leases with a ``lease_epoch`` that fences every step commit (``fence``), heartbeat and
final status; expired leases are reclaimed by any process's reaper. Redis (optional)
carries the run event streams (``events``); without it the events go to a Postgres table
with ``LISTEN/NOTIFY`` wake-ups. ``wiring.build_cluster`` puts it together for ``app.py``.
"""

from stepgraph.server.cluster.options import ClusterOptions

__all__ = ["ClusterOptions"]

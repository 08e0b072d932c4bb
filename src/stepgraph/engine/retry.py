"""Retry policy decisions (pure)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from stepgraph.types import RetryPolicy, default_retry_on


def _matches(policy: RetryPolicy, exc: BaseException) -> bool:
    retry_on = policy.retry_on if policy.retry_on is not None else default_retry_on
    if isinstance(retry_on, type) and issubclass(retry_on, BaseException):
        return isinstance(exc, retry_on)
    if isinstance(retry_on, Sequence):
        return isinstance(exc, tuple(retry_on))
    return bool(retry_on(exc))


def retry_delay(
    policies: Sequence[RetryPolicy], exc: BaseException, attempt: int
) -> float | None:
    """Seconds to sleep before attempt ``attempt + 1``, or ``None`` to give up.

    The first policy whose ``retry_on`` matches ``exc`` decides; ``attempt`` counts from 1.
    """
    for policy in policies:
        if not _matches(policy, exc):
            continue
        if attempt >= policy.max_attempts:
            return None
        delay = min(policy.max_interval, policy.initial_interval * policy.backoff_factor ** (attempt - 1))
        if policy.jitter:
            delay += random.uniform(0, 1)
        return delay
    return None

"""Retry policy decisions (pure) and the default cache key."""

from __future__ import annotations

import pickle
import random
from collections.abc import Sequence
from typing import Any

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


def _freeze(value: Any, depth: int = 0) -> Any:
    if depth > 10:
        return value
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v, depth + 1)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v, depth + 1) for v in value)
    if isinstance(value, (set, frozenset)):
        return tuple(sorted(_freeze(v, depth + 1) for v in value))
    return value


def default_cache_key(*args: Any, **kwargs: Any) -> str:
    """A stable key for a node input: pickled after freezing dicts and sequences."""
    import hashlib

    frozen = (_freeze(args), _freeze(kwargs)) if kwargs else _freeze(args[0] if len(args) == 1 else args)
    return hashlib.blake2b(pickle.dumps(frozen, protocol=5), digest_size=16).hexdigest()

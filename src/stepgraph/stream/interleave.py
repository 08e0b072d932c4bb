"""``run.interleave(*names)``: several projections read together in arrival order.

Every item a subscribed ``StreamChannel`` holds carries the push stamp its mux gave it;
the next item out is the oldest among the channels' heads.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from stepgraph.stream.stream_channel import StreamChannel


def _claim(run: Any, names: tuple[str, ...], channels: dict[str, StreamChannel[Any]]) -> None:
    for name in names:
        ch = run.extensions[name]
        if not isinstance(ch, StreamChannel):
            raise TypeError(
                f"interleave() requires StreamChannel projections, got {type(ch).__name__} "
                f"for {name!r}"
            )
        if ch._is_async is None:
            raise TypeError(f"StreamChannel {name!r} has not been bound yet.")
        if ch._is_async:
            raise TypeError(
                f"StreamChannel {name!r} is bound to async mode — sync interleave() cannot "
                "consume async channels."
            )
        if ch._subscribed:
            raise RuntimeError(
                f"StreamChannel {name!r} already has a subscriber; use .tee(n) for fan-out."
            )
        ch._subscribed = True
        channels[name] = ch


def _retire(channels: dict[str, StreamChannel[Any]], done: set[str]) -> None:
    """Mark the channels that are closed and empty as done (raising a failed one's error)."""
    for name, ch in channels.items():
        if name not in done and ch._closed and not ch._items:
            if ch._error is not None:
                raise ch._error
            done.add(name)


def _oldest(channels: dict[str, StreamChannel[Any]], done: set[str]) -> str | None:
    best: tuple[int, str] | None = None
    for name, ch in channels.items():
        if name not in done and ch._items:
            stamp = ch._items[0][0]
            if best is None or stamp < best[0]:
                best = (stamp, name)
    return None if best is None else best[1]


def interleave(run: Any, names: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    channels: dict[str, StreamChannel[Any]] = {}
    try:
        _claim(run, names, channels)
        done: set[str] = set()
        while len(done) < len(channels):
            _retire(channels, done)
            name = _oldest(channels, done)
            if name is not None:
                yield name, channels[name]._items.popleft()[1]
                continue
            if len(done) == len(channels):
                break
            pump = run._mux._pump_fn
            if pump is None or not pump():
                before = len(done)
                _retire(channels, done)
                if len(done) == before and _oldest(channels, done) is None:
                    break
    finally:
        for ch in channels.values():
            ch._subscribed = False

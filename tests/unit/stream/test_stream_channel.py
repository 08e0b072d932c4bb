"""``StreamChannel``: lazy buffering, one subscriber, the pump, fan-out, failure."""

from __future__ import annotations

import asyncio

import pytest

from stepgraph.stream import StreamChannel


def bound(is_async: bool = False, name: str | None = None) -> StreamChannel[int]:
    ch: StreamChannel[int] = StreamChannel(name)
    ch._bind(is_async=is_async)
    return ch


def test_nothing_is_buffered_before_a_subscriber() -> None:
    ch = bound()
    ch.push(1)
    assert len(ch._items) == 0
    it = iter(ch)
    ch.push(2)
    ch.close()
    assert list(it) == [2]


def test_one_subscriber_and_matching_mode() -> None:
    ch = bound()
    iter(ch)
    with pytest.raises(RuntimeError, match="already has a subscriber"):
        iter(ch)
    with pytest.raises(TypeError, match="not been bound"):
        iter(StreamChannel())
    with pytest.raises(TypeError, match="async"):
        iter(bound(is_async=True))
    with pytest.raises(TypeError, match="sync"):
        aiter(bound(is_async=False))
    with pytest.raises(RuntimeError, match="already bound"):
        ch._bind(is_async=False)
    with pytest.raises(ValueError):
        StreamChannel(maxlen=0)


def test_cursor_pumps_when_empty_and_stops_when_the_pump_is_dry() -> None:
    ch = bound()
    produced = iter([1, 2, 3])

    def pump() -> bool:
        for item in produced:
            ch.push(item)
            return True
        return False

    ch._request_more = pump
    assert list(ch) == [1, 2, 3]


def test_failure_reaches_the_reader_after_the_queued_items() -> None:
    ch = bound()
    it = iter(ch)
    ch.push(1)
    ch.fail(ValueError("boom"))
    assert next(it) == 1
    with pytest.raises(ValueError, match="boom"):
        next(it)
    with pytest.raises(RuntimeError, match="closed"):
        ch.push(2)


def test_named_channel_forwards_every_push_even_unsubscribed() -> None:
    ch = bound(name="n")
    seen: list[int] = []
    ch._wire(seen.append)
    ch.push(1)
    ch.push(2)
    assert seen == [1, 2] and not ch._items


def test_tee_gives_each_branch_every_item() -> None:
    ch = bound()
    a, b = ch.tee(2)
    for i in range(3):
        ch.push(i)
    ch.close()
    assert list(a) == [0, 1, 2] and list(b) == [0, 1, 2]


def test_atee_and_async_cursor() -> None:
    async def main() -> tuple[list[int], list[int]]:
        ch = bound(is_async=True)
        a, b = ch.atee(2)
        for i in range(3):
            ch.push(i)
        ch.close()
        return [x async for x in a], [x async for x in b]

    assert asyncio.run(main()) == ([0, 1, 2], [0, 1, 2])

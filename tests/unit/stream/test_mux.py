"""``StreamMux``: transformer order, suppression, seq numbers, forwarding, both lanes."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stepgraph.stream import ProtocolEvent, StreamChannel, StreamTransformer
from stepgraph.stream._convert import make_event
from stepgraph.stream._mux import StreamMux


class Recorder(StreamTransformer):
    def __init__(self, scope: tuple[str, ...] = (), tag: str = "r", keep: bool = True) -> None:
        super().__init__(scope)
        self.tag, self.keep, self.seen, self.ended = tag, keep, [], None
        self.out: StreamChannel[str] = StreamChannel(f"{tag}-out")

    def init(self) -> dict[str, Any]:
        return {self.tag: self.out}

    def process(self, event: ProtocolEvent) -> bool:
        self.seen.append(event["method"])
        self.out.push(event["method"])
        return self.keep

    def finalize(self) -> None:
        self.ended = "done"

    def fail(self, err: BaseException) -> None:
        self.ended = err


class Early(Recorder):
    before_builtins = True


def test_order_seq_and_forwarded_channel_events() -> None:
    late, early = Recorder(tag="late"), Early(tag="early")
    mux = StreamMux([late, early])
    assert mux._transformers == [early, late]  # before_builtins first
    mux._events._subscribed = True
    mux.push(make_event("values", [], {"x": 1}))
    log = [e for _, e in mux._events._items]
    # channel pushes made while processing come before the event itself
    assert [e["method"] for e in log] == ["custom:early-out", "custom:late-out", "values"]
    assert [e["seq"] for e in log] == [1, 2, 3]


def test_a_transformer_can_keep_an_event_out_of_the_log() -> None:
    mux = StreamMux([Recorder(keep=False)])
    mux._events._subscribed = True
    mux.push(make_event("tasks", [], {}))
    assert [e["method"] for _, e in mux._events._items] == ["custom:r-out"]


def test_conflicting_keys_and_async_only_transformers_are_refused() -> None:
    with pytest.raises(ValueError, match="conflict"):
        StreamMux([Recorder(), Recorder()])

    class NeedsLoop(Recorder):
        async def aprocess(self, event: ProtocolEvent) -> bool:
            return True

    with pytest.raises(RuntimeError, match="async run"):
        StreamMux([NeedsLoop()])
    StreamMux([NeedsLoop()], is_async=True)


def test_close_and_fail_end_transformers_and_channels() -> None:
    t = Recorder()
    mux = StreamMux([t])
    mux.close()
    assert t.ended == "done" and t.out._closed and mux._events._closed
    t2 = Recorder()
    mux2 = StreamMux([t2])
    err = RuntimeError("x")
    mux2.fail(err)
    assert t2.ended is err and t2.out._error is err and mux2._events._error is err


def test_async_lane_awaits_scheduled_work_before_finalize() -> None:
    class Scheduled(Recorder):
        requires_async = True

        def process(self, event: ProtocolEvent) -> bool:
            async def later() -> None:
                await asyncio.sleep(0)
                self.seen.append("scheduled")

            self.schedule(later())
            return True

        async def afinalize(self) -> None:
            self.ended = list(self.seen)

    async def main() -> Scheduled:
        t = Scheduled()
        mux = StreamMux([t], is_async=True)
        await mux.apush(make_event("values", [], {}))
        await mux.aclose()
        return t

    assert asyncio.run(main()).ended == ["scheduled"]


def test_child_mux_needs_factories_and_shares_the_pump() -> None:
    with pytest.raises(RuntimeError, match="factories"):
        StreamMux([Recorder()])._make_child(("sub:1",))
    root = StreamMux(factories=[Recorder])
    root.bind_pump(lambda: False)
    child = root._make_child(("sub:1",))
    assert child.scope == ("sub:1",) and child._pump_fn is root._pump_fn
    assert child.extensions["r"] is not root.extensions["r"]

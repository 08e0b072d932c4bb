"""``RemoteGraph.stream_events(version="v3")`` against ``stepgraph serve`` (the SDK's v3
thread stream), compared with the same graphs run locally."""

from __future__ import annotations

import asyncio
import uuid
from types import ModuleType

import pytest

from stepgraph.pregel.remote import RemoteGraph
from stepgraph.types import Command


def test_sync_run_stream_values_and_output(stepgraph_url: str, graphs: ModuleType) -> None:
    remote = RemoteGraph("simple", url=stepgraph_url)
    local = graphs.simple.invoke({"value": "x"})
    with remote.stream_events({"value": "x"}, version="v3") as run:
        values = list(run.values)
        assert values[-1] == local
        assert run.output == local
        assert run.interrupted is False


def test_async_run_stream_output(stepgraph_url: str, graphs: ModuleType) -> None:
    remote = RemoteGraph("simple", url=stepgraph_url)

    async def main() -> object:
        async with await remote.astream_events({"value": "y"}, version="v3") as run:
            return await run.output()

    assert asyncio.run(main()) == graphs.simple.invoke({"value": "y"})


def test_interrupt_and_resume_with_a_command(stepgraph_url: str) -> None:
    remote = RemoteGraph("interrupt", url=stepgraph_url)
    config = {"configurable": {"thread_id": str(uuid.uuid4())}}
    with remote.stream_events({"value": "x"}, config, version="v3") as run:
        list(run.values)
        assert run.interrupted is True and len(run.interrupts) == 1
    with remote.stream_events(Command(resume="ok"), config, version="v3") as run:
        list(run.values)
        assert run.output["answer"] == "ok"


def test_what_a_remote_v3_run_cannot_take() -> None:
    remote = RemoteGraph("simple", url="http://127.0.0.1:9")
    with pytest.raises(NotImplementedError, match="interrupt_before"):
        remote.stream_events({}, version="v3", interrupt_before=["a"])
    with pytest.raises(NotImplementedError, match="context"):
        remote.stream_events({}, version="v3", context={})
    with pytest.raises(NotImplementedError, match="goto"):
        remote.stream_events(Command(goto="a"), version="v3")
    with pytest.raises(NotImplementedError, match="v2"):
        remote.stream_events({}, version="v2")

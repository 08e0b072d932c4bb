"""``stream_events(version="v3")`` / ``astream_events``: the run stream and its projections,
on both drivers. Each scenario reads the run through ``V3``, which drives the sync run stream
(``GraphRunStream``) or the async one (``AsyncGraphRunStream``) the same way."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, TypedDict

import pytest
from pydantic import BaseModel

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.config import RunnableConfig, get_stream_writer
from stepgraph.graph import END, START, MessagesState, StateGraph
from stepgraph.stream import (
    AsyncGraphRunStream,
    GraphRunStream,
    ProtocolEvent,
    StreamChannel,
    StreamTransformer,
)
from stepgraph.stream.transformers import CustomTransformer, UpdatesTransformer
from stepgraph.types import Command, interrupt


class S(TypedDict, total=False):
    x: str


def _add(tag: str) -> Callable[[S], S]:
    return lambda s: {"x": s.get("x", "") + tag}


def nested() -> Any:
    inner = StateGraph(S).add_node("i", _add("i")).add_edge(START, "i").compile()
    return (StateGraph(S).add_node("a", _add("a")).add_node("sub", inner)
            .add_edge(START, "a").add_edge("a", "sub").add_edge("sub", END).compile())


class V3:
    """One v3 run, read the same way on either driver."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def read(self, graph: Any, input: Any, read: Callable[[Any], Any],
             aread: Callable[[Any], Any], config: Any = None, **kwargs: Any) -> Any:
        if self.mode == "sync":
            run = graph.stream_events(input, config, version="v3", **kwargs)
            assert isinstance(run, GraphRunStream)
            return read(run)

        async def main() -> Any:
            run = await graph.astream_events(input, config, version="v3", **kwargs)
            assert isinstance(run, AsyncGraphRunStream)
            return await aread(run)

        return asyncio.run(main())

    def values_and_output(self, graph: Any, input: Any, **kw: Any) -> tuple[list[Any], Any]:
        async def aread(run: Any) -> Any:
            return [v async for v in run.values], await run.output()

        return self.read(graph, input, lambda r: (list(r.values), r.output), aread, **kw)

    def projection(self, graph: Any, input: Any, key: str, **kw: Any) -> list[Any]:
        async def aread(run: Any) -> Any:
            return [v async for v in run.extensions[key]]

        return self.read(graph, input, lambda r: list(r.extensions[key]), aread, **kw)

    def events(self, graph: Any, input: Any, **kw: Any) -> list[ProtocolEvent]:
        async def aread(run: Any) -> Any:
            return [e async for e in run]

        return self.read(graph, input, list, aread, **kw)

    def subgraphs(self, graph: Any, input: Any) -> list[tuple[Any, ...]]:
        def read(run: Any) -> Any:
            out = []
            for h in run.subgraphs:
                values = list(h.values)  # subscribe before the next pump
                out.append((h.graph_name, len(h.path), values, h.status))
            return out

        async def aread(run: Any) -> Any:
            out = []
            async for h in run.subgraphs:
                values = [v async for v in h.values]
                out.append((h.graph_name, len(h.path), values, h.status))
            return out

        return self.read(graph, input, read, aread)


@pytest.fixture(params=["sync", "async"])
def v3(request: pytest.FixtureRequest) -> V3:
    return V3(request.param)


def test_values_and_output(v3: V3) -> None:
    values, output = v3.values_and_output(nested(), {"x": ""})
    assert values == [{"x": ""}, {"x": "a"}, {"x": "ai"}]  # own level only
    assert output == {"x": "ai"}


def test_subgraph_handles_have_their_own_values_and_status(v3: V3) -> None:
    assert v3.subgraphs(nested(), {"x": ""}) == [("sub", 1, [{"x": "ai"}], "completed")]


def test_lifecycle_and_raw_events(v3: V3) -> None:
    lifecycle = v3.projection(nested(), {"x": ""}, "lifecycle")
    assert [(p["event"], p.get("graph_name")) for p in lifecycle] == [
        ("started", "sub"), ("completed", None)]
    events = v3.events(nested(), {"x": ""})
    seqs = [e["seq"] for e in events]
    assert seqs == sorted(seqs) == list(range(1, len(seqs) + 1))
    methods = [e["method"] for e in events]
    assert "tasks" not in methods and methods.count("lifecycle") == 2
    assert {tuple(e["params"]["namespace"]) for e in events if e["method"] == "values"} >= {()}


def test_opt_in_projections_and_custom_channels(v3: V3) -> None:
    def write(s: S) -> S:
        get_stream_writer()({"hello": 1})
        return {"x": "w"}

    graph = StateGraph(S).add_node("w", write).add_edge(START, "w").compile()
    assert v3.projection(graph, {}, "custom", transformers=[CustomTransformer]) == [{"hello": 1}]
    assert v3.projection(graph, {}, "updates", transformers=[UpdatesTransformer]) == [
        {"w": {"x": "w"}}]

    class Count(StreamTransformer):
        def __init__(self, scope: tuple[str, ...] = ()) -> None:
            super().__init__(scope)
            self.ch: StreamChannel[int] = StreamChannel("count")
            self.n = 0

        def init(self) -> dict[str, Any]:
            return {"count": self.ch}

        def process(self, event: ProtocolEvent) -> bool:
            if event["method"] == "values":
                self.n += 1
                self.ch.push(self.n)
            return True

    events = v3.events(graph, {"x": ""}, transformers=[Count])
    assert [e["params"]["data"] for e in events if e["method"] == "custom:count"] == [1, 2]


def test_interrupt_then_resume(v3: V3) -> None:
    def ask(s: S) -> S:
        return {"x": interrupt("name?")}

    graph = StateGraph(S).add_node("ask", ask).add_edge(START, "ask").compile(
        checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": f"v3-{v3.mode}"}}

    async def aread(run: Any) -> Any:
        return await run.interrupted(), [i.value for i in await run.interrupts()]

    got = v3.read(graph, {"x": ""}, lambda r: (r.interrupted, [i.value for i in r.interrupts]),
                  aread, config)
    assert got == (True, ["name?"])
    _, output = v3.values_and_output(graph, Command(resume="bob"), config=config)
    assert output == {"x": "bob"}


def test_errors_reach_every_projection(v3: V3) -> None:
    def boom(s: S) -> S:
        raise ValueError("boom")

    inner = StateGraph(S).add_node("b", boom).add_edge(START, "b").compile()
    graph = StateGraph(S).add_node("sub", inner).add_edge(START, "sub").compile()
    with pytest.raises(ValueError, match="boom"):
        v3.values_and_output(graph, {})

    def read(run: Any) -> Any:
        handles: list[Any] = []
        with pytest.raises(ValueError):  # the projection fails with the run's error
            for h in run.subgraphs:
                handles.append(h)
        with pytest.raises(ValueError):
            _ = run.output
        return [(h.status, h.error) for h in handles]

    async def aread(run: Any) -> Any:
        handles: list[Any] = []
        with pytest.raises(ValueError):
            async for h in run.subgraphs:
                handles.append(h)
        with pytest.raises(ValueError):
            await run.output()
        return [(h.status, h.error) for h in handles]

    assert v3.read(graph, {}, read, aread) == [("failed", "boom")]


def test_abort_stops_the_run(v3: V3) -> None:
    ran: list[str] = []

    def step(tag: str) -> Callable[[S], S]:
        def node(s: S) -> S:
            ran.append(tag)
            return {"x": tag}
        return node

    graph = (StateGraph(S).add_node("a", step("a")).add_node("b", step("b"))
             .add_edge(START, "a").add_edge("a", "b").compile())

    def read(run: Any) -> Any:
        with run:
            first = next(iter(run.values))
        return first, run._exhausted, run._mux._events._closed

    async def aread(run: Any) -> Any:
        async with run:
            first = await anext(aiter(run.values))
        return first, run._exhausted, run._mux._events._closed

    assert v3.read(graph, {"x": ""}, read, aread) == ({"x": ""}, True, True)
    assert ran == []  # the first values came before any node ran


def test_unread_projections_do_not_buffer_the_run(v3: V3) -> None:
    graph = StateGraph(S).add_node("a", _add("a")).add_edge(START, "a").compile()

    def read(run: Any) -> Any:
        _ = run.output
        return [len(ch._items) for ch in run.extensions.values()] + [len(run._mux._events._items)]

    async def aread(run: Any) -> Any:
        await run.output()
        return [len(ch._items) for ch in run.extensions.values()] + [len(run._mux._events._items)]

    assert set(v3.read(graph, {}, read, aread)) == {0}


def test_v3_owns_stream_mode_and_subgraphs(v3: V3) -> None:
    with pytest.raises(TypeError, match="stream_mode"):
        v3.values_and_output(nested(), {}, stream_mode="values")
    with pytest.raises(TypeError, match="pre-built"):
        v3.values_and_output(nested(), {}, transformers=[CustomTransformer()])


def test_chat_model_tokens_on_messages(v3: V3) -> None:
    fake = pytest.importorskip("langchain_core.language_models")
    model = fake.GenericFakeChatModel(messages=iter(["hello big world"]))

    def call(state: MessagesState) -> dict[str, Any]:
        return {"messages": model.invoke(state["messages"])}

    graph = StateGraph(MessagesState).add_node("call", call).add_edge(START, "call").compile()

    def read(run: Any) -> Any:
        return [(m.node, "".join(m.text)) for m in run.messages]

    async def aread(run: Any) -> Any:
        out = []
        async for m in run.messages:
            out.append((m.node, "".join([t async for t in m.text])))
        return out

    assert v3.read(graph, {"messages": "hi"}, read, aread) == [("call", "hello big world")]


def test_pydantic_state_values_are_models(v3: V3) -> None:
    class P(BaseModel):
        x: str = ""

    graph = StateGraph(P).add_node("a", lambda s: {"x": s.x + "a"}).add_edge(START, "a").compile()
    values, output = v3.values_and_output(graph, {"x": ""})
    assert all(isinstance(v, P) for v in values) and output == P(x="a")


def test_a_graph_streaming_messages_inside_a_v3_node_keeps_v1_chunks(v3: V3) -> None:
    fake = pytest.importorskip("langchain_core.language_models")
    from langchain_core.messages import AIMessageChunk

    model = fake.GenericFakeChatModel(messages=iter(["inner words"]))
    inner = (StateGraph(MessagesState)
             .add_node("m", lambda s: {"messages": model.invoke(s["messages"])})
             .add_edge(START, "m").compile())

    class Outer(TypedDict, total=False):
        kinds: list[str]

    def outer_node(s: Outer, config: RunnableConfig) -> Outer:
        parts = list(inner.stream({"messages": "hi"}, config, stream_mode="messages"))
        return {"kinds": sorted({type(p).__name__ for p, _ in parts})}

    graph = StateGraph(Outer).add_node("o", outer_node).add_edge(START, "o").compile()
    _, output = v3.values_and_output(graph, {"kinds": []})
    assert output == {"kinds": [AIMessageChunk.__name__]}


def test_v2_invoke_and_stream_type_pydantic_state(v3: V3) -> None:
    class P(BaseModel):
        x: str = ""

    graph = StateGraph(P).add_node("a", lambda s: {"x": s.x + "a"}).add_edge(START, "a").compile()
    if v3.mode == "sync":
        result = graph.invoke({"x": ""}, version="v2")
        parts = list(graph.stream({"x": ""}, stream_mode="values", version="v2"))
    else:
        result = asyncio.run(graph.ainvoke({"x": ""}, version="v2"))

        async def collect() -> list[Any]:
            return [p async for p in graph.astream({"x": ""}, stream_mode="values", version="v2")]

        parts = asyncio.run(collect())
    assert result.value == P(x="a")
    assert [p["data"] for p in parts] == [P(x=""), P(x="a")]
    assert graph.invoke({"x": ""}) == {"x": "a"}  # v1 keeps dicts


def test_a_v3_run_inside_a_node_sees_its_own_subgraphs(v3: V3) -> None:
    class N(TypedDict, total=False):
        x: str
        seen: list[str]

    inner = nested()

    def node(s: N) -> N:
        run = inner.stream_events({"x": ""}, version="v3")
        names = [h.graph_name for h in run.subgraphs]
        return {"seen": [*names, run.output["x"]]}

    graph = StateGraph(N).add_node("n", node).add_edge(START, "n").compile()
    _, output = v3.values_and_output(graph, {"x": ""})
    assert output["seen"] == ["sub", "ai"]

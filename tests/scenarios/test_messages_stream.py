"""stream_mode="messages": chat-model tokens and node messages, with their metadata.

Chat models are langchain-core's fakes: ``GenericFakeChatModel`` streams a reply split on
spaces (``"a b"`` -> ``"a"``, ``" "``, ``"b"``), ``FakeListChatModel`` one character at a
time, and ``FakeMessagesListChatModel`` cannot stream (its reply comes whole, on llm end).
Expected outputs were taken from LangGraph 1.2.22.
"""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import (
    FakeListChatModel,
    FakeMessagesListChatModel,
    GenericFakeChatModel,
)
from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.config import get_stream_writer
from stepgraph.constants import TAG_NOSTREAM
from stepgraph.func import entrypoint, task
from stepgraph.graph import START, MessagesState, StateGraph
from stepgraph.graph.message import push_message
from stepgraph.types import Command, Send, interrupt

HI = {"messages": [HumanMessage("hi", id="h1")]}
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def fake(*replies: str, **kwargs: Any) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(content=r) for r in replies]), **kwargs)


def one_node(fn: Any, **kwargs: Any) -> Any:
    g = StateGraph(MessagesState)
    g.add_node("call", fn, **kwargs)
    g.add_edge(START, "call")
    return g


def calls(model: Any) -> Any:
    """A node that answers with ``model.invoke(messages)`` (no config passed)."""

    def call(state: MessagesState) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    return call


def _norm(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return UUID.sub(lambda m: ids.setdefault(m.group(0), f"<{len(ids)}>"), value)
    if isinstance(value, (list, tuple)):
        return type(value)(_norm(v, ids) for v in value)
    if isinstance(value, dict):
        return {k: _norm(v, ids) for k, v in value.items() if k != "lc_versions"}
    return value


def parts(chunks: list[Any], *, subgraphs: bool = False) -> list[tuple[Any, ...]]:
    """(ns?, type, content, id, metadata) with uuids numbered in order of appearance."""
    ids: dict[str, str] = {}
    out = []
    for chunk in chunks:
        ns, (msg, meta) = chunk if subgraphs else ((), chunk)
        ns = _norm(ns, ids)
        row = (type(msg).__name__, msg.content, _norm(msg.id, ids), _norm(meta, ids))
        out.append((ns, *row) if subgraphs else row)
    return out


def node_meta(node: str, step: int, ns: str, **extra: Any) -> dict[str, Any]:
    return {
        "langgraph_step": step,
        "langgraph_node": node,
        "langgraph_triggers": (f"branch:to:{node}",),
        "langgraph_path": ("__pregel_pull", node),
        "langgraph_checkpoint_ns": ns,
        **extra,
    }


def model_meta(node: str, step: int, ns: str, provider: str, **extra: Any) -> dict[str, Any]:
    return node_meta(
        node, step, ns,
        checkpoint_ns=ns, ls_integration="langchain_chat_model", ls_model_type="chat",
        ls_provider=provider, **extra,
    )


def output_meta(node: str, step: int, ns: str, **extra: Any) -> dict[str, Any]:
    """Metadata of a message a node returned."""
    return node_meta(node, step, ns, ls_integration="langgraph", **extra)


# -- chat-model tokens -------------------------------------------------------------------------


def test_invoke_without_config_streams_tokens(driver):
    """model.invoke(messages) in a node streams its tokens (the node's config is ambient)."""
    g = one_node(calls(fake("hello big world"))).compile()
    got = parts(driver.stream(g, HI, stream_mode="messages"))
    meta = model_meta("call", 1, "call:<1>", "genericfakechatmodel")
    assert got == [
        ("AIMessageChunk", "hello", "lc_run--<0>", meta),
        ("AIMessageChunk", " ", "lc_run--<0>", meta),
        ("AIMessageChunk", "big", "lc_run--<0>", meta),
        ("AIMessageChunk", " ", "lc_run--<0>", meta),
        ("AIMessageChunk", "world", "lc_run--<0>", meta),
    ]


def test_invoke_with_config_carries_user_metadata_tags_and_thread(driver):
    """Run metadata, node metadata, run tags and thread_id reach the chunk metadata."""
    model = fake("a b")

    def call(state: MessagesState, config) -> dict:
        return {"messages": [model.invoke(state["messages"], config)]}

    g = one_node(call, metadata={"nm": 1}).compile()
    config = {"tags": ["t1"], "metadata": {"um": "x"}, "configurable": {"thread_id": "T"}}
    got = parts(driver.stream(g, HI, config, stream_mode="messages"))
    meta = model_meta(
        "call", 1, "call:<1>", "genericfakechatmodel", nm=1, um="x", tags=["t1"], thread_id="T"
    )
    assert got == [
        ("AIMessageChunk", "a", "lc_run--<0>", meta),
        ("AIMessageChunk", " ", "lc_run--<0>", meta),
        ("AIMessageChunk", "b", "lc_run--<0>", meta),
    ]


def test_model_tags_and_metadata_are_merged(driver):
    """The model's own tags follow the run's; its metadata is merged in."""
    g = one_node(calls(fake("g1", tags=["mt"], metadata={"mm": 2}))).compile()
    got = parts(driver.stream(g, HI, {"tags": ["ut"]}, stream_mode="messages"))
    meta = model_meta("call", 1, "call:<1>", "genericfakechatmodel", mm=2, tags=["ut", "mt"])
    assert got == [("AIMessageChunk", "g1", "lc_run--<0>", meta)]


def test_model_stream_in_node_then_new_returned_message(driver):
    """model.stream() chunks stream; a new message the node returns streams at its end."""
    model = fake("x y")

    def call(state: MessagesState) -> dict:
        text = "".join(chunk.content for chunk in model.stream(state["messages"]))
        return {"messages": [AIMessage(text, id="final")]}

    got = parts(driver.stream(one_node(call).compile(), HI, stream_mode="messages"))
    meta = model_meta("call", 1, "call:<1>", "genericfakechatmodel")
    assert got == [
        ("AIMessageChunk", "x", "lc_run--<0>", meta),
        ("AIMessageChunk", " ", "lc_run--<0>", meta),
        ("AIMessageChunk", "y", "lc_run--<0>", meta),
        ("AIMessage", "x y", "final", output_meta("call", 1, "call:<1>")),
    ]


def test_async_node_ainvoke_streams_tokens():
    """await model.ainvoke() in an async node streams its tokens (astream)."""
    model = fake("p q")

    async def call(state: MessagesState) -> dict:
        return {"messages": [await model.ainvoke(state["messages"])]}

    g = one_node(call).compile()

    async def collect() -> list[Any]:
        return [c async for c in g.astream(HI, stream_mode="messages")]

    got = parts(asyncio.run(collect()))
    assert [(t, c) for t, c, _, _ in got] == [
        ("AIMessageChunk", "p"), ("AIMessageChunk", " "), ("AIMessageChunk", "q"),
    ]
    assert got[0][3] == model_meta("call", 1, "call:<1>", "genericfakechatmodel")


def test_async_node_astream_streams_tokens():
    """async for chunk in model.astream() in an async node streams each chunk."""
    model = fake("u v")

    async def call(state: MessagesState) -> dict:
        text = ""
        async for chunk in model.astream(state["messages"]):
            text += chunk.content
        return {"messages": [AIMessage(text, id="done")]}

    g = one_node(call).compile()

    async def collect() -> list[Any]:
        return [c async for c in g.astream(HI, stream_mode="messages")]

    got = parts(asyncio.run(collect()))
    assert [(t, c, i) for t, c, i, _ in got] == [
        ("AIMessageChunk", "u", "lc_run--<0>"),
        ("AIMessageChunk", " ", "lc_run--<0>"),
        ("AIMessageChunk", "v", "lc_run--<0>"),
        ("AIMessage", "u v", "done"),
    ]


def test_model_that_cannot_stream_yields_its_message_on_end(driver):
    """A chat model without streaming support yields its whole message once."""
    model = FakeMessagesListChatModel(responses=[AIMessage(content="whole", id="w1")])
    got = parts(driver.stream(one_node(calls(model)).compile(), HI, stream_mode="messages"))
    assert got == [
        ("AIMessage", "whole", "w1", model_meta("call", 1, "call:<0>", "fakemessageslistchatmodel"))
    ]


def test_fake_list_chat_model_streams_characters(driver):
    """FakeListChatModel streams one character per chunk; the reply is not repeated."""
    model = FakeListChatModel(responses=["ab"])
    got = parts(driver.stream(one_node(calls(model)).compile(), HI, stream_mode="messages"))
    meta = model_meta("call", 1, "call:<1>", "fakelistchatmodel")
    assert got == [
        ("AIMessageChunk", "a", "lc_run--<0>", meta),
        ("AIMessageChunk", "b", "lc_run--<0>", meta),
    ]


def test_nostream_model_is_skipped_but_its_returned_message_streams(driver):
    """A model tagged nostream yields no tokens; the message the node returns still streams."""
    quiet = fake("n o", tags=[TAG_NOSTREAM])
    loud = fake("s t")

    def call(state: MessagesState) -> dict:
        return {"messages": [quiet.invoke(state["messages"]), loud.invoke(state["messages"])]}

    got = parts(driver.stream(one_node(call).compile(), HI, stream_mode="messages"))
    meta = model_meta("call", 1, "call:<1>", "genericfakechatmodel")
    assert got == [
        ("AIMessageChunk", "s", "lc_run--<0>", meta),
        ("AIMessageChunk", " ", "lc_run--<0>", meta),
        ("AIMessageChunk", "t", "lc_run--<0>", meta),
        ("AIMessage", "n o", "lc_run--<2>", output_meta("call", 1, "call:<1>")),
    ]


def test_nostream_with_config(driver):
    """model.with_config(tags=["nostream"]) is skipped too."""
    model = fake("n o").with_config(tags=[TAG_NOSTREAM])
    got = parts(driver.stream(one_node(calls(model)).compile(), HI, stream_mode="messages"))
    assert got == [("AIMessage", "n o", "lc_run--<0>", output_meta("call", 1, "call:<1>"))]


def test_chunks_stream_while_the_node_runs():
    """A sync stream yields a chunk before the node that produced it has finished."""
    seen = threading.Event()

    class Slow(GenericFakeChatModel):
        def _stream(self, *args: Any, **kwargs: Any) -> Any:
            for i, chunk in enumerate(super()._stream(*args, **kwargs)):
                if i == 1 and not seen.wait(5):
                    raise TimeoutError("the first chunk was not streamed live")
                yield chunk

    model = Slow(messages=iter([AIMessage(content="one two")]))
    got = []
    for msg, _ in one_node(calls(model)).compile().stream(HI, stream_mode="messages"):
        got.append(msg.content)
        seen.set()
    assert got == ["one", " ", "two"]


def test_chunks_stream_while_the_node_runs_async():
    """An async stream yields a chunk before the async node that produced it has finished."""

    async def main() -> list[str]:
        seen = asyncio.Event()

        class Slow(GenericFakeChatModel):
            async def _astream(self, *args: Any, **kwargs: Any) -> Any:
                i = 0
                async for chunk in super()._astream(*args, **kwargs):
                    if i == 1:
                        await asyncio.wait_for(seen.wait(), 5)
                    i += 1
                    yield chunk

        model = Slow(messages=iter([AIMessage(content="one two")]))

        async def call(state: MessagesState) -> dict:
            return {"messages": [await model.ainvoke(state["messages"])]}

        got = []
        async for msg, _ in one_node(call).compile().astream(HI, stream_mode="messages"):
            got.append(msg.content)
            seen.set()
        return got

    assert asyncio.run(main()) == ["one", " ", "two"]


def test_parallel_nodes_stream_their_own_tokens(driver):
    """Two nodes in one step: each chunk carries its own node's metadata."""
    g = StateGraph(MessagesState)
    g.add_node("a", calls(fake("a1 a2")))
    g.add_node("b", calls(fake("b1 b2")))
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    got = driver.stream(g.compile(), HI, stream_mode="messages")
    assert sorted((meta["langgraph_node"], m.content) for m, meta in got) == [
        ("a", " "), ("a", "a1"), ("a", "a2"), ("b", " "), ("b", "b1"), ("b", "b2"),
    ]


def test_batch_in_node_streams_every_call(driver):
    """model.batch() inside a node streams the tokens of each call."""
    model = fake("b1 b2", "b3 b4")

    def call(state: MessagesState) -> dict:
        return {"messages": model.batch([state["messages"], state["messages"]])}

    got = driver.stream(one_node(call).compile(), HI, stream_mode="messages")
    assert sorted(m.content for m, _ in got) == [" ", " ", "b1", "b2", "b3", "b4"]


def test_user_callbacks_still_called(driver):
    """The run's own callbacks see the model's tokens too."""
    tokens: list[str] = []

    class Collect(BaseCallbackHandler):
        def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
            tokens.append(token)

    g = one_node(calls(fake("c1 c2"))).compile()
    got = driver.stream(g, HI, {"callbacks": [Collect()]}, stream_mode="messages")
    assert [m.content for m, _ in got] == ["c1", " ", "c2"]
    assert tokens == ["c1", " ", "c2"]


def test_user_callback_manager_is_kept(driver):
    """A callback manager given as the run's callbacks keeps working and is not changed."""
    from langchain_core.callbacks import CallbackManager

    tokens: list[str] = []

    class Collect(BaseCallbackHandler):
        def on_llm_new_token(self, token: str, **kwargs: Any) -> None:
            tokens.append(token)

    collect = Collect()
    manager = CallbackManager(handlers=[collect], inheritable_handlers=[collect])
    g = one_node(calls(fake("c1 c2"))).compile()
    got = driver.stream(g, HI, {"callbacks": manager}, stream_mode="messages")
    assert [m.content for m, _ in got] == ["c1", " ", "c2"]
    assert tokens == ["c1", " ", "c2"]
    assert manager.handlers == [collect] and manager.inheritable_handlers == [collect]


def test_tokens_before_an_error_are_streamed(driver):
    """Chunks streamed before a node fails reach the caller; the error is raised."""
    model = fake("q1 q2")

    def call(state: MessagesState) -> dict:
        model.invoke(state["messages"])
        raise ValueError("boom")

    chunks, exc = driver.stream_partial(one_node(call).compile(), HI, stream_mode="messages")
    assert [m.content for m, _ in chunks] == ["q1", " ", "q2"]
    assert isinstance(exc, ValueError)


# -- messages returned by nodes ------------------------------------------------------------------


def test_returned_messages_deduped_by_id_and_input_counts_as_seen(driver):
    """Only messages not seen before stream: input messages and repeats do not."""

    def a(state: MessagesState) -> dict:
        return {"messages": [HumanMessage("hi", id="h1"), AIMessage("new", id="a1")]}

    def b(state: MessagesState) -> Command:
        return Command(update={"messages": [AIMessage("cmd", id="a2"), AIMessage("again", id="a1")]})

    g = StateGraph(MessagesState)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    got = parts(driver.stream(g.compile(), HI, stream_mode="messages"))
    assert got == [
        ("AIMessage", "new", "a1", output_meta("a", 1, "a:<0>")),
        ("AIMessage", "cmd", "a2", output_meta("b", 2, "b:<1>")),
    ]


def test_input_messages_without_ids_are_not_streamed(driver):
    """Graph input (messages without ids, tuples, dicts) is never streamed."""
    g = one_node(calls(fake("a"))).compile()
    inp = {"messages": [HumanMessage("hi"), ("user", "yo"), {"role": "user", "content": "hey"}]}
    got = driver.stream(g, inp, stream_mode="messages")
    assert [(type(m).__name__, m.content) for m, _ in got] == [("AIMessageChunk", "a")]


def test_returned_message_without_id_gets_the_state_id(driver):
    """A returned message without an id streams with the id it has in the state."""

    def call(state: MessagesState) -> dict:
        return {"messages": [AIMessage("no id")]}

    out = driver.stream(one_node(call).compile(), HI, stream_mode=["messages", "values"])
    assert [mode for mode, _ in out] == ["values", "messages", "values"]
    streamed = out[1][1][0]
    assert streamed.id is not None
    assert out[2][1]["messages"][-1].id == streamed.id


def test_messages_from_send_tasks(driver):
    """Each Send task streams the messages it returns, with its push path."""

    def fan(state: MessagesState) -> list[Send]:
        return [Send("w", {"messages": [AIMessage(f"w{i}", id=f"w{i}")]}) for i in range(2)]

    def w(state: MessagesState) -> dict:
        last = state["messages"][-1]
        return {"messages": [AIMessage(f"from {last.content}", id=f"x{last.id}")]}

    g = StateGraph(MessagesState)
    g.add_node("w", w)
    g.add_conditional_edges(START, fan, ["w"])
    got = driver.stream(g.compile(), HI, stream_mode="messages")
    assert sorted((m.content, meta["langgraph_node"], meta["langgraph_path"][:2]) for m, meta in got) == [
        ("from w0", "w", ("__pregel_push", 0)),
        ("from w1", "w", ("__pregel_push", 1)),
    ]


def test_messages_stream_before_the_node_update(driver):
    """With several modes, a node's messages come before its update."""
    g = one_node(calls(fake("u v"))).compile()
    out = driver.stream(g, HI, stream_mode=["messages", "updates"])
    assert [(mode, p[0].content if mode == "messages" else list(p)) for mode, p in out] == [
        ("messages", "u"), ("messages", " "), ("messages", "v"), ("updates", ["call"]),
    ]


def test_custom_and_messages_interleave_in_order(driver):
    """custom chunks and model tokens keep the order in which the node produced them."""
    model = fake("k1 k2")

    def call(state: MessagesState) -> dict:
        write = get_stream_writer()
        write("before")
        reply = model.invoke(state["messages"])
        write("after")
        return {"messages": [reply]}

    out = driver.stream(one_node(call).compile(), HI, stream_mode=["messages", "custom", "values"])
    assert [
        (mode, p[0].content if mode == "messages" else p if mode == "custom" else len(p["messages"]))
        for mode, p in out
    ] == [
        ("values", 1), ("custom", "before"), ("messages", "k1"), ("messages", " "),
        ("messages", "k2"), ("custom", "after"), ("values", 2),
    ]


def test_invoke_with_messages_mode_returns_the_chunks(driver):
    """invoke(stream_mode="messages") returns the list of (message, metadata) pairs."""
    got = driver.invoke(one_node(calls(fake("i j"))).compile(), HI, stream_mode="messages")
    assert [(type(m).__name__, m.content) for m, _ in got] == [
        ("AIMessageChunk", "i"), ("AIMessageChunk", " "), ("AIMessageChunk", "j"),
    ]


def test_v2_parts(driver):
    """version="v2" wraps each pair as {"type": "messages", "ns": (), "data": (msg, meta)}."""
    g = one_node(calls(fake("i j"))).compile()
    out = driver.stream(g, HI, stream_mode="messages", version="v2")
    assert [(p["type"], p["ns"], p["data"][0].content) for p in out] == [
        ("messages", (), "i"), ("messages", (), " "), ("messages", (), "j"),
    ]
    assert all(isinstance(p["data"][0], AIMessageChunk) for p in out)


@pytest.mark.stepgraph_only
def test_other_modes_do_not_stream_tokens(driver):
    """Without messages mode the node config gets no callbacks (LangGraph always passes a
    callback manager) and nothing is streamed."""
    seen: list[Any] = []

    def call(state: MessagesState, config) -> dict:
        seen.append(config.get("callbacks"))
        return {"messages": [fake("i j").invoke(state["messages"])]}

    out = driver.stream(one_node(call).compile(), HI, stream_mode="updates")
    assert len(out) == 1
    assert seen == [None]


def test_interrupt_and_resume(driver):
    """Tokens before an interrupt stream; on resume the node re-runs and streams again."""
    model = fake("q1 q2", "z1 z2")

    def call(state: MessagesState) -> dict:
        reply = model.invoke(state["messages"])
        answer = interrupt("ok?")
        return {"messages": [reply, AIMessage(answer, id="ans")]}

    g = one_node(call).compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "i"}}
    first = driver.stream(g, HI, config, stream_mode="messages")
    assert [m.content for m, _ in first] == ["q1", " ", "q2"]
    second = driver.stream(g, Command(resume="yes"), config, stream_mode="messages")
    assert [m.content for m, _ in second] == ["z1", " ", "z2", "yes"]


# -- subgraphs ---------------------------------------------------------------------------------


def _sub(model: Any) -> Any:
    def inner(state: MessagesState, config) -> dict:
        return {"messages": [model.invoke(state["messages"], config)]}

    s = StateGraph(MessagesState)
    s.add_node("inner", inner)
    s.add_edge(START, "inner")
    return s.compile()


def _outer_then_sub(model: Any) -> Any:
    def outer(state: MessagesState) -> dict:
        return {"messages": [AIMessage("outer", id="o1")]}

    g = StateGraph(MessagesState)
    g.add_node("outer", outer)
    g.add_node("sub", _sub(model))
    g.add_edge(START, "outer")
    g.add_edge("outer", "sub")
    return g.compile()


def test_subgraph_messages_surface_as_the_parent_node_output(driver):
    """Without subgraphs=True a subgraph's tokens are not streamed; its new message is, as
    the output of the parent node that ran it."""
    got = parts(driver.stream(_outer_then_sub(fake("s1 s2")), HI, stream_mode="messages"))
    assert got == [
        ("AIMessage", "outer", "o1", output_meta("outer", 1, "outer:<0>")),
        ("AIMessage", "s1 s2", "lc_run--<1>", output_meta("sub", 2, "sub:<2>")),
    ]


def test_subgraph_tokens_with_subgraphs(driver):
    """With subgraphs=True a subgraph's tokens stream under its namespace, once."""
    out = driver.stream(_outer_then_sub(fake("s1 s2")), HI, stream_mode="messages", subgraphs=True)
    meta = {
        **model_meta("inner", 1, "sub:<1>|inner:<3>", "genericfakechatmodel"),
        "checkpoint_ns": "sub:<1>",
    }
    assert parts(out, subgraphs=True) == [
        ((), "AIMessage", "outer", "o1", output_meta("outer", 1, "outer:<0>")),
        (("sub:<1>",), "AIMessageChunk", "s1", "lc_run--<2>", meta),
        (("sub:<1>",), "AIMessageChunk", " ", "lc_run--<2>", meta),
        (("sub:<1>",), "AIMessageChunk", "s2", "lc_run--<2>", meta),
    ]


def test_subgraph_metadata_has_thread_id(driver):
    """thread_id is in the metadata of subgraph chunks and of parent node outputs."""
    g = StateGraph(MessagesState)
    g.add_node("sub", _sub(fake("s1", "s1")))
    g.add_edge(START, "sub")
    g = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    out = driver.stream(g, HI, config, stream_mode="messages", subgraphs=True)
    meta = {
        **model_meta("inner", 1, "sub:<0>|inner:<2>", "genericfakechatmodel", thread_id="t"),
        "checkpoint_ns": "sub:<0>",
    }
    assert parts(out, subgraphs=True) == [(("sub:<0>",), "AIMessageChunk", "s1", "lc_run--<1>", meta)]
    config = {"configurable": {"thread_id": "t2"}}
    out = driver.stream(g, HI, config, stream_mode="messages")
    assert parts(out) == [
        ("AIMessage", "s1", "lc_run--<0>", output_meta("sub", 1, "sub:<1>", thread_id="t2"))
    ]


def test_nested_subgraph_reports_outermost_checkpoint_ns(driver):
    """Two levels deep, chunks stream under both namespaces; checkpoint_ns is the outer one."""
    mid = StateGraph(MessagesState)
    mid.add_node("mid", _sub(fake("d1")))
    mid.add_edge(START, "mid")
    g = StateGraph(MessagesState)
    g.add_node("top", mid.compile())
    g.add_edge(START, "top")
    out = driver.stream(g.compile(), HI, stream_mode="messages", subgraphs=True)
    meta = {
        **model_meta("inner", 1, "top:<0>|mid:<1>|inner:<3>", "genericfakechatmodel"),
        "checkpoint_ns": "top:<0>",
    }
    assert parts(out, subgraphs=True) == [
        (("top:<0>", "mid:<1>"), "AIMessageChunk", "d1", "lc_run--<2>", meta)
    ]


def _host(model: Any) -> Any:
    sub = _sub(model)

    def host(state: MessagesState) -> dict:
        return {"messages": sub.invoke(state)["messages"][-1:]}

    return _one(host)


def _one(fn: Any) -> Any:
    g = StateGraph(MessagesState)
    g.add_node("host", fn)
    g.add_edge(START, "host")
    return g.compile()


def test_graph_invoked_in_a_function_node_with_subgraphs(driver):
    """A graph invoked inside a node streams its tokens under the node's namespace."""
    out = driver.stream(_host(fake("f1 f2")), HI, stream_mode="messages", subgraphs=True)
    got = parts(out, subgraphs=True)
    assert [(ns, c) for ns, _, c, _, _ in got] == [
        (("host:<0>",), "f1"), (("host:<0>",), " "), (("host:<0>",), "f2"),
    ]
    assert got[0][4]["langgraph_node"] == "inner"
    assert got[0][4]["checkpoint_ns"] == "host:<0>"


def test_graph_invoked_in_a_function_node_without_subgraphs(driver):
    """Without subgraphs=True the inner tokens are not streamed; the returned message is."""
    got = parts(driver.stream(_host(fake("f1 f2")), HI, stream_mode="messages"))
    assert got == [("AIMessage", "f1 f2", "lc_run--<0>", output_meta("host", 1, "host:<1>"))]


# -- functional API ----------------------------------------------------------------------------


def test_functional_api_entrypoint_and_task_tokens(driver):
    """Tokens of an entrypoint and of a task it calls; the returned new message streams."""
    model = fake("e1", "t1")

    @task
    def ask(msgs: list) -> Any:
        return model.invoke(msgs)

    @entrypoint()
    def main(msgs: list) -> list:
        return [model.invoke(msgs), ask(msgs).result(), AIMessage("ret", id="r1")]

    got = driver.stream(main, [HumanMessage("hi", id="h1")], stream_mode="messages")
    assert [(type(m).__name__, m.content, meta["langgraph_node"]) for m, meta in got] == [
        ("AIMessageChunk", "e1", "main"),
        ("AIMessageChunk", "t1", "ask"),
        ("AIMessage", "ret", "main"),
    ]


# -- push_message --------------------------------------------------------------------------------


def test_push_message_streams_and_writes_state(driver):
    """push_message streams the message and (unless state_key=None) adds it to the state."""

    def call(state: MessagesState) -> dict:
        push_message(AIMessage("pushed", id="p1"))
        push_message(AIMessage("only streamed", id="p2"), state_key=None)
        return {}

    out = driver.stream(one_node(call).compile(), HI, stream_mode=["messages", "values"])
    ids: dict[str, str] = {}
    got = [
        (mode, (p[0].content, p[0].id, _norm(p[1], ids)) if mode == "messages" else [m.id for m in p["messages"]])
        for mode, p in out
    ]
    meta = node_meta("call", 1, "call:<0>")
    assert got == [
        ("values", ["h1"]),
        ("messages", ("pushed", "p1", meta)),
        ("messages", ("only streamed", "p2", meta)),
        ("values", ["h1", "p1"]),
    ]


def test_push_message_coerces_dicts_and_needs_an_id(driver):
    """A dict is coerced to a message; a message without an id raises ValueError."""
    results: list[Any] = []

    def call(state: MessagesState) -> dict:
        results.append(push_message({"role": "assistant", "content": "d", "id": "d1"}))
        try:
            push_message(AIMessage("no id"))
        except ValueError as exc:
            results.append(str(exc))
        return {}

    got = driver.stream(one_node(call).compile(), HI, stream_mode="messages")
    assert [(type(m).__name__, m.content, m.id) for m, _ in got] == [("AIMessage", "d", "d1")]
    assert isinstance(results[0], AIMessage)
    assert results[1] == "Message ID is required"


def test_pushed_message_is_not_streamed_again_when_returned(driver):
    """A pushed message that the node also returns streams once."""

    def call(state: MessagesState) -> dict:
        msg = push_message(AIMessage("once", id="p1"), state_key=None)
        return {"messages": [msg]}

    got = driver.stream(one_node(call).compile(), HI, stream_mode="messages")
    assert [m.id for m, _ in got] == ["p1"]


@pytest.mark.stepgraph_only
def test_push_message_unknown_state_key_is_a_coded_error(driver):
    """push_message(state_key=...) naming a key the state lacks raises SG205."""
    from stepgraph.errors import InvalidUpdateError

    def call(state: MessagesState) -> dict:
        push_message(AIMessage("x", id="x1"), state_key="nope")
        return {}

    with pytest.raises(InvalidUpdateError) as info:
        driver.stream(one_node(call).compile(), HI, stream_mode="messages")
    assert info.value.code == "SG205"


def test_push_message_outside_a_node_raises():
    """push_message needs a running node."""
    with pytest.raises(RuntimeError):
        push_message(AIMessage("x", id="x1"))


def test_run_coordinates_from_configurable_reach_message_metadata(driver):
    """The caller's ``thread_id``, ``checkpoint_id``, ``checkpoint_ns``, ``task_id``,
    ``run_id``, ``assistant_id`` and ``graph_id`` are copied into the messages' metadata;
    other configurable values (secrets, settings) are not."""
    g = StateGraph(MessagesState)
    g.add_node("n", lambda s: {"messages": HumanMessage(content="hi")})
    g.add_edge(START, "n")
    ids = {"thread_id": "th", "checkpoint_id": "c1", "checkpoint_ns": "ns1", "task_id": "t1",
           "run_id": "r1", "assistant_id": "a1", "graph_id": "g1"}
    config = {"configurable": {**ids, "api_key": "secret", "setting": {"x": 1}}}
    [(_, meta)] = driver.stream(g.compile(), {"messages": []}, config, stream_mode="messages")
    assert {k: meta.get(k) for k in ids} == ids
    assert "api_key" not in meta and "setting" not in meta

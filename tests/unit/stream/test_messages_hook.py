"""The hook for any LLM client: ``stepgraph.stream.messages.push_token`` / ``push_message``."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stepgraph.graph import START, StateGraph
from stepgraph.graph.message import add_messages
from stepgraph.stream.messages import push_message, push_token
from stepgraph.types import TimeoutPolicy


class Chat(TypedDict):
    messages: Annotated[list, add_messages(format="dict")]


HI = {"messages": [{"role": "user", "content": "hi", "id": "u1"}]}


def graph(fn: Any, **kwargs: Any) -> Any:
    g = StateGraph(Chat)
    g.add_node("llm", fn, **kwargs)
    g.add_edge(START, "llm")
    return g.compile()


def streaming_node(tokens: list[str], *, message_id: str | None = None) -> Any:
    def llm(state: Chat) -> dict:
        mid = message_id
        for token in tokens:
            mid = push_token(token, message_id=mid)
        return {"messages": [{"role": "assistant", "content": "".join(tokens), "id": mid}]}

    return llm


def test_string_tokens_stream_as_dict_chunks_with_one_id():
    """Each pushed string becomes an AIMessageChunk dict; the returned id is reused."""
    out = list(graph(streaming_node(["Hel", "lo"])).stream(HI, stream_mode="messages"))
    assert [chunk["content"] for chunk, _ in out] == ["Hel", "lo"]
    assert {chunk["type"] for chunk, _ in out} == {"AIMessageChunk"}
    ids = {chunk["id"] for chunk, _ in out}
    assert len(ids) == 1 and all(ids)


def test_metadata_is_the_nodes():
    """Pushed chunks carry the node's metadata (and the run's)."""
    config = {"metadata": {"user": "u"}, "configurable": {"thread_id": "t"}}
    out = list(graph(streaming_node(["a"], message_id="m1")).stream(HI, config, stream_mode="messages"))
    (chunk, meta), = out
    assert chunk == {"type": "AIMessageChunk", "content": "a", "id": "m1"}
    assert meta["langgraph_node"] == "llm"
    assert meta["langgraph_step"] == 1
    assert meta["langgraph_triggers"] == ("branch:to:llm",)
    assert meta["langgraph_path"] == ("__pregel_pull", "llm")
    assert meta["langgraph_checkpoint_ns"].startswith("llm:")
    assert meta["user"] == "u"
    assert meta["thread_id"] == "t"


def test_extra_metadata_and_dict_chunks():
    """A dict chunk keeps its keys (type defaults to AIMessageChunk); metadata merges in."""

    def llm(state: Chat) -> dict:
        push_token({"content": "x", "tool_call_chunks": []}, message_id="m", metadata={"ls_model_name": "mine"})
        push_token({"type": "AIMessageChunk", "content": "y", "id": "own"})
        return {}

    out = list(graph(llm).stream(HI, stream_mode="messages"))
    assert [chunk for chunk, _ in out] == [
        {"type": "AIMessageChunk", "content": "x", "tool_call_chunks": [], "id": "m"},
        {"type": "AIMessageChunk", "content": "y", "id": "own"},
    ]
    assert out[0][1]["ls_model_name"] == "mine"
    assert "ls_model_name" not in out[1][1]


def test_langchain_chunk_is_streamed_as_is():
    """A langchain-core message chunk is streamed unchanged (its id set if missing)."""
    from langchain_core.messages import AIMessageChunk

    def llm(state: Chat) -> dict:
        push_token(AIMessageChunk(content="lc"), message_id="m9")
        return {}

    (chunk, _), = list(graph(llm).stream(HI, stream_mode="messages"))
    assert isinstance(chunk, AIMessageChunk)
    assert (chunk.content, chunk.id) == ("lc", "m9")


def test_not_streamed_without_messages_mode():
    """Without the messages mode push_token does nothing but return an id."""
    got: list[str] = []

    def llm(state: Chat) -> dict:
        got.append(push_token("x"))
        got.append(push_token("y", message_id="given"))
        return {}

    out = list(graph(llm).stream(HI, stream_mode=["updates", "custom"]))
    assert out == [("updates", {"llm": None})]
    assert got[0] and got[1] == "given"


def test_outside_a_node_raises():
    with pytest.raises(RuntimeError, match="inside a running graph node"):
        push_token("x")
    with pytest.raises(RuntimeError, match="inside a running graph node"):
        push_message({"role": "assistant", "content": "x"})


def test_bad_token_type():
    def llm(state: Chat) -> dict:
        push_token(42)
        return {}

    with pytest.raises(TypeError, match="push_token"):
        list(graph(llm).stream(HI, stream_mode="messages"))


def test_push_message_streams_a_complete_message_without_state_change():
    """push_message streams one message; a dict without id is copied with one."""
    original = {"role": "assistant", "content": "done"}
    returned: list[Any] = []

    def llm(state: Chat) -> dict:
        returned.append(push_message(original, metadata={"k": 1}))
        return {}

    out = list(graph(llm).stream(HI, stream_mode=["messages", "values"]))
    assert [mode for mode, _ in out] == ["values", "messages"]
    msg, meta = out[1][1]
    assert msg is returned[0] and msg["content"] == "done" and msg["id"]
    assert "id" not in original
    assert meta["k"] == 1 and meta["langgraph_node"] == "llm"


def test_pushed_id_is_not_streamed_again_when_returned():
    """Tokens pushed under an id, then a langchain message with that id returned: once."""
    from langchain_core.messages import AIMessage

    class LcChat(TypedDict):
        messages: Annotated[list, add_messages]

    def llm(state: LcChat) -> dict:
        mid = push_token("to", message_id="r1")
        push_token("ken", message_id=mid)
        return {"messages": [AIMessage("token", id=mid), AIMessage("other", id="r2")]}

    g = StateGraph(LcChat)
    g.add_node("llm", llm)
    g.add_edge(START, "llm")
    out = list(g.compile().stream(HI, stream_mode="messages"))
    contents = [m["content"] if isinstance(m, dict) else m.content for m, _ in out]
    assert contents == ["to", "ken", "other"]


def test_async_node():
    async def llm(state: Chat) -> dict:
        mid = None
        for token in ("as", "ync"):
            await asyncio.sleep(0)
            mid = push_token(token, message_id=mid)
        return {}

    async def collect() -> list[Any]:
        return [c async for c in graph(llm).astream(HI, stream_mode="messages")]

    assert [c["content"] for c, _ in asyncio.run(collect())] == ["as", "ync"]


def test_subgraph_tokens_need_subgraphs():
    """Tokens pushed in a subgraph stream only with subgraphs=True, under its namespace."""
    sub = graph(streaming_node(["s"], message_id="s1"))
    g = StateGraph(Chat)
    g.add_node("sub", sub)
    g.add_edge(START, "sub")
    parent = g.compile()
    assert list(parent.stream(HI, stream_mode="messages")) == []
    out = list(parent.stream(HI, stream_mode="messages", subgraphs=True))
    assert len(out) == 1
    ns, (chunk, meta) = out[0]
    assert ns[0].startswith("sub:") and chunk["content"] == "s"
    assert meta["langgraph_node"] == "llm"


def test_tokens_count_as_progress_for_idle_timeout():
    """A node that keeps pushing tokens is not idle."""

    async def llm(state: Chat) -> dict:
        mid = None
        for _ in range(6):
            await asyncio.sleep(0.05)
            mid = push_token(".", message_id=mid)
        return {}

    g = graph(llm, timeout=TimeoutPolicy(idle_timeout=0.2))

    async def run() -> list:
        return [c async for c in g.astream(HI, stream_mode="messages")]

    assert len(asyncio.run(run())) == 6


def _run(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    return out.stdout.strip()


def test_works_without_langchain_core():
    """With langchain-core unimportable the hook streams dicts and nothing imports it."""
    code = """
        import sys
        sys.modules["langchain_core"] = None  # import fails, find_spec raises ValueError
        from typing import Annotated
        from typing_extensions import TypedDict
        from stepgraph.graph import START, StateGraph
        from stepgraph.graph.message import add_messages, push_message
        from stepgraph.stream.messages import push_token

        class Chat(TypedDict):
            messages: Annotated[list, add_messages]

        def llm(state):
            mid = push_token("a")
            push_token("b", message_id=mid)
            push_message({"role": "assistant", "content": "ab", "id": mid})
            return {"messages": [{"role": "assistant", "content": "not streamed", "id": "x"}]}

        g = StateGraph(Chat)
        g.add_node("llm", llm)
        g.add_edge(START, "llm")
        out = list(g.compile().stream({"messages": [("user", "hi")]}, stream_mode=["messages", "values"]))
        print([(mode, p[0]["content"]) if mode == "messages" else (mode, [m["content"] for m in p["messages"]]) for mode, p in out])
    """
    assert _run(code) == (
        "[('values', ['hi']), ('messages', 'a'), ('messages', 'b'), ('messages', 'ab'), "
        "('values', ['hi', 'ab', 'not streamed'])]"
    )


def test_lean_when_messages_is_not_streamed():
    """Running a graph (and importing the hook) imports no langchain-core."""
    code = """
        import sys
        from typing import Annotated
        from typing_extensions import TypedDict
        from stepgraph.graph import START, StateGraph
        from stepgraph.graph.message import add_messages
        from stepgraph.stream.messages import push_token

        class Chat(TypedDict):
            messages: Annotated[list, add_messages(format="dict")]

        def llm(state):
            push_token("a")
            return {}

        g = StateGraph(Chat)
        g.add_node("llm", llm)
        g.add_edge(START, "llm")
        list(g.compile().stream({"messages": [("user", "hi")]}, stream_mode=["updates", "custom"]))
        print("langchain_core" in sys.modules)
    """
    assert _run(code) == "False"

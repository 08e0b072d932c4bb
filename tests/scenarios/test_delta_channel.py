"""``DeltaChannel`` keys end to end: stored as writes, rebuilt from the saver on every read.

Each scenario runs on both drivers and every saver. The checks read state back cold (from
the saver), since a run's own return value never needs a rebuild.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, Any

import pytest
from scenario_savers import SAVER_KINDS, cfg, get_state, open_saver
from typing_extensions import TypedDict

from stepgraph.channels import BinaryOperatorAggregate
from stepgraph.channels.delta import DeltaChannel
from stepgraph.graph import START, StateGraph
from stepgraph.types import Command, Overwrite, interrupt


def concat(value: list, writes: list) -> list:
    out = list(value)
    for w in writes:
        out.extend(w if isinstance(w, list) else [w])
    return out


def merge_files(value: dict, writes: list) -> dict:
    out = dict(value)
    for w in writes:
        for path, text in w.items():
            if text is None:
                out.pop(path, None)
            else:
                out[path] = text
    return out


@pytest.fixture(params=SAVER_KINDS)
def saver(request, tmp_path):
    yield from open_saver(request.param, tmp_path)


def _items_graph(saver: Any, *, frequency: int = 100, binop: bool = False, node: Any = None) -> Any:
    channel = (BinaryOperatorAggregate(list, operator.add) if binop
               else DeltaChannel(concat, snapshot_frequency=frequency))

    S = TypedDict("S", {"items": Annotated[list, channel]})  # noqa: UP013

    def noop(state: Any) -> dict:
        return {}

    return (StateGraph(S).add_node("n", node or noop).add_edge(START, "n")
            .compile(checkpointer=saver))


def _stored(saver: Any, config: dict) -> dict:
    return saver.get_tuple(config).checkpoint["channel_values"]


def history(driver, app, config):
    if driver.is_async:
        async def collect():
            return [s async for s in app.aget_state_history(config)]

        return asyncio.run(collect())
    return list(app.get_state_history(config))


def test_values_are_rebuilt_from_writes(driver, saver) -> None:
    app, config = _items_graph(saver), cfg()
    for i in range(3):
        out = driver.invoke(app, {"items": [f"u{i}"]}, config)
    assert out == {"items": ["u0", "u1", "u2"]}
    assert "items" not in _stored(saver, config)
    assert get_state(driver, app, config).values == {"items": ["u0", "u1", "u2"]}
    settled = [s.values.get("items") for s in history(driver, app, config)
               if s.next == ("__start__",)]
    assert settled == [["u0", "u1"], ["u0"], []]


def test_the_whole_value_is_stored_every_snapshot_frequency_writes(driver, saver) -> None:
    app, config = _items_graph(saver, frequency=2), cfg()
    stored_at = []
    for i in range(4):
        driver.invoke(app, {"items": [f"u{i}"]}, config)
        stored_at.append(_stored(saver, config).get("items"))
    assert [v for v in stored_at if v is not None]  # some checkpoints hold the whole value
    assert get_state(driver, app, config).values["items"] == ["u0", "u1", "u2", "u3"]


def test_dict_values_and_deletions(driver, saver) -> None:
    class S(TypedDict):
        files: Annotated[dict[str, str], DeltaChannel(merge_files)]

    turn = {"n": 0}

    def write(state: S) -> dict:
        turn["n"] += 1
        return {"files": {f"/f{turn['n']}": "text", "/f1": None if turn["n"] == 3 else "text"}}

    app = StateGraph(S).add_node("w", write).add_edge(START, "w").compile(checkpointer=saver)
    config = cfg()
    for _ in range(3):
        driver.invoke(app, {"files": {}}, config)
    assert get_state(driver, app, config).values == {"files": {"/f2": "text", "/f3": "text"}}


def test_update_state_and_forks_store_their_value(driver, saver) -> None:
    app, config = _items_graph(saver), cfg()
    driver.invoke(app, {"items": ["a"]}, config)
    new_config = app.update_state(config, {"items": ["x"]})
    assert _stored(saver, new_config)["items"] == ["a", "x"]
    assert get_state(driver, app, config).values["items"] == ["a", "x"]
    forked = driver.invoke(app, {"items": ["f"]}, new_config)
    assert forked["items"] == ["a", "x", "f"]
    assert get_state(driver, app, config).values["items"] == ["a", "x", "f"]
    first = [s for s in history(driver, app, config) if s.values.get("items") == ["a"]][-1]
    replayed = driver.invoke(app, None, first.config)  # time travel: replay from there
    assert replayed["items"] == ["a"]


def test_exit_durability_stores_the_whole_value(driver, saver) -> None:
    app, config = _items_graph(saver), cfg()
    driver.invoke(app, {"items": ["a"]}, config, durability="exit")
    driver.invoke(app, {"items": ["b"]}, config, durability="exit")
    assert _stored(saver, config)["items"] == ["a", "b"]
    assert get_state(driver, app, config).values["items"] == ["a", "b"]


def test_a_thread_switches_from_a_reducer_to_a_delta_channel(driver, saver) -> None:
    config = cfg()
    old = _items_graph(saver, binop=True)
    for i in range(2):
        driver.invoke(old, {"items": [f"u{i}"]}, config)
    before = [(s.next, s.values.get("items")) for s in history(driver, old, config)]
    new = _items_graph(saver)
    assert [(s.next, s.values.get("items")) for s in history(driver, new, config)] == before
    driver.invoke(new, {"items": ["d0"]}, config)
    assert get_state(driver, new, config).values["items"] == ["u0", "u1", "d0"]


def test_messages_written_without_ids_keep_them(driver, saver) -> None:
    class S(TypedDict):
        messages: Annotated[list, DeltaChannel(concat)]

    app = (StateGraph(S).add_node("ai", lambda s: {"messages": [{"role": "ai", "content": "hi"}]})
           .add_edge(START, "ai").compile(checkpointer=saver))
    config = cfg()
    driver.invoke(app, {"messages": [{"role": "user", "content": "hello"}]}, config)
    reads = [get_state(driver, app, config).values["messages"] for _ in range(2)]

    def ids(messages: list) -> list:
        return [m["id"] if isinstance(m, dict) else m.id for m in messages]

    assert len(reads[0]) == 2 and None not in ids(reads[0])
    assert ids(reads[0]) == ids(reads[1])


def test_parallel_writers_replay_in_step_order(driver, saver) -> None:
    class S(TypedDict):
        items: Annotated[list, DeltaChannel(concat)]

    app = (StateGraph(S).add_node("b", lambda s: {"items": ["b"]})
           .add_node("a", lambda s: {"items": ["a"]})
           .add_edge(START, "a").add_edge(START, "b").compile(checkpointer=saver))
    config = cfg()
    live = driver.invoke(app, {"items": []}, config)
    assert get_state(driver, app, config).values == live


def test_an_interrupted_step_discarded_by_new_input(driver, saver) -> None:
    class S(TypedDict):
        items: Annotated[list, DeltaChannel(concat)]

    def ask(state: S) -> dict:
        return {"items": [interrupt("q")]}

    app = (StateGraph(S).add_node("done", lambda s: {"items": ["done"]}).add_node("ask", ask)
           .add_edge(START, "done").add_edge(START, "ask").compile(checkpointer=saver))
    config = cfg()
    driver.invoke(app, {"items": ["start"]}, config)  # "done" wrote, "ask" interrupted
    live = driver.invoke(app, Command(resume="yes"), config)["items"]
    assert sorted(live) == ["done", "start", "yes"]
    assert get_state(driver, app, config).values["items"] == live
    other = cfg()
    driver.invoke(app, {"items": ["start"]}, other)
    driver.invoke(app, {"items": ["again"]}, other)  # new input: the pending step is dropped
    again = get_state(driver, app, other)
    assert again.values["items"][:2] == ["start", "again"]


def test_overwrite_in_a_node(driver, saver) -> None:
    calls = {"n": 0}

    def reset(state: Any) -> dict:
        calls["n"] += 1
        return {"items": Overwrite(["fresh"]) if calls["n"] == 2 else ["x"]}

    app, config = _items_graph(saver, node=reset), cfg()
    for _ in range(3):
        driver.invoke(app, {"items": []}, config)
    assert get_state(driver, app, config).values["items"] == ["fresh", "x"]


def test_a_message_history_moves_to_a_delta_channel(driver, saver) -> None:
    """``add_messages`` state switched to ``DeltaChannel(_messages_delta_reducer)``: the history
    is kept, new messages fold on top, ids dedupe and removals work."""
    from stepgraph.graph.message import _messages_delta_reducer, add_messages
    from stepgraph.messages import RemoveMessage

    def build(channel: Any) -> Any:
        S = TypedDict("S", {"messages": Annotated[list, channel]})  # noqa: UP013
        return (StateGraph(S).add_node("n", lambda s: {}).add_edge(START, "n")
                .compile(checkpointer=saver))

    config = cfg()
    old = build(add_messages)
    driver.invoke(old, {"messages": [{"role": "user", "content": "hi", "id": "h1"}]}, config)
    new = build(DeltaChannel(_messages_delta_reducer))
    driver.invoke(new, {"messages": [{"role": "ai", "content": "yo", "id": "a1"}]}, config)
    driver.invoke(new, {"messages": [{"role": "ai", "content": "yo!", "id": "a1"},
                                     {"role": "user", "content": "bye", "id": "h2"}]}, config)
    driver.invoke(new, {"messages": [RemoveMessage(id="h1")]}, config)

    def ids(values: dict) -> list:
        return [m["id"] if isinstance(m, dict) else m.id for m in values["messages"]]

    state = get_state(driver, new, config)
    assert ids(state.values) == ["a1", "h2"]
    first = state.values["messages"][0]
    assert (first["content"] if isinstance(first, dict) else first.content) == "yo!"

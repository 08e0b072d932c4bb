"""A step's checkpoint costs what changed in it; ``durability="exit"`` assembles one at the end.

``SaveOps`` assembles checkpoints from a ``CheckpointImage`` refreshed from what
``apply_writes`` touched. These tests check the image against a full rebuild after every
step of graphs of every channel kind, count the channel reads, and compare what exit mode
stores with what sync mode stores last.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any

import pytest
from typing_extensions import TypedDict

from stepgraph.channels.ephemeral_value import EphemeralValue
from stepgraph.channels.last_value import LastValue
from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.engine import image as image_module
from stepgraph.graph import END, START, StateGraph
from stepgraph.types import Send, interrupt


class State(TypedDict, total=False):
    n: int
    items: Annotated[list[int], operator.add]
    note: str


def _chain(length: int) -> StateGraph:
    b = StateGraph(State)
    names = [f"s{i}" for i in range(length)]
    for name in names:
        b.add_node(name, lambda s: {"n": s.get("n", 0) + 1, "items": [s.get("n", 0)]})
    b.add_edge(START, names[0])
    for a, c in zip(names, names[1:], strict=False):
        b.add_edge(a, c)
    b.add_edge(names[-1], END)
    return b


def _mixed() -> StateGraph:
    """Sends, a join of two branches (a barrier), a conditional loop and an interrupt."""
    b = StateGraph(State)
    b.add_node("plan", lambda s: {"note": "planned"})
    b.add_node("work", lambda s: {"items": [s["n"]]})
    b.add_node("left", lambda s: {"items": [100]})
    b.add_node("right", lambda s: {"items": [200]})
    b.add_node("join", lambda s: {"n": s.get("n", 0) + 1})

    def ask(s: State) -> dict[str, Any]:
        return {"note": str(interrupt("more?"))}

    b.add_node("ask", ask)
    b.add_edge(START, "plan")
    b.add_conditional_edges("plan", lambda s: [Send("work", {"n": i}) for i in range(3)], ["work"])
    b.add_edge("work", "left")
    b.add_edge("work", "right")
    b.add_edge(["left", "right"], "join")
    b.add_conditional_edges("join", lambda s: "plan" if s["n"] < 3 else "ask", ["plan", "ask"])
    b.add_edge("ask", END)
    return b


@pytest.fixture
def checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compare the image with a full rebuild after every step."""
    monkeypatch.setattr(image_module, "_CHECK", True)


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
def test_image_matches_a_full_rebuild_every_step(checked: None, durability: str) -> None:
    from stepgraph.types import Command

    graph = _mixed().compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"n": 0, "items": []}, cfg, durability=durability)
    assert "__interrupt__" in out
    done = graph.invoke(Command(resume="yes"), cfg, durability=durability)
    assert done["note"] == "yes" and done["n"] == 3 and len(done["items"]) == 3 * 5


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    for cls in (EphemeralValue, LastValue):
        original = cls.checkpoint

        def counted(self: Any, _original: Any = original) -> Any:
            calls[0] += 1
            return _original(self)

        monkeypatch.setattr(cls, "checkpoint", counted)
    return calls


@pytest.mark.parametrize("durability", ["sync", "exit"])
def test_a_step_reads_only_the_channels_it_changed(
    monkeypatch: pytest.MonkeyPatch, durability: str
) -> None:
    monkeypatch.setattr(image_module, "_CHECK", False)  # (the check reads every channel)
    length = 60
    graph = _chain(length).compile(checkpointer=InMemorySaver())
    channels = len(graph.channels)
    calls = _count_reads(monkeypatch)
    out = graph.invoke({"n": 0}, {"configurable": {"thread_id": "t"}}, durability=durability)
    assert out["n"] == length
    # one full read for the input checkpoint, then a few channels per step (a full read
    # per step would be length * channels)
    assert calls[0] <= channels + 4 * length, calls[0]


def _latest(saver: InMemorySaver, thread: str) -> Any:
    return saver.get_tuple({"configurable": {"thread_id": thread}})


def test_exit_stores_what_sync_stores_last() -> None:
    graph = _chain(30)
    savers = {mode: InMemorySaver() for mode in ("sync", "exit")}
    for mode, saver in savers.items():
        graph.compile(checkpointer=saver).invoke(
            {"n": 0}, {"configurable": {"thread_id": "t"}}, durability=mode
        )
    sync, exit_ = (_latest(savers[m], "t") for m in ("sync", "exit"))
    assert len(list(savers["exit"].list(None))) == 1
    assert exit_.checkpoint["channel_values"] == sync.checkpoint["channel_values"]
    assert exit_.checkpoint["versions_seen"].keys() == sync.checkpoint["versions_seen"].keys()
    assert exit_.checkpoint["channel_versions"].keys() == sync.checkpoint["channel_versions"].keys()
    assert exit_.metadata["step"] == sync.metadata["step"]
    assert exit_.checkpoint["updated_channels"] == sync.checkpoint["updated_channels"]


def test_exit_after_a_failing_step_stores_the_last_finished_one() -> None:
    b = StateGraph(State)
    b.add_node("a", lambda s: {"n": 1})
    b.add_node("b", lambda s: {"n": 2})

    def boom(s: State) -> dict[str, Any]:
        raise ValueError("boom")

    b.add_node("c", boom)
    b.add_edge(START, "a")
    b.add_edge("a", "b")
    b.add_edge("b", "c")
    results = {}
    for mode in ("sync", "exit"):
        saver = InMemorySaver()
        with pytest.raises(ValueError, match="boom"):
            b.compile(checkpointer=saver).invoke({"n": 0}, {"configurable": {"thread_id": "t"}},
                                                 durability=mode)
        saved = _latest(saver, "t")
        results[mode] = (saved.checkpoint["channel_values"], saved.metadata["step"],
                         [(c, str(v)) for _, c, v in saved.pending_writes])
    assert results["exit"] == results["sync"]
    assert results["exit"][0]["n"] == 2

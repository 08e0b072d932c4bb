"""``engine/saving.py``: what a run tracks for its checkpoints, and only when it makes them."""

from __future__ import annotations

from typing import Any, TypedDict

import pytest

from stepgraph.checkpoint.base import next_string_version
from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.engine.loop import _saver_next_version
from stepgraph.graph import START, StateGraph


class State(TypedDict):
    n: int


def _builder() -> Any:
    b = StateGraph(State)
    b.add_node("inc", lambda s: {"n": s["n"] + 1})
    b.add_edge(START, "inc")
    return b


def _loops(graph: Any, config: Any, **kw: Any) -> list[Any]:
    """The loops of the runs ``invoke`` makes (seen through the first node's config)."""
    seen: list[Any] = []
    from stepgraph.engine import loop as loop_module

    real_init = loop_module.RunLoop.__init__

    def spy(self: Any, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        seen.append(self)

    loop_module.RunLoop.__init__ = spy  # type: ignore[method-assign]
    try:
        graph.invoke({"n": 0}, config, **kw)
    finally:
        loop_module.RunLoop.__init__ = real_init  # type: ignore[method-assign]
    return seen


@pytest.mark.parametrize(
    ("saver", "durability", "tracked"),
    [(None, None, False), ("memory", "exit", False), ("memory", "sync", True)],
)
def test_changed_channels_are_tracked_only_when_step_checkpoints_are_made(
    saver: str | None, durability: str | None, tracked: bool
) -> None:
    graph = _builder().compile(checkpointer=InMemorySaver() if saver else None)
    config = {"configurable": {"thread_id": "t"}}
    kw = {"durability": durability} if durability else {}
    (loop,) = _loops(graph, config, **kw)
    assert (loop.saves.touched is not None) is tracked
    if saver:
        assert graph.get_state(config).values == {"n": 1}


def test_forcing_a_checkpoint_starts_tracking() -> None:
    graph = _builder().compile()
    (loop,) = _loops(graph, {})
    assert loop.saves.touched is None
    loop.saves.force()
    assert loop.saves.touched is not None and not loop.saves.image.valid


def test_savers_with_string_versions_are_called_directly_and_overrides_are_honoured() -> None:
    assert _saver_next_version(InMemorySaver()) is next_string_version

    class Counting(InMemorySaver):
        def get_next_version(self, current: Any, channel: Any = None) -> Any:
            return 1 if current is None else int(current) + 1

    counted = _saver_next_version(Counting())
    assert counted(None) == 1 and counted(41) == 42
    graph = _builder().compile(checkpointer=Counting())
    config = {"configurable": {"thread_id": "c"}}
    graph.invoke({"n": 0}, config)
    versions = graph.get_state(config).config  # stored with integer versions
    saved = graph.checkpointer.get_tuple(versions)
    assert all(type(v) is int for v in saved.checkpoint["channel_versions"].values())

"""Hypothesis laws every channel must keep: persistence, copies, folds and topics."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from typing import Any, Optional

from hypothesis import given
from hypothesis import strategies as st

from stepgraph.channels import (
    AnyValue,
    BaseChannel,
    BinaryOperatorAggregate,
    EphemeralValue,
    LastValue,
    LastValueAfterFinish,
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
    Topic,
    UntrackedValue,
)
from stepgraph.constants import MISSING
from stepgraph.types import Overwrite

ints = st.integers(-50, 50)
one_or_none = st.lists(ints, max_size=1)
several = st.lists(ints, max_size=4)
names = st.lists(st.sampled_from(["a", "b", "c"]), max_size=3)
topic_write = st.one_of(ints, st.lists(ints, max_size=3))

# (channel factory, strategy of one step's valid writes)
CASES: dict[str, tuple[Callable[[], BaseChannel], st.SearchStrategy[list[Any]]]] = {
    "last_value": (lambda: LastValue(int, "k"), one_or_none),
    "last_value_after_finish": (lambda: LastValueAfterFinish(int, "k"), several),
    "any_value": (lambda: AnyValue(int, "k"), several),
    "untracked": (lambda: UntrackedValue(int, key="k"), one_or_none),
    "untracked_unguarded": (lambda: UntrackedValue(int, False, key="k"), several),
    "ephemeral": (lambda: EphemeralValue(int, key="k"), one_or_none),
    "ephemeral_unguarded": (lambda: EphemeralValue(int, False, key="k"), several),
    "topic": (lambda: Topic(int, key="k"), st.lists(topic_write, max_size=3)),
    "topic_accumulate": (lambda: Topic(int, True, key="k"), st.lists(topic_write, max_size=3)),
    "binop_add": (lambda: BinaryOperatorAggregate(int, operator.add, key="k"), several),
    "binop_missing": (
        lambda: BinaryOperatorAggregate(Optional[int], operator.add, key="k"),  # noqa: UP045
        several,
    ),
    "barrier": (lambda: NamedBarrierValue(str, {"a", "b", "c"}, key="k"), names),
    "barrier_after_finish": (
        lambda: NamedBarrierValueAfterFinish(str, {"a", "b", "c"}, key="k"),
        names,
    ),
}


def scripts(kind: str) -> st.SearchStrategy[list[tuple[str, list[Any]]]]:
    """Scripts of ("update", writes) / ("consume", []) / ("finish", []) calls for ``kind``."""
    op = st.one_of(
        st.tuples(st.just("update"), CASES[kind][1]),
        st.tuples(st.sampled_from(["consume", "finish"]), st.just([])),
    )
    return st.lists(op, max_size=8)


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[str, list[tuple[str, list[Any]]]]:
    """A channel kind and a script of calls to run on it."""
    kind = draw(st.sampled_from(sorted(CASES)))
    return kind, draw(scripts(kind))


def run(ch: BaseChannel, script: list[tuple[str, list[Any]]]) -> list[bool]:
    """Apply a script to a channel; return what each call returned."""
    results = []
    for name, writes in script:
        if name == "update":
            results.append(ch.update(writes))
        else:
            results.append(getattr(ch, name)())
    return results


def observe(ch: BaseChannel) -> tuple[bool, Any]:
    """What a reader sees: availability and value."""
    return (True, ch.get()) if ch.is_available() else (False, MISSING)


@given(scenarios(), st.data())
def test_checkpoint_round_trip_preserves_reads(first, data):
    """from_checkpoint(checkpoint()) reads the same and behaves the same afterwards."""
    kind, script = first
    ch = CASES[kind][0]()
    run(ch, script)
    restored = CASES[kind][0]().from_checkpoint(ch.checkpoint())
    if isinstance(ch, UntrackedValue):
        assert not restored.is_available()
        return
    assert observe(restored) == observe(ch)
    assert restored == ch and restored.key == ch.key
    saved, seen_then = ch.checkpoint(), observe(ch)
    later = data.draw(scripts(kind))
    assert run(restored, later) == run(ch, later)
    assert observe(restored) == observe(ch)
    # a checkpoint taken earlier is not changed by the later calls
    assert observe(CASES[kind][0]().from_checkpoint(saved)) == seen_then


@given(scenarios(), st.data())
def test_copy_is_equal_and_independent(first, data):
    """copy() reads the same as the original, and changing it leaves the original alone."""
    kind, script = first
    ch = CASES[kind][0]()
    run(ch, script)
    before = observe(ch)
    saved = ch.checkpoint()
    cp = ch.copy()
    assert observe(cp) == before and cp == ch
    more = data.draw(st.lists(CASES[kind][1], min_size=1, max_size=4))
    for writes in more:
        cp.update(writes)
        cp.finish()
        cp.consume()
    assert observe(ch) == before
    if not isinstance(ch, UntrackedValue):
        assert observe(CASES[kind][0]().from_checkpoint(saved)) == before


@given(st.lists(st.lists(ints, max_size=5), max_size=5))
def test_binop_fold_equals_reduce(steps):
    """Folding writes step by step equals functools.reduce over all writes in order."""
    flat = [w for step in steps for w in step]
    total = BinaryOperatorAggregate(int, operator.add)
    for step in steps:
        assert total.update(step) is bool(step)
    assert total.get() == functools.reduce(operator.add, flat, 0)
    seq = BinaryOperatorAggregate(list, operator.add)
    for step in steps:
        seq.update([[w] for w in step])
    assert seq.get() == functools.reduce(operator.add, [[w] for w in flat], [])


@given(st.lists(ints, min_size=1, max_size=8))
def test_binop_from_missing_reduces_without_initial(writes):
    """A MISSING reducer channel equals reduce() with no initial value."""
    ch = BinaryOperatorAggregate(Optional[int], operator.sub)  # noqa: UP045
    ch.update(writes)
    assert ch.get() == functools.reduce(operator.sub, writes)


@given(st.lists(st.lists(ints), max_size=4), st.lists(st.lists(ints), max_size=4), ints)
def test_binop_overwrite_keeps_only_its_value(before, after, replaced):
    """With one Overwrite in a step, the value is the overwrite's, whatever surrounds it."""
    ch = BinaryOperatorAggregate(list, operator.add)
    ch.update([[0]])
    ch.update([*before, Overwrite([replaced]), *after])
    assert ch.get() == [replaced]


def _flatten(step: list[Any]) -> list[Any]:
    return [v for w in step for v in (w if isinstance(w, list) else [w])]


@given(st.lists(st.lists(topic_write, max_size=4), max_size=6))
def test_topic_accumulate_keeps_everything(steps):
    """An accumulating topic holds every flattened write; update is True iff it added some."""
    ch = Topic(int, accumulate=True)
    seen: list[int] = []
    for step in steps:
        flat = _flatten(step)
        assert ch.update(step) is bool(flat)
        seen += flat
    assert ch.is_available() is bool(seen)
    if seen:
        assert ch.get() == seen


@given(st.lists(st.lists(topic_write, max_size=4), max_size=6))
def test_topic_non_accumulating_holds_last_step(steps):
    """A plain topic holds only the last step's writes; update is True if it was or is non-empty."""
    ch = Topic(int)
    previous: list[int] = []
    for step in steps:
        flat = _flatten(step)
        assert ch.update(step) is (bool(previous) or bool(flat))
        previous = flat
        assert ch.is_available() is bool(flat)
        if flat:
            assert ch.get() == flat

"""BinaryOperatorAggregate: the reducer channel, initial values and Overwrite."""

import collections.abc as cabc
import operator
import typing
from typing import Annotated, NotRequired, Optional, Required

import pytest

from stepgraph.channels import BinaryOperatorAggregate, LastValue
from stepgraph.channels.binop import get_overwrite, initial_factory, operators_equal
from stepgraph.constants import MISSING
from stepgraph.errors import EmptyChannelError, InvalidUpdateError
from stepgraph.types import Overwrite


class NeedsArgs:
    def __init__(self, x):
        self.x = x


def _add(typ=list):
    return BinaryOperatorAggregate(typ, operator.add, key="k")


@pytest.mark.parametrize(
    ("typ", "expected"),
    [
        (Annotated[list[int], operator.add], []),
        (cabc.Sequence, []),
        (cabc.MutableSequence, []),
        (cabc.Mapping, {}),
        (cabc.MutableMapping, {}),
        (cabc.Set, set()),
        (cabc.MutableSet, set()),
        (str, ""),
        (tuple, ()),
        (int, 0),
        (list[int], []),
        (cabc.Sequence[str], []),
        (typing.List[int], []),  # noqa: UP006
        (typing.Sequence[int], []),  # noqa: UP006
        (dict[str, int], {}),
        (NotRequired[list[int]], []),
        (Required[Annotated[cabc.Mapping[str, int], operator.or_]], {}),
    ],
)
def test_initial_value_from_type(typ, expected):
    """The initial value is typ() after stripping wrappers and mapping abstract types."""
    value = BinaryOperatorAggregate(typ, operator.add).get()
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("typ", [Optional[list], list | None, NeedsArgs, typing.Any])  # noqa: UP045
def test_uninstantiable_type_starts_missing(typ):
    """A type with no zero-argument constructor starts MISSING (unavailable)."""
    ch = BinaryOperatorAggregate(typ, operator.add)
    assert ch.value is MISSING
    assert not ch.is_available()
    with pytest.raises(EmptyChannelError):
        ch.get()


def test_initial_factory_maps_abstract_alias():
    """initial_factory reduces Sequence[str] to list."""
    assert initial_factory(cabc.Sequence[str]) is list


def test_initial_value_not_shared():
    """Each channel (and each from_checkpoint(MISSING)) gets its own initial object."""
    a, b = _add(), _add()
    assert a.get() is not b.get()
    assert a.from_checkpoint(MISSING).get() is not a.get()


def test_empty_update_returns_false():
    """update([]) returns False and keeps the value."""
    ch = _add()
    assert ch.update([]) is False
    assert ch.get() == []


def test_writes_fold_in_order():
    """Each write is folded with operator(value, write) in order."""
    ch = _add()
    assert ch.update([[1], [2]]) is True
    assert ch.update([[3]]) is True
    assert ch.get() == [1, 2, 3]


def test_first_write_on_missing_is_stored_as_is():
    """When the value is MISSING the first write is stored without calling the reducer."""
    calls = []

    def reducer(a, b):
        calls.append((a, b))
        return a + b

    ch = BinaryOperatorAggregate(Optional[int], reducer)  # noqa: UP045
    ch.update([5])
    assert ch.get() == 5 and calls == []
    ch.update([1, 2])
    assert ch.get() == 8 and calls == [(5, 1), (6, 2)]


@pytest.mark.parametrize(
    "wrapped",
    [Overwrite(["o"]), {"__overwrite__": ["o"]}, {"type": "__overwrite__", "value": ["o"]}],
)
def test_overwrite_forms_replace_value(wrapped):
    """All three Overwrite forms replace the value without the reducer."""
    ch = _add()
    ch.update([["a"]])
    assert ch.update([wrapped]) is True
    assert ch.get() == ["o"]


def test_non_matching_dicts_are_plain_values():
    """A dict with __overwrite__ plus other keys is not an overwrite."""
    assert get_overwrite({"__overwrite__": 1, "x": 2}) == (False, None)
    assert get_overwrite({"type": "__overwrite__"}) == (False, None)
    assert get_overwrite({"type": "other", "value": 1}) == (False, None)
    ch = BinaryOperatorAggregate(dict, operator.or_)
    ch.update([{"__overwrite__": 1, "x": 2}])
    assert ch.get() == {"__overwrite__": 1, "x": 2}


def test_overwrite_discards_other_writes_of_step():
    """Writes folded before an overwrite are lost and plain writes after it are ignored."""
    ch = _add()
    ch.update([["x"]])
    ch.update([["before"], Overwrite(["a"]), ["b"], ["c"]])
    assert ch.get() == ["a"]


def test_second_overwrite_in_step_raises():
    """A second Overwrite in one step raises InvalidUpdateError SG202 and changes nothing."""
    ch = _add()
    ch.update([["x"]])
    with pytest.raises(InvalidUpdateError) as info:
        ch.update([Overwrite(["a"]), {"__overwrite__": ["b"]}])
    assert info.value.code == "SG202"
    assert "Can receive only one Overwrite value per super-step." in str(info.value)
    assert "At key 'k'" in str(info.value)
    assert ch.get() == ["x"]


def test_overwrites_in_separate_steps():
    """One Overwrite per step is fine across consecutive steps."""
    ch = _add()
    ch.update([Overwrite([1])])
    ch.update([Overwrite([2]), [3]])
    ch.update([[4]])
    assert ch.get() == [2, 4]


def test_overwrite_on_missing_is_unwrapped():
    """An Overwrite as the first write of a MISSING channel stores its value (LangGraph bug fixed)."""
    ch = BinaryOperatorAggregate(Optional[list], operator.add)  # noqa: UP045
    ch.update([Overwrite([1]), [2]])
    assert ch.get() == [1]
    dict_form = BinaryOperatorAggregate(Optional[list], operator.add)  # noqa: UP045
    dict_form.update([{"__overwrite__": [9]}])
    assert dict_form.get() == [9]


def test_overwrite_on_missing_counts_for_step_limit():
    """An unwrapped first Overwrite still counts as the step's one Overwrite."""
    ch = BinaryOperatorAggregate(Optional[list], operator.add)  # noqa: UP045
    with pytest.raises(InvalidUpdateError):
        ch.update([Overwrite([1]), Overwrite([2])])
    assert not ch.is_available()


def test_consume_and_finish_are_noops():
    """consume() and finish() return False."""
    ch = _add()
    assert ch.consume() is False and ch.finish() is False


def test_checkpoint_round_trip():
    """checkpoint() is the value; from_checkpoint restores it with operator and key."""
    ch = _add()
    ch.update([[1]])
    restored = _add().from_checkpoint(ch.checkpoint())
    assert restored.get() == [1]
    assert restored.operator is operator.add and restored.key == "k"
    missing = BinaryOperatorAggregate(Optional[int], operator.add)  # noqa: UP045
    assert missing.checkpoint() is MISSING
    assert not missing.from_checkpoint(MISSING).is_available()


def test_copy_is_independent():
    """copy() keeps the value; folding into the copy leaves the original."""
    ch = _add()
    ch.update([[1]])
    cp = ch.copy()
    cp.update([[2]])
    assert ch.get() == [1] and cp.get() == [1, 2]
    assert cp.operator is operator.add and cp.key == "k"


def test_equality_uses_operator_rule():
    """Channels are equal when operators are identical or either is a lambda."""
    assert _add() == BinaryOperatorAggregate(int, operator.add)
    assert _add() == BinaryOperatorAggregate(int, lambda a, b: a + b)
    assert BinaryOperatorAggregate(int, lambda a, b: a) == _add()
    assert _add() != BinaryOperatorAggregate(int, operator.mul)
    assert _add() != LastValue(int)


def test_operators_equal_handles_nameless_callables():
    """operators_equal works for callables without __name__ (identity)."""
    fn = type("Op", (), {"__call__": lambda self, a, b: a})()
    assert operators_equal(fn, fn)
    assert not operators_equal(fn, operator.add)


def test_types_slots_and_repr():
    """ValueType/UpdateType are typ; no __dict__; repr names the operator."""
    ch = _add(list[int])
    assert ch.ValueType == list[int] and ch.UpdateType == list[int]
    assert not hasattr(ch, "__dict__")
    assert repr(ch) == "BinaryOperatorAggregate(key='k', operator=add, value=[])"

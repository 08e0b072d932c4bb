"""``add_messages`` on its own last result (what a reducer channel does every step) uses the
remembered ids and index; the result is what merging into a fresh copy gives."""

from __future__ import annotations

import random
from typing import Any

import pytest

from stepgraph.graph.message import add_messages
from stepgraph.messages._dict import REMOVE_ALL_MESSAGES, RemoveMessage


def _msg(i: int, text: str = "") -> dict[str, Any]:
    return {"role": "user", "content": text or f"m{i}", "id": f"id{i}"}


def test_chained_merges_match_fresh_merges() -> None:
    rng = random.Random(7)
    state: list[Any] = add_messages([], [_msg(0)], format="dict")
    for step in range(200):
        kind = rng.random()
        if kind < 0.6:
            right = [_msg(1000 + step)]
        elif kind < 0.85:  # replace an existing message by id
            right = [_msg(rng.randrange(0, 1000 + step) if step else 0, f"edit{step}")]
        else:  # remove one (when it exists) and append one
            target = rng.choice(state)["id"]
            right = [
                {"role": "remove", "content": "", "id": target, "type": "remove"},
                _msg(5000 + step),
            ]
        fresh = add_messages(list(state), right, format="dict")  # a new list: no memory
        chained = add_messages(state, right, format="dict")
        assert chained == fresh
        state = chained
    assert (
        add_messages(
            state, [{"type": "remove", "id": REMOVE_ALL_MESSAGES, "content": ""}], format="dict"
        )
        == []
    )


def test_the_same_merge_again_gives_an_equal_new_list() -> None:
    """A router's fresh read and the step's update merge the same write into the same
    value: the second merge reuses the first (a new list, the same message objects)."""
    left: list[Any] = add_messages([], [_msg(0), _msg(1)])
    right = [_msg(2), _msg(1, "edited")]
    first = add_messages(left, right)
    second = add_messages(left, right)
    assert second == first
    assert second is not first
    assert all(a is b for a, b in zip(first, second, strict=True))
    second.append("not seen by the first")
    assert len(first) == 3
    # the reused result is remembered as a merge result too: merging on top of it works
    assert [m.id if hasattr(m, "id") else m["id"] for m in add_messages(first, [_msg(3)])] == [
        "id0",
        "id1",
        "id2",
        "id3",
    ]


def test_a_changed_write_or_value_is_merged_again() -> None:
    left: list[Any] = add_messages([], [_msg(0)], format="dict")
    right = [_msg(1)]
    assert add_messages(left, right, format="dict") == [_msg(0), _msg(1)]
    right.append(_msg(2))  # the write list changed since
    assert add_messages(left, right, format="dict") == [_msg(0), _msg(1), _msg(2)]
    right[0] = _msg(1, "other")  # an element replaced
    assert add_messages(left, right, format="dict")[1]["content"] == "other"
    left.append(_msg(9))  # the value changed since
    assert [m["id"] for m in add_messages(left, right, format="dict")] == [
        "id0",
        "id9",
        "id1",
        "id2",
    ]
    single = _msg(5)  # a single message (not a list) as the write
    assert add_messages(left, single, format="dict") == add_messages(left, single, format="dict")


def test_messages_without_ids_are_never_reused() -> None:
    """A message without an id gets a new random id each merge, as in LangGraph."""
    left: list[Any] = add_messages([], [_msg(0)], format="dict")
    right = [{"role": "user", "content": "no id"}]
    a = add_messages(left, right, format="dict")
    b = add_messages(left, right, format="dict")
    assert a[1]["id"] != b[1]["id"]


def test_the_index_memory_keeps_few_lists_alive() -> None:
    """Each run loads a fresh message list; the id-index memory must not keep the lists of
    many past runs (and every message in them) alive."""
    import gc
    import weakref

    from stepgraph.messages import _merge

    class Marker(dict):  # a dict that can be weakly referenced
        pass

    refs = []
    for run in range(200):
        first = Marker(_msg(run))
        refs.append(weakref.ref(first))
        add_messages([first], [_msg(10_000 + run)], format="dict")
    gc.collect()
    alive = sum(1 for r in refs if r() is not None)
    assert len(_merge._KNOWN) <= _merge._KNOWN_MAX
    assert alive <= _merge._KNOWN_MAX <= 32


def _ids(messages: list[Any]) -> list[str]:
    return [m["id"] for m in messages]


def test_lists_built_from_one_ancestor_keep_their_own_ids() -> None:
    """Results merged from the same list share its index; an id another branch appended is
    not in this one: it is appended here, and removing it is an error."""
    base: list[Any] = add_messages([], [_msg(0), _msg(1)], format="dict")
    one = add_messages(base, [_msg(2)], format="dict")
    two = add_messages(base, [_msg(3)], format="dict")
    assert _ids(two) == ["id0", "id1", "id3"]
    assert _ids(add_messages(two, [_msg(2, "late")], format="dict")) == ["id0", "id1", "id3", "id2"]
    assert _ids(add_messages(one, [_msg(3)], format="dict")) == ["id0", "id1", "id2", "id3"]
    with pytest.raises(ValueError, match="id2"):
        add_messages(two, [RemoveMessage("id2")], format="dict")
    edited = add_messages(one, [_msg(2, "edited")], format="dict")
    assert [m["content"] for m in edited] == ["m0", "m1", "edited"]
    assert _ids(add_messages(base, [_msg(1, "again")], format="dict")) == ["id0", "id1"]


def test_random_merge_trees_match_fresh_merges() -> None:
    """Any list merged into again (not only the last result) gives what a fresh merge of a
    copy gives: appends, replacements, removals, the same id appended by two branches."""
    rng = random.Random(11)
    lists: list[list[Any]] = [add_messages([], [_msg(0)], format="dict")]
    for step in range(400):
        left = rng.choice(lists[-8:])
        kind = rng.random()
        if kind < 0.5:
            right: list[Any] = [_msg(100 + rng.randrange(40))]  # new here, or known elsewhere
        elif kind < 0.8:
            right = [_msg(int(rng.choice(left)["id"][2:]), f"edit{step}")]
        elif kind < 0.9 and len(left) > 1:
            right = [RemoveMessage(rng.choice(left)["id"]), _msg(200 + step)]
        else:
            right = [_msg(300 + step), _msg(100 + rng.randrange(40), f"x{step}")]
        fresh = add_messages(list(left), right, format="dict")
        merged = add_messages(left, right, format="dict")
        assert merged == fresh
        lists.append(merged)

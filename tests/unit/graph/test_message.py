"""add_messages in plain-dict mode (no langchain-core needed), plus module-level contracts."""

import inspect
import pickle
import subprocess
import sys
import time
import typing
import uuid
from functools import partial

import pytest

from stepgraph.graph import message as message_mod
from stepgraph.graph.message import (
    REMOVE_ALL_MESSAGES,
    AnyMessage,
    MessagesState,
    add_messages,
    push_message,
)
from stepgraph.messages import RemoveMessage, _merge, is_remove, to_message_dict

merge = add_messages(format="dict")


def msg(role, content, id):
    return {"role": role, "content": content, "id": id}


def is_uuid4(value):
    return isinstance(value, str) and uuid.UUID(value).version == 4


@pytest.fixture
def no_langchain(monkeypatch):
    monkeypatch.setattr(_merge, "langchain_available", lambda: False)


def test_append_keeps_order():
    """New ids are appended after the existing messages, in order."""
    left = [msg("user", "hi", "1")]
    right = [msg("assistant", "yo", "2"), msg("user", "more", "3")]
    assert merge(left, right) == [left[0], right[0], right[1]]


def test_missing_ids_get_uuid4():
    """Messages without an id on either side get a uuid4 string id."""
    result = merge([{"role": "user", "content": "a"}], [{"role": "assistant", "content": "b"}])
    assert [m["content"] for m in result] == ["a", "b"]
    assert all(is_uuid4(m["id"]) for m in result)
    assert result[0]["id"] != result[1]["id"]


def test_replace_by_id_in_place():
    """A right message with an existing id replaces it at the same position."""
    left = [msg("user", "a", "1"), msg("assistant", "b", "2"), msg("user", "c", "3")]
    result = merge(left, [msg("assistant", "B", "2"), msg("user", "d", "4")])
    assert [m["content"] for m in result] == ["a", "B", "c", "d"]


def test_duplicate_ids_in_right_last_wins():
    """Two right messages with one new id collapse to the last one."""
    result = merge([], [msg("assistant", "x", "1"), msg("assistant", "y", "1")])
    assert result == [msg("assistant", "y", "1")]


def test_remove_with_remove_message():
    """RemoveMessage(id) deletes the message with that id."""
    left = [msg("user", "a", "1"), msg("assistant", "b", "2")]
    assert merge(left, RemoveMessage("2")) == [left[0]]


def test_remove_with_plain_dict_forms():
    """Remove dicts with type or role 'remove' delete too."""
    left = [msg("user", "a", "1"), msg("assistant", "b", "2"), msg("user", "c", "3")]
    result = merge(left, [{"type": "remove", "id": "1"}, {"role": "remove", "id": "3"}])
    assert result == [left[1]]


def test_remove_unknown_id_raises():
    """Removing an id that is not present raises LangGraph's ValueError."""
    with pytest.raises(ValueError) as info:
        merge([msg("user", "a", "1")], RemoveMessage("nope"))
    assert (
        str(info.value) == "Attempting to delete a message with an ID that doesn't exist ('nope')"
    )


def test_duplicate_remove_and_remove_everything():
    """Removing one id twice is fine, and removing every id leaves an empty list."""
    left = [msg("user", "a", "1"), msg("assistant", "b", "2")]
    assert merge(left, [RemoveMessage("2"), RemoveMessage("2")]) == [left[0]]
    assert merge(left, [RemoveMessage("1"), RemoveMessage("2")]) == []


def test_remove_then_readd_restores_slot():
    """An id removed and re-added in the same update comes back in its old position."""
    left = [msg("user", "a", "1"), msg("assistant", "b", "2"), msg("user", "c", "3")]
    result = merge(left, [RemoveMessage("2"), msg("assistant", "B", "2")])
    assert [m["content"] for m in result] == ["a", "B", "c"]


def test_remove_message_added_earlier_in_same_update():
    """A removal may target a message appended earlier in the same right list."""
    result = merge([msg("user", "a", "1")], [msg("user", "b", "2"), RemoveMessage("2")])
    assert result == [msg("user", "a", "1")]


def test_mixed_operations():
    """Replace, remove and append in one update."""
    left = [msg("user", "a", "1"), msg("assistant", "b", "2")]
    right = [msg("user", "A", "1"), RemoveMessage("2"), msg("system", "s", "3")]
    assert merge(left, right) == [msg("user", "A", "1"), msg("system", "s", "3")]


def test_remove_all_keeps_only_what_follows():
    """A REMOVE_ALL_MESSAGES removal drops everything before it, left and right."""
    left = [msg("user", "a", "1"), msg("assistant", "b", "2")]
    right = [msg("user", "c", "3"), RemoveMessage(REMOVE_ALL_MESSAGES), msg("user", "d", "1")]
    assert merge(left, right) == [msg("user", "d", "1")]
    assert merge(left, RemoveMessage(REMOVE_ALL_MESSAGES)) == []


def test_remove_all_last_marker_wins():
    """With several remove-all markers only what follows the last one is kept."""
    right = [
        RemoveMessage(REMOVE_ALL_MESSAGES),
        msg("user", "x", "1"),
        {"type": "remove", "id": REMOVE_ALL_MESSAGES},
        msg("user", "y", "2"),
        msg("user", "z", "2"),
    ]
    assert merge([msg("user", "a", "0")], right) == [msg("user", "z", "2")]


def test_strings_and_tuples_are_coerced():
    """A string is a user message; (role, content) tuples get canonical roles."""
    result = merge("hi", [("human", "h"), ("ai", "a"), ("assistant", "b"), ("system", "s")])
    assert [(m["role"], m["content"]) for m in result] == [
        ("user", "hi"),
        ("user", "h"),
        ("assistant", "a"),
        ("assistant", "b"),
        ("system", "s"),
    ]
    assert all(is_uuid4(m["id"]) for m in result)


def test_type_style_dicts_are_kept_as_given():
    """LangChain-style {'type': ...} dicts are accepted and keep their keys."""
    result = merge(
        [], [{"type": "human", "content": "hi", "id": "1"}, {"type": "ai", "content": "x"}]
    )
    assert result[0] == {"type": "human", "content": "hi", "id": "1"}
    assert result[1]["type"] == "ai" and "role" not in result[1] and is_uuid4(result[1]["id"])


def test_single_and_empty_inputs():
    """Non-list sides are wrapped in a list; empty lists merge to the other side."""
    a, b = msg("user", "a", "1"), msg("assistant", "b", "2")
    assert merge(a, b) == [a, b]
    assert merge([], []) == []
    assert merge([a], []) == [a]
    assert merge([], [a]) == [a]


def test_inputs_are_not_mutated():
    """Caller lists and dicts are untouched; a dict without an id is copied, one with an id is reused."""
    no_id = {"role": "user", "content": "a"}
    with_id = msg("assistant", "b", "2")
    left, right = [no_id], [with_id]
    result = merge(left, right)
    assert no_id == {"role": "user", "content": "a"}
    assert result[0] is not no_id and result[0]["content"] == "a"
    assert result[1] is with_id
    assert left == [no_id] and right == [with_id] and result is not left


def test_one_null_side_raises():
    """Passing only left or only right raises ValueError naming the side received."""
    with pytest.raises(
        ValueError, match=r"non-null arguments for both 'left' and 'right'\. Only received: 'left'"
    ):
        add_messages([msg("user", "a", "1")], None)
    with pytest.raises(ValueError, match=r"Only received: 'right'"):
        add_messages(None, [msg("user", "a", "1")])
    with pytest.raises(ValueError, match=r"Only received: 'left'"):
        add_messages([], None)


def test_factory_form_binds_format():
    """Called without positional args add_messages returns a 2-positional-arg reducer."""
    for reducer in (add_messages(), add_messages(format="dict")):
        assert isinstance(reducer, partial)
        params = inspect.signature(reducer).parameters.values()
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        assert len(positional) == 2
    assert add_messages(format="dict")([], "hi")[0]["content"] == "hi"


def test_add_messages_itself_has_two_positional_params():
    """add_messages passes the reducer signature check (two positional params, kw-only format)."""
    params = inspect.signature(add_messages).parameters
    assert list(params) == ["left", "right", "format"]
    assert params["format"].kind is inspect.Parameter.KEYWORD_ONLY


def test_unknown_format_raises():
    """An unknown format raises ValueError in the factory form and in a direct call."""
    with pytest.raises(ValueError, match="Unrecognized format='xml'"):
        add_messages(format="xml")
    with pytest.raises(ValueError, match="Unrecognized format='xml'"):
        add_messages([], [], format="xml")


@pytest.mark.parametrize(
    ("bad", "exc"),
    [
        ({"content": "no role"}, ValueError),
        ({"id": "1", "content": "no role"}, ValueError),
        (("user",), ValueError),
        (("user", "a", "b"), ValueError),
        (("wizard", "a"), ValueError),
        ({"type": "remove"}, ValueError),
        (42, TypeError),
        (object(), TypeError),
    ],
)
def test_malformed_messages_raise(bad, exc):
    """Malformed or unsupported message-likes raise a clear error."""
    with pytest.raises(exc):
        merge([], [bad])


def test_remove_message_is_a_plain_remove_dict():
    """RemoveMessage equals its dict form, exposes .id, pickles, and rejects a bad id."""
    rm = RemoveMessage("7")
    assert rm == {"type": "remove", "id": "7"} and rm.id == "7" and is_remove(rm)
    assert repr(rm) == "RemoveMessage(id='7')"
    assert pickle.loads(pickle.dumps(rm)) == rm
    with pytest.raises(ValueError):
        RemoveMessage("")


def test_to_message_dict_helper():
    """to_message_dict coerces one message-like to a dict with an id."""
    assert to_message_dict(("ai", "x"))["role"] == "assistant"
    kept = msg("user", "a", "1")
    assert to_message_dict(kept) is kept
    assert REMOVE_ALL_MESSAGES == "__remove_all__"


def test_default_format_without_langchain_uses_dicts(no_langchain):
    """With langchain-core unavailable the default reducer works on dicts."""
    result = add_messages("hi", ("ai", "yo"))
    assert [(m["role"], m["content"]) for m in result] == [("user", "hi"), ("assistant", "yo")]


def test_openai_format_without_langchain_raises(no_langchain):
    """format='langchain-openai' without langchain-core raises ImportError up front."""
    with pytest.raises(ImportError, match="langchain-core"):
        add_messages(format="langchain-openai")


def test_messages_state_schema():
    """MessagesState is a TypedDict whose messages key carries the add_messages reducer."""
    hints = typing.get_type_hints(MessagesState, include_extras=True)
    assert set(hints) == {"messages"}
    assert typing.get_origin(hints["messages"]) is typing.Annotated
    base, reducer = typing.get_args(hints["messages"])
    assert base == list[AnyMessage] and reducer is add_messages
    assert MessagesState(messages=[]) == {"messages": []}
    assert set(message_mod.__all__) >= {"add_messages", "MessagesState", "REMOVE_ALL_MESSAGES"}


def test_push_message_outside_a_node_raises():
    """push_message needs a running node to stream from."""
    with pytest.raises(RuntimeError):
        push_message({"role": "assistant", "content": "x", "id": "1"})


def test_merge_is_linear():
    """Appending k to n messages is O(n + k): 50k into 50k finishes far below quadratic time."""
    n = 50_000
    left = [msg("user", str(i), f"l{i}") for i in range(n)]
    right = [msg("assistant", str(i), f"r{i}") for i in range(n)] + [msg("user", "x", "l0")]
    start = time.perf_counter()
    result = merge(left, right)
    assert time.perf_counter() - start < 2.0
    assert len(result) == 2 * n and result[0]["content"] == "x"


def _run(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_does_not_load_langchain_core():
    """Importing the module (and stepgraph.messages) never imports langchain_core."""
    code = (
        "import sys, stepgraph.graph.message, stepgraph.messages\n"
        "from stepgraph.graph.message import add_messages\n"
        "add_messages([], 'hi', format='dict')\n"
        "print(any(m == 'langchain_core' or m.startswith('langchain_core.') for m in sys.modules))"
    )
    assert _run(code) == "False"


def test_default_is_dicts_when_langchain_is_not_installed():
    """In a process where langchain_core cannot be imported, the default mode returns dicts."""
    code = (
        "import sys\n"
        "sys.modules['langchain_core'] = None\n"
        "from stepgraph.graph.message import add_messages\n"
        "print(type(add_messages([], 'hi')[0]).__name__)"
    )
    assert _run(code) == "dict"


def _loads_langchain_on_compile(annotation: str) -> str:
    code = (
        "import sys\n"
        "from typing import Annotated, TypedDict\n"
        "from stepgraph.graph import StateGraph, START, add_messages\n"
        f"class S(TypedDict):\n    messages: {annotation}\n"
        "b = StateGraph(S).add_node('a', lambda s: {}).add_edge(START, 'a')\n"
        "before = 'stepgraph.messages._lc' in sys.modules\n"
        "b.compile()\n"
        "print(before, 'stepgraph.messages._lc' in sys.modules)"
    )
    return _run(code)


def test_compile_loads_the_langchain_backend_of_message_reducers():
    """A graph whose state merges messages in langchain mode loads that backend when it is
    compiled (as LangGraph loads langchain-core on import), not inside its first step."""
    pytest.importorskip("langchain_core")
    for reducer in ("add_messages", "add_messages(format='langchain-openai')"):
        assert _loads_langchain_on_compile(f"Annotated[list, {reducer}]") == "False True"


def test_compile_of_dict_message_reducers_loads_no_langchain():
    found = _loads_langchain_on_compile("Annotated[list, add_messages(format='dict')]")
    assert found == "False False"

"""add_messages with langchain-core installed: LangGraph-compatible BaseMessage behaviour."""

import uuid

import pytest

lc = pytest.importorskip("langchain_core.messages")

from langchain_core.messages import (  # noqa: E402
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages import RemoveMessage as LCRemoveMessage  # noqa: E402

from stepgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages  # noqa: E402
from stepgraph.messages import RemoveMessage  # noqa: E402


def test_add_single_message():
    """A single right message is appended."""
    result = add_messages([HumanMessage("Hello", id="1")], AIMessage("Hi there!", id="2"))
    assert result == [HumanMessage("Hello", id="1"), AIMessage("Hi there!", id="2")]


def test_add_multiple_messages():
    """Several right messages are appended in order."""
    right = [AIMessage("Hi", id="2"), SystemMessage("Sys", id="3")]
    result = add_messages([HumanMessage("Hello", id="1")], right)
    assert result == [HumanMessage("Hello", id="1"), *right]


def test_update_existing_message():
    """A right message with an existing id replaces it."""
    result = add_messages([HumanMessage("Hello", id="1")], HumanMessage("Hello again", id="1"))
    assert result == [HumanMessage("Hello again", id="1")]


def test_missing_ids_assigned_in_place():
    """Missing ids become uuid4 strings, set on the caller's message objects as LangGraph does."""
    left, right = HumanMessage("Hello"), AIMessage("Hi")
    result = add_messages([left], [right])
    assert all(uuid.UUID(m.id).version == 4 for m in result)
    assert result[0] is left and left.id == result[0].id


def test_duplicates_in_input():
    """Two right messages with the same id keep the last."""
    result = add_messages([], [AIMessage("Hi", id="1"), AIMessage("Hi again", id="1")])
    assert len(result) == 1 and result[0].content == "Hi again"


def test_remove_and_duplicate_remove():
    """langchain RemoveMessage deletes by id, also when repeated."""
    left = [HumanMessage("Hello", id="1"), AIMessage("Hi", id="2")]
    assert add_messages(left, LCRemoveMessage(id="2")) == [HumanMessage("Hello", id="1")]
    right = [LCRemoveMessage(id="2"), LCRemoveMessage(id="2")]
    assert add_messages(left, right) == [HumanMessage("Hello", id="1")]
    assert add_messages(left, [LCRemoveMessage(id="1"), LCRemoveMessage(id="2")]) == []


def test_remove_nonexistent_message():
    """Removing an unknown id raises ValueError."""
    with pytest.raises(
        ValueError, match="Attempting to delete a message with an ID that doesn't exist"
    ):
        add_messages([HumanMessage("Hello", id="1")], LCRemoveMessage(id="2"))


def test_mixed_operations():
    """Update, remove and append in one update."""
    left = [HumanMessage("Hello", id="1"), AIMessage("Hi", id="2")]
    right = [HumanMessage("Updated", id="1"), LCRemoveMessage(id="2"), SystemMessage("New", id="3")]
    assert add_messages(left, right) == [
        HumanMessage("Updated", id="1"),
        SystemMessage("New", id="3"),
    ]


def test_empty_and_non_list_inputs():
    """Empty lists and single messages on either side behave like LangGraph."""
    h = HumanMessage("Hello", id="1")
    assert add_messages([], []) == []
    assert add_messages([], [h]) == [h]
    assert add_messages([h], []) == [h]
    assert add_messages(h, AIMessage("Hi", id="2")) == [h, AIMessage("Hi", id="2")]


def test_remove_all_messages():
    """RemoveMessage(REMOVE_ALL_MESSAGES) keeps only what follows it in right."""
    left = [HumanMessage("a", id="1"), AIMessage("b", id="2")]
    right = [LCRemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("c", id="3")]
    assert add_messages(left, right) == [HumanMessage("c", id="3")]


def test_default_coerces_message_likes_to_base_messages():
    """Strings, tuples and role dicts become BaseMessage objects by default."""
    result = add_messages("hi", [("ai", "yo"), {"role": "system", "content": "s", "id": "9"}])
    assert [type(m) for m in result] == [HumanMessage, AIMessage, SystemMessage]
    assert result[2].id == "9" and all(isinstance(m, BaseMessage) and m.id for m in result)


def test_chunks_become_messages():
    """A message chunk is converted to the full message type."""
    result = add_messages([], [AIMessageChunk(content="partial", id="c1")])
    assert type(result[0]) is AIMessage and result[0].content == "partial" and result[0].id == "c1"


def test_stepgraph_remove_message_works_in_langchain_mode():
    """stepgraph's RemoveMessage and remove dicts delete BaseMessages too."""
    left = [HumanMessage("a", id="1"), AIMessage("b", id="2"), AIMessage("c", id="3")]
    result = add_messages(left, [RemoveMessage("1"), {"type": "remove", "id": "3"}])
    assert result == [AIMessage("b", id="2")]
    assert add_messages(left, RemoveMessage(REMOVE_ALL_MESSAGES)) == []


def test_bad_dict_raises_in_langchain_mode():
    """A dict without role/content fails langchain coercion with ValueError."""
    with pytest.raises(ValueError):
        add_messages([], [{"id": "1"}])


def test_langchain_openai_format():
    """format='langchain-openai' rewrites contents to OpenAI blocks, as LangGraph does."""
    reducer = add_messages(format="langchain-openai")
    right = [
        HumanMessage(
            content=[
                {
                    "type": "text",
                    "text": "Here's an image:",
                    "cache_control": {"type": "ephemeral"},
                },
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/jpeg", "data": "1234"},
                },
            ]
        ),
        AIMessage(
            content=[{"type": "tool_use", "name": "foo", "input": {"bar": "baz"}, "id": "1"}]
        ),
    ]
    result = reducer([("user", "meow")], right)
    for m in result:
        m.id = None
    assert result == [
        HumanMessage(content="meow"),
        HumanMessage(
            content=[
                {"type": "text", "text": "Here's an image:"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,1234"}},
            ]
        ),
        AIMessage(
            content="",
            tool_calls=[{"name": "foo", "type": "tool_call", "args": {"bar": "baz"}, "id": "1"}],
        ),
    ]


def test_dict_format_converts_langchain_messages():
    """format='dict' turns BaseMessages (and chunks, removals) into plain dicts."""
    reducer = add_messages(format="dict")
    ai = AIMessage("", id="a", tool_calls=[{"name": "f", "args": {"x": 1}, "id": "t1"}])
    tool = ToolMessage("42", tool_call_id="t1", id="t")
    result = reducer([HumanMessage("hi", id="h")], [ai, tool, AIMessageChunk(content="c", id="k")])
    assert [type(m) for m in result] == [dict] * 4
    assert result[0] == {"role": "user", "content": "hi", "id": "h"}
    assert result[1]["role"] == "assistant" and result[1]["tool_calls"][0]["id"] == "t1"
    assert result[2] == {"role": "tool", "content": "42", "id": "t", "tool_call_id": "t1"}
    assert result[3]["role"] == "assistant" and result[3]["content"] == "c"
    assert reducer(result, LCRemoveMessage(id="h"))[0]["id"] == "a"


def test_known_history_still_coerces_what_it_must():
    """A history of message classes met before takes the quick path; a chunk, a dict or a
    message without an id among them still gets coerced (chunk -> message, id assigned)."""
    known = [
        HumanMessage("a", id="1"),
        AIMessage("b", id="2"),
        ToolMessage("c", tool_call_id="t", id="3"),
    ]
    assert add_messages(known, []) == known  # (every class now met once)
    no_id = HumanMessage("later")
    chunk = AIMessageChunk(content="chunk", id="5")
    merged = add_messages([*known, no_id, chunk, {"role": "user", "content": "d", "id": "6"}], [])
    assert [type(m) for m in merged] == [
        HumanMessage,
        AIMessage,
        ToolMessage,
        HumanMessage,
        AIMessage,
        HumanMessage,
    ]
    assert no_id.id is not None and merged[3] is no_id
    assert merged[-1].content == "d"
    # the quick path returns a new list and leaves the given one alone
    history = [HumanMessage("x", id="7"), AIMessage("y", id="8")]
    out = add_messages(history, AIMessage("z", id="9"))
    assert out is not history and len(history) == 2 and [m.id for m in out] == ["7", "8", "9"]


def test_remove_message_subclasses_and_impostors_are_told_apart():
    """Whether a message removes is answered per class once; a subclass of RemoveMessage
    removes, and a mock claiming the class is asked every time (never remembered)."""
    from unittest.mock import MagicMock

    from stepgraph.messages import _lc

    class MyRemove(LCRemoveMessage):
        pass

    base = [HumanMessage("a", id="1"), AIMessage("b", id="2")]
    assert add_messages(base, MyRemove(id="1")) == [AIMessage("b", id="2")]
    assert add_messages(base, MyRemove(id="2")) == [HumanMessage("a", id="1")]
    assert _lc.is_remove(MyRemove(id="3")) and not _lc.is_remove(AIMessage("c", id="3"))
    fake = MagicMock(spec=LCRemoveMessage)
    assert _lc.is_remove(fake)
    assert type(fake) not in _lc._REMOVES
    assert not _lc.is_remove(MagicMock())

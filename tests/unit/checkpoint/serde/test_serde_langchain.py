"""langchain-core messages and documents round-trip and load without registration."""

from __future__ import annotations

import pytest

from stepgraph.checkpoint.serde import JsonPlusSerializer

messages = pytest.importorskip("langchain_core.messages")


def sample_messages() -> list[object]:
    return [
        messages.SystemMessage("be brief"),
        messages.HumanMessage("hi", id="h1"),
        messages.AIMessage(
            content="",
            id="a1",
            tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}],
            usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
        ),
        messages.ToolMessage("result", tool_call_id="c1"),
        messages.AIMessageChunk(content="partial", id="a2"),
        messages.RemoveMessage(id="h1"),
    ]


def test_messages_round_trip_in_a_fresh_instance() -> None:
    """Messages load in a serializer that never saw them (trusted module)."""
    value = {"messages": sample_messages()}
    typed = JsonPlusSerializer().dumps_typed(value)
    result = JsonPlusSerializer().loads_typed(typed)
    assert result == value
    assert [type(m) for m in result["messages"]] == [type(m) for m in value["messages"]]


def test_message_fields_set_is_preserved() -> None:
    """Only the fields the user set stay set after a round trip."""
    serde = JsonPlusSerializer()
    result = serde.loads_typed(serde.dumps_typed(messages.HumanMessage("hi")))
    assert result.model_fields_set == messages.HumanMessage("hi").model_fields_set


def test_documents_round_trip() -> None:
    """langchain-core Documents are allowed too."""
    documents = pytest.importorskip("langchain_core.documents")
    doc = documents.Document(page_content="text", metadata={"k": (1, 2)})
    typed = JsonPlusSerializer().dumps_typed(doc)
    assert JsonPlusSerializer().loads_typed(typed) == doc


def test_legacy_json_langchain_message_loads() -> None:
    """An lc=1 serialized message in a legacy "json" blob is revived."""
    data = (
        b'{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", '
        b'"AIMessage"], "kwargs": {"content": "hi", "id": "1"}}'
    )
    result = JsonPlusSerializer().loads_typed(("json", data))
    assert result == messages.AIMessage(content="hi", id="1")

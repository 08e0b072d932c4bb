"""add_messages (langchain mode) coerces each message-like exactly as langchain-core's
``convert_to_messages`` does (stepgraph converts one item at a time)."""

from __future__ import annotations

import pytest

lc = pytest.importorskip("langchain_core.messages")

from stepgraph.graph.message import add_messages  # noqa: E402

LIKES = [
    {"role": "user", "content": "hi", "id": "1"},
    {"role": "assistant", "content": "", "id": "2",
     "tool_calls": [{"name": "add", "args": {"a": 1}, "id": "c1"}]},
    {"role": "tool", "content": "2", "tool_call_id": "c1", "id": "3"},
    {"type": "system", "content": "be brief", "id": "4"},
    ("human", "a tuple"),
    "a string",
    lc.AIMessageChunk(content="chunk", id="5"),
]


def _plain(msg: object) -> dict:
    data = msg.model_dump()  # type: ignore[attr-defined]
    data.pop("id")
    return {"cls": type(msg).__name__, **data}


@pytest.mark.parametrize("like", LIKES, ids=range(len(LIKES)))
def test_each_message_like_becomes_what_convert_to_messages_makes(like: object) -> None:
    (got,) = add_messages([], [like])
    (want,) = lc.convert_to_messages([like])
    if isinstance(want, lc.BaseMessageChunk):
        want = lc.message_chunk_to_message(want)
    assert _plain(got) == _plain(want)
    assert got.id is not None


def test_an_unknown_role_fails_as_in_convert_to_messages() -> None:
    with pytest.raises((ValueError, NotImplementedError)):
        lc.convert_to_messages([{"role": "nobody", "content": "x"}])
    with pytest.raises((ValueError, NotImplementedError)):
        add_messages([], [{"role": "nobody", "content": "x"}])

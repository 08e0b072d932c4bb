"""The hostile-blob corpus through the serializer itself, on both msgpack backends.

Each blob raises its coded ``SerializationError``, runs nothing (audit hook, marker file),
and costs little memory (``tracemalloc``: the peak stays within a small multiple of the blob
plus 2 MiB; before issue 10 ``range(10**7)`` named in 81 bytes allocated 400 MiB). The PoC
is kept as a regression test on its own, and legitimate large values keep loading.
"""

from __future__ import annotations

import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hostile_blobs import Hostile, attack_counts, corpus, poc_json, poc_msgpack

from stepgraph.checkpoint.serde import JsonPlusSerializer, SerializationError

CASES = corpus("/nonexistent/marker-placeholder")
BACKENDS = ["ormsgpack", "msgpack"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_blob_is_refused_cheaply(
    backend: str, case: Hostile, hostile: list[Hostile], watch: Any
) -> None:
    case = next(c for c in hostile if c.name == case.name)
    serde = JsonPlusSerializer(backend=backend)
    tracemalloc.start()
    try:
        with watch.reading(), pytest.raises(SerializationError) as info:
            serde.loads_typed(case.typed)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert info.value.code in case.codes, (case.name, str(info.value))
    assert info.value.hint, "every refusal says what to do"
    assert peak <= 16 * len(case.typed[1]) + (2 << 20), (case.name, peak)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("make", [poc_msgpack, poc_json], ids=["msgpack", "json"])
def test_poc_that_ran_id_on_main_is_refused(
    backend: str, make: Any, tmp_path: Path, watch: Any
) -> None:
    """The proof of concept ran ``id > marker`` through ``loads_typed`` before issue 10."""
    marker = tmp_path / "id-output"
    blob = make(str(marker))
    typed = ("msgpack" if make is poc_msgpack else "json", blob)
    with watch.reading(), pytest.raises(SerializationError) as info:
        JsonPlusSerializer(backend=backend).loads_typed(typed)
    assert info.value.code == "SG401"
    assert "operator.methodcaller" in str(info.value) or "map" in str(info.value)
    assert "allowed_msgpack_modules" in (info.value.hint or "")
    assert not marker.exists()


def test_configured_allow_lists_keep_refusing_the_poc(tmp_path: Path, watch: Any) -> None:
    """``allowed_modules=["langchain_core"]``, LangGraph's exact-name lists, and even
    ``allowed_msgpack_modules=True`` (which imports the modules a blob names: by design, for
    trusted data) do not reopen the hole: no attribute walks, no functions."""
    import langchain_core.messages.utils  # noqa: F401  (allow-all would import it)

    marker = tmp_path / "id-output"
    for serde in (
        JsonPlusSerializer(allowed_modules=["langchain_core", "logging", "operator"]),
        JsonPlusSerializer(allowed_msgpack_modules=[("langchain_core.messages.ai",
                                                     "operator.methodcaller")]),
        JsonPlusSerializer(allowed_json_modules=[("langchain_core", "messages", "ai",
                                                  "logging.Formatter")]),
        JsonPlusSerializer(allowed_msgpack_modules=True),
    ):
        for typed in (("msgpack", poc_msgpack(str(marker))), ("json", poc_json(str(marker)))):
            with watch.reading(), pytest.raises(SerializationError) as info:
                serde.loads_typed(typed)
            assert info.value.code == "SG401"
    assert not marker.exists()


def test_the_corpus_covers_every_attack_of_the_issue() -> None:
    counts = attack_counts(CASES)
    for attack in ("prefix+attribute walk (PoC)", "prefix+attribute walk",
                   "id path into os/subprocess/builtins", "constructor-style JSON (lc 2)",
                   "constructor-style JSON (lc 1, langchain)", "pickled payload", "big numbers",
                   "nesting", "hash collisions", "huge declared lengths", "datetime extremes",
                   "method extension", "regular expressions", "model reconstruction"):
        assert counts.get(attack), attack
    assert len(CASES) >= 150


def test_a_100k_message_chat_loads_in_a_fresh_serializer() -> None:
    """The limits refuse nothing an ordinary long chat holds (35 MB, 100 000 messages)."""
    messages = pytest.importorskip("langchain_core.messages")
    history: list[Any] = []
    for i in range(25_000):
        history.append(messages.HumanMessage(f"question {i} " + "lorem ipsum " * 10, id=f"h{i}"))
        history.append(messages.AIMessage("", id=f"a{i}", tool_calls=[
            {"name": "search", "args": {"q": f"x{i}"}, "id": f"c{i}", "type": "tool_call"}]))
        history.append(messages.ToolMessage("result " * 20, tool_call_id=f"c{i}", id=f"t{i}"))
        history.append(messages.AIMessage("answer " * 30, id=f"b{i}"))
    typed = JsonPlusSerializer().dumps_typed({"messages": history})
    assert len(typed[1]) > 30_000_000
    assert JsonPlusSerializer().loads_typed(typed)["messages"] == history


def test_large_legitimate_values_load() -> None:
    """Big but ordinary values: a 64-kbit int, a 4300-digit Decimal, 200-level nesting, a
    set of 100 000 ints, nested objects 90 deep, a 60 000-character pattern."""
    import decimal
    import re

    nested: Any = 1
    for _ in range(90):
        nested = (nested,)
    deep: Any = []
    for _ in range(200):
        deep = [deep]
    values = [1 << 65_000, decimal.Decimal("9" * 4300), deep, set(range(100_000)), nested,
              re.compile("a" * 60_000), {i: str(i) for i in range(50_000)}]
    serde = JsonPlusSerializer()
    for value in values:
        assert serde.loads_typed(serde.dumps_typed(value)) == value

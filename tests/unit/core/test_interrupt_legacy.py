"""``Interrupt`` objects written by LangGraph < 0.6 (``ns``/``when``/``resumable``) load back."""

from __future__ import annotations

import pytest

from stepgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from stepgraph.types import Interrupt

pytest.importorskip("xxhash")


def test_legacy_keywords_give_langgraphs_id() -> None:
    old = Interrupt(value="v", resumable=True, when="during", ns=["outer:1", "inner:2"])
    assert old.value == "v"
    assert old.id == Interrupt.from_ns("v", "outer:1|inner:2").id
    assert len(old.id) == 32
    assert Interrupt(value="v", id="given", ns=["x:1"]).id == "given"
    with pytest.raises(TypeError, match="bogus"):
        Interrupt(value="v", bogus=1)


def test_legacy_json_blob_loads_with_a_stable_id() -> None:
    blob = (b'{"lc": 2, "type": "constructor", "id": ["langgraph", "types", "Interrupt"], '
            b'"kwargs": {"value": "q", "resumable": true, "ns": ["node:abc"], "when": "during"}}')
    first = JsonPlusSerializer(allowed_json_modules=True).loads_typed(("json", blob))
    again = JsonPlusSerializer(allowed_json_modules=True).loads_typed(("json", blob))
    assert isinstance(first, Interrupt) and first.value == "q"
    assert first.id == again.id == Interrupt.from_ns("q", "node:abc").id

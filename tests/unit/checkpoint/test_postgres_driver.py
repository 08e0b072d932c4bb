"""The PostgreSQL savers import psycopg lazily and explain how to install it."""

from __future__ import annotations

import sys

import pytest

from stepgraph.checkpoint.base import SaverError


def test_missing_psycopg_is_a_coded_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without psycopg, creating a PostgresSaver raises SG412 naming the extra to install."""
    from stepgraph.checkpoint.postgres import PostgresSaver

    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(SaverError) as info:
        PostgresSaver(object())
    assert info.value.code == "SG412"
    assert "stepgraph[postgres]" in str(info.value)

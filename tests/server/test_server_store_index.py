"""``store.index`` (semantic search with scores) and ``store.ttl`` through ``stepgraph serve``
and the official ``langgraph_sdk`` client, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from serve_harness import pg_schema_url, pg_unreachable, serve_config  # noqa: E402

APP = Path(__file__).resolve().parent / "integrations_app"
STORE = {"index": {"dims": 4, "embed": f"{APP}/embed.py:embed", "fields": ["text"]},
         "ttl": {"default_ttl": 0.02, "refresh_on_read": False, "sweep_interval_minutes": 1}}


def _backends() -> list[Any]:
    reason = pg_unreachable()
    return ["sqlite", pytest.param("postgres", marks=[pytest.mark.postgres,
                                                      pytest.mark.skipif(reason is not None, reason=reason or "")])]


@pytest.fixture(scope="module", params=_backends())
def store_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp(f"store-{request.param}")
    config = tmp / "langgraph.json"
    config.write_text(json.dumps({"graphs": {"adder": f"{APP}/graphs.py:adder"}, "store": STORE}))
    if request.param == "postgres":
        with pg_schema_url() as url, serve_config(config, tmp, database_url=url) as (base, _):
            yield base
    else:
        with serve_config(config, tmp) as (base, _):
            yield base


def test_semantic_search_ranks_with_scores(store_server: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=store_server, api_key=None)
    ns = ["docs", "animals"]
    client.store.put_item(ns, "a", {"text": "cat cat cat"}, ttl=None)
    client.store.put_item(ns, "b", {"text": "dog dog"}, ttl=None)
    client.store.put_item(ns, "c", {"text": "cat dog fish"}, ttl=None)
    client.store.put_item(ns, "skip", {"text": "cat cat cat cat", "n": 1}, index=False, ttl=None)
    found = client.store.search_items(["docs"], query="cat", limit=10)["items"]
    keys = [item["key"] for item in found]
    assert keys[:2] == ["a", "c"], found
    scores = [item["score"] for item in found if item["key"] != "skip"]
    assert all(isinstance(s, float) for s in scores) and scores == sorted(scores, reverse=True)
    # Not indexed: still found by a filter search, with no score; ranked after the indexed ones.
    assert found[-1]["key"] == "skip" and found[-1].get("score") is None
    by_filter = client.store.search_items(["docs"], filter={"n": 1})["items"]
    assert [i["key"] for i in by_filter] == ["skip"]
    dogs = client.store.search_items(["docs"], query="dog", limit=1)["items"]
    assert [i["key"] for i in dogs] == ["b"] and dogs[0]["score"] > 0.9


def test_store_default_ttl_expires_items(store_server: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=store_server, api_key=None)
    client.store.put_item(["ttl"], "short", {"text": "bird"})  # default_ttl: 0.02 minutes
    client.store.put_item(["ttl"], "kept", {"text": "bird"}, ttl=60)
    assert client.store.get_item(["ttl"], "short") is not None
    time.sleep(1.6)
    assert client.store.get_item(["ttl"], "short") is None
    assert client.store.get_item(["ttl"], "kept")["value"] == {"text": "bird"}
    assert [i["key"] for i in client.store.search_items(["ttl"])["items"]] == ["kept"]

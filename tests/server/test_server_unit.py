"""Pieces of the server without HTTP: ids, event logs, filters, config loading, CLI."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path

import pytest

from stepgraph.server.cli import run_cli
from stepgraph.server.graphs import GraphRegistry
from stepgraph.server.runtime.eventlog import MemoryEventLog, parse_event_id
from stepgraph.server.runtime.messages import MessageAccumulator
from stepgraph.server.serde import dumps, jsonable
from stepgraph.server.settings import ConfigError, find_config, load_settings
from stepgraph.server.util import system_assistant_id, uuid7

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_ids() -> None:
    ids = [uuid7() for _ in range(2000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert uuid.UUID(ids[0]).version == 7
    assert system_assistant_id("simple") == "5e0f6b46-d00f-5af4-87dc-ea2105ff526d"


async def test_event_log_ids_and_followers() -> None:
    logs = MemoryEventLog()
    log = logs.open("r1", resumable=True)
    for i in range(50):
        log.append("values", str(i).encode())
    keys = [e.key for e in log.events]
    assert keys == sorted(keys) and len(set(keys)) == 50
    seen: list[bytes] = []

    async def follow() -> None:
        async for event in log.follow(after=parse_event_id(log.events[47].id), heartbeat=0.05):
            if event is not None:
                seen.append(event.data)

    task = asyncio.create_task(follow())
    await asyncio.sleep(0.1)
    log.append("values", b"50")
    logs.close("r1")
    await asyncio.wait_for(task, 1)
    assert seen == [b"48", b"49", b"50"]
    assert logs.get("r1") is not None  # resumable logs are kept after the run
    plain = logs.open("r2", resumable=False)
    logs.close("r2")
    assert logs.get("r2") is None and plain.closed
    assert parse_event_id("0") == (0, -1) and parse_event_id("junk") == (-1, -1)


async def test_heartbeat_when_silent() -> None:
    log = MemoryEventLog().open("r", resumable=False)
    got = []
    async for event in log.follow(heartbeat=0.02):
        got.append(event)
        if len(got) == 2:
            break
    assert got == [None, None]


def test_serde_shapes() -> None:
    from stepgraph.types import Interrupt, Send

    intr = Interrupt(value={"q": 1}, id="abc")
    assert jsonable({"__interrupt__": (intr,)}, stream=True) == {
        "__interrupt__": [{"value": {"q": 1}, "id": "abc", "response_schema": None}]}
    assert jsonable([intr]) == [{"id": "abc", "value": {"q": 1}}]
    assert jsonable({"s": {1, 2}, "t": (1, 2), "send": Send("n", {"x": 1})}) == {
        "s": [1, 2], "t": [1, 2], "send": {"node": "n", "input": {"x": 1}}}
    assert dumps({"é": "ü"}) == '{"é":"ü"}'.encode()


def test_message_accumulator_dict_chunks() -> None:
    acc = MessageAccumulator()
    out = acc.feed({"type": "AIMessageChunk", "content": "he", "id": "m1"}, {"langgraph_node": "n"})
    out += acc.feed({"type": "AIMessageChunk", "content": "llo", "id": "m1"}, {"langgraph_node": "n"})
    assert [k for k, _ in out] == ["metadata", "partial", "partial"]
    assert out[-1][1] == [{"type": "ai", "content": "hello", "id": "m1"}]
    assert acc.feed({"role": "assistant", "content": "x", "id": "m2"}, {})[-1][0] == "complete"


def test_config_loading(tmp_path: Path) -> None:
    assert find_config(str(EXAMPLES)).name == "stepgraph.json"
    (tmp_path / "langgraph.json").write_text(json.dumps({
        "dependencies": ["."], "graphs": {"g": "./g.py:graph"}, "env": {"SG_TEST_VAR": "1"}}))
    (tmp_path / "g.py").write_text(
        "from stepgraph.graph import StateGraph, START\n"
        "from typing_extensions import TypedDict\n"
        "class S(TypedDict):\n    x: int\n"
        "graph = StateGraph(S).add_node('n', lambda s: {'x': s['x'] + 1}).add_edge(START, 'n')\n")
    settings = load_settings(find_config(str(tmp_path)), port=9999)
    assert settings.port == 9999 and settings.env == {"SG_TEST_VAR": "1"}
    assert settings.default_db_path == tmp_path / ".stepgraph" / "stepgraph.sqlite"
    registry = GraphRegistry(settings.graphs, settings.base_dir)
    registry.load()
    graph = asyncio.run(registry.build("g"))
    assert graph.invoke({"x": 1}) == {"x": 2}


@pytest.mark.parametrize(("graphs", "message"), [
    ({"g": "./missing.py:graph"}, "not found"),
    ({"g": "./server_graphs.py:nope"}, "no attribute"),
    ({"g": "no_colon_here"}, "expected"),
    ({"g": 42}, "not a graph"),
])
def test_bad_graph_references(graphs: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        GraphRegistry(graphs, EXAMPLES).load()


def test_cli_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli([]) == 2
    assert run_cli(["serve", "--config", str(tmp_path / "none.json")]) == 1
    (tmp_path / "stepgraph.json").write_text('{"graphs": {}}')
    assert run_cli(["dev", "--config", str(tmp_path / "stepgraph.json"), "--no-browser"]) == 1
    assert "graphs" in capsys.readouterr().err

"""``examples/langchain_agent/``: a LangGraph Platform app (``langgraph.json`` + a langchain v1
``create_agent`` graph, no stepgraph import) served by ``stepgraph serve`` and driven with
the official ``langgraph_sdk`` client: tools, human-in-the-loop interrupt and resume."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from serve_harness import run_cli_once, serve_config

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "langchain_agent"

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("langchain") is None or importlib.util.find_spec("langgraph_sdk") is None,
    reason="langchain v1 and langgraph-sdk are needed (pip install 'stepgraph[ecosystem,server]')",
)


@pytest.fixture(scope="module")
def agent_url(tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("lcagent")
    with serve_config(EXAMPLE / "langgraph.json", tmp) as (url, _log):
        yield url


def _human(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def test_the_agent_calls_its_tool_and_answers(agent_url: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=agent_url)
    assert {"agent", "agent_hitl"} <= {a["graph_id"] for a in client.assistants.search(limit=20)}
    thread = client.threads.create()
    parts = list(client.runs.stream(thread["thread_id"], "agent", input=_human("Weather in Paris?"),
                                    stream_mode="updates"))
    nodes = [next(iter(p.data)) for p in parts if p.event == "updates"]
    assert nodes == ["model", "tools", "model"]
    values = client.threads.get_state(thread["thread_id"])["values"]
    assert [m["type"] for m in values["messages"]] == ["human", "ai", "tool", "ai"]
    assert values["messages"][-1]["content"] == "It is sunny in Paris."


def test_human_in_the_loop_through_the_sdk(agent_url: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=agent_url)
    tid = client.threads.create()["thread_id"]
    out = client.runs.wait(tid, "agent_hitl", input=_human("Weather in Rome?"))
    (pending,) = out["__interrupt__"]
    assert pending["value"]["action_requests"][0]["args"] == {"city": "Rome"}
    assert client.threads.get(tid)["status"] == "interrupted"
    edited = {"type": "edit", "edited_action": {"name": "get_weather", "args": {"city": "Oslo"}}}
    final = client.runs.wait(tid, "agent_hitl", command={"resume": {"decisions": [edited]}})
    assert final["messages"][-1]["content"].endswith("sunny in Oslo.")  # the edited call ran
    assert client.threads.get(tid)["status"] == "idle"


async def test_async_client_streams_the_agent(agent_url: str) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=agent_url)
    tid = (await client.threads.create())["thread_id"]
    events = [p async for p in client.runs.stream(tid, "agent", input=_human("Weather in Lima?"),
                                                  stream_mode="values")]
    last = [p.data for p in events if p.event == "values"][-1]
    assert last["messages"][-1]["content"] == "It is sunny in Lima."


def test_with_the_alias_switched_off_the_graph_is_refused(tmp_path: Path) -> None:
    """STEPGRAPH_LANGGRAPH_ALIAS=0: create_agent builds a real LangGraph graph: SG613."""
    import os

    os.environ["STEPGRAPH_LANGGRAPH_ALIAS"] = "0"
    try:
        code, out = run_cli_once(EXAMPLE / "langgraph.json", tmp_path)
    finally:
        del os.environ["STEPGRAPH_LANGGRAPH_ALIAS"]
    assert code != 0 and "SG613" in out and "real LangGraph" in out


def test_the_example_runs_as_a_script_with_the_launcher() -> None:
    proc = subprocess.run([sys.executable, "-m", "stepgraph.compat", str(EXAMPLE / "agent.py")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert "runtime: stepgraph.graph.compile" in proc.stdout
    assert "It is sunny in Paris." in proc.stdout and "after approval: It is sunny in Rome." in proc.stdout

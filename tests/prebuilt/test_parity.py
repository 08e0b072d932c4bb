"""The same agent programs give LangGraph's results (recorded in ``langgraph_expected.json``)."""

import json
import os
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")

from parity_scenarios import run_all  # noqa: E402

HERE = Path(__file__).parent
EXPECTED = json.loads((HERE / "langgraph_expected.json").read_text())
LANGGRAPH_PYTHON = Path("/tmp/lg/bin/python")


@pytest.fixture(scope="module")
def results() -> dict:
    return json.loads(json.dumps(run_all("stepgraph")))


@pytest.mark.parametrize("scenario", sorted(EXPECTED))
def test_scenario_matches_langgraph(results: dict, scenario: str) -> None:
    """Each scenario's stepgraph result equals LangGraph's recorded one."""
    assert results[scenario] == EXPECTED[scenario]


def test_every_scenario_is_recorded(results: dict) -> None:
    """No scenario runs without a recorded LangGraph result."""
    assert sorted(results) == sorted(EXPECTED)


@pytest.mark.skipif(not LANGGRAPH_PYTHON.exists(), reason="no reference LangGraph install")
def test_recording_is_current_langgraph_output() -> None:
    """The reference LangGraph still produces the recorded results."""
    env = {**os.environ, "PYTHONPATH": ""}
    out = subprocess.run(
        [str(LANGGRAPH_PYTHON), str(HERE / "parity_scenarios.py"), "langgraph"],
        capture_output=True, text=True, check=True, env=env, timeout=60,
    )
    assert json.loads(out.stdout) == EXPECTED

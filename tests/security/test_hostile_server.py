"""Hostile blobs planted in the database of a running ``stepgraph serve``.

One server process (the real CLI, on a free loopback port, on a SQLite file) runs a graph
on a few threads; the attacker then writes corpus blobs into those threads' rows with their
own SQLite connection. ``GET /threads/{id}/state`` (and history) must answer 422 with the
blob's code in a JSON body, nothing in the blob may run, and the server must keep serving
(the nested-objects case used to kill the process with a segmentation fault).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hostile_blobs import Hostile

GRAPH = '''
import operator
from typing import Annotated, TypedDict
from stepgraph.graph import START, StateGraph

class State(TypedDict):
    messages: Annotated[list, operator.add]
    note: str

def node(state):
    return {"messages": [len(state["messages"])], "note": "done"}

graph = StateGraph(State).add_node("n", node).add_edge(START, "n").compile()
'''

SERVER_CASES = ["poc-msgpack-id", "poc-json-id", "walk-filehandler", "walk-range-10e7",
                "nested-objects-segfault", "nested-arrays-100k", "flood-array-keys",
                "fraction-1e10000000", "decimal-exponent", "json-lc1-ChatPromptTemplate",
                "pickle-blob", "huge-array-length"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Served:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.db = tmp / "db.sqlite"
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        (tmp / "hostile_graph.py").write_text(GRAPH)
        (tmp / "stepgraph.json").write_text(json.dumps({"graphs": {"g": "./hostile_graph.py:graph"}}))
        exe = Path(sys.executable).with_name("stepgraph")
        cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "stepgraph.cli"]
        cmd += ["serve", "--config", str(tmp / "stepgraph.json"), "--port", str(self.port),
                "--database-url", str(self.db), "--no-browser", "--no-reload",
                "--log-level", "warning"]
        self.log = (tmp / "server.log").open("wb")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True, cwd=tmp)
        self.http = httpx.Client(base_url=self.url, timeout=30)
        deadline = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None, self.logs()
            try:
                if self.http.get("/ok").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, self.logs()
            time.sleep(0.1)

    def logs(self) -> str:
        return (self.tmp / "server.log").read_text(errors="replace")[-4000:]

    def new_thread(self) -> str:
        thread_id = self.http.post("/threads", json={}).json()["thread_id"]
        run = self.http.post(f"/threads/{thread_id}/runs/wait",
                             json={"assistant_id": "g", "input": {"messages": [0], "note": "a"}})
        assert run.status_code == 200, run.text
        return thread_id

    def plant(self, thread_id: str, typed: tuple[str, bytes]) -> None:
        """Overwrite the thread's stored ``messages`` values, as an attacker with write access
        to the database file would."""
        conn = sqlite3.connect(self.db, timeout=30)
        try:
            row = conn.execute("SELECT thread_key FROM sg_threads WHERE thread_id = ?",
                               (thread_id,)).fetchone()
            stored = f"#{row[0]}" if row else thread_id
            typ = "" if typed[0] == "msgpack" else typed[0]
            n = conn.execute("UPDATE sg_checkpoint_blobs SET type = ?, blob = ?, base_version = NULL "
                             "WHERE thread_id = ? AND channel = 'messages'", (typ, typed[1], stored))
            assert n.rowcount > 0
            conn.commit()
        finally:
            conn.close()

    def stop(self) -> None:
        self.http.close()
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=20)
        self.log.close()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    srv = Served(tmp_path_factory.mktemp("hostile-server"))
    try:
        yield srv
    finally:
        srv.stop()


@pytest.mark.parametrize("name", SERVER_CASES)
def test_planted_blob_answers_a_coded_422_and_the_server_keeps_serving(
    served: Served, hostile: list[Hostile], marker: Path, name: str
) -> None:
    case = next(c for c in hostile if c.name == name)
    good, bad = served.new_thread(), served.new_thread()
    served.plant(bad, case.typed)
    for response in (
        served.http.get(f"/threads/{bad}/state"),
        served.http.post(f"/threads/{bad}/history", json={"limit": 5}),
    ):
        assert response.status_code == 422, (name, response.status_code, response.text)
        body: dict[str, Any] = response.json()
        assert body["code"] in case.codes, (name, body)
        assert body["code"] in body["detail"] and body["hint"]
    assert served.proc.poll() is None, served.logs()
    assert served.http.get("/ok").status_code == 200
    state = served.http.get(f"/threads/{good}/state")
    assert state.status_code == 200 and state.json()["values"]["messages"] == [0, 1]
    assert not marker.exists()

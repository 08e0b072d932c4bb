"""A real stepgraph server (uvicorn in a background thread) on a free loopback port.

``start_server(db, graphs=...)`` starts one and returns a ``RunningServer``. (A module of its
own, not ``conftest``: test modules import it by a name no other test folder uses.)
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
sys.path.insert(0, str(Path(__file__).resolve().parent))

import server_test_graphs  # noqa: E402


def example_graphs() -> dict[str, Any]:
    """The conformance graphs (as ``./server_graphs.py:var`` references) plus the test graphs."""
    specs = json.loads((EXAMPLES / "stepgraph.json").read_text())["graphs"]
    return {**specs, **server_test_graphs.GRAPHS}


class RunningServer:
    """A uvicorn server running the stepgraph app in a thread."""

    def __init__(self, settings: Any) -> None:
        import uvicorn

        from stepgraph.server import create_app

        self.settings = settings
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        app = create_app(settings)
        self.app = app
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("server did not start")
            time.sleep(0.02)

    def _serve(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.sock]))

    @property
    def ctx(self) -> Any:
        """The server's ``ServerContext`` (for white-box checks)."""
        return self.app.state.ctx

    def stop(self) -> None:
        """Stop serving and wait for the thread (runs are cancelled, the database closed)."""
        self.server.should_exit = True
        self.thread.join(timeout=20)
        self.sock.close()


def start_server(db: str | Path | None = None, *, graphs: dict[str, Any] | None = None,
                 database_url: str | None = None, base_dir: Path = EXAMPLES, **settings: Any) -> RunningServer:
    """Start a server hosting ``graphs`` (default: examples + test graphs)."""
    from stepgraph.server import ServerSettings

    return RunningServer(ServerSettings(
        graphs=graphs if graphs is not None else example_graphs(), base_dir=base_dir,
        database_url=database_url or (str(db) if db is not None else None), **settings))

"""The stepgraph server: hosts compiled graphs over HTTP with the LangGraph Server API.

Start it with ``stepgraph serve --config stepgraph.json`` (or ``stepgraph dev``), or build
the ASGI app yourself::

    from stepgraph.server import ServerSettings, create_app

    app = create_app(ServerSettings(graphs={"agent": "./agent.py:graph"}))

The official ``langgraph-sdk`` client and LangGraph's ``RemoteGraph`` work against it.
Layout: ``routes/`` (one module per resource) over ``resources/`` (stored assistants,
threads, runs), ``runtime/`` (run queue, per-run event log, executor) and ``storage/``
(SQLite or PostgreSQL documents + checkpointer + store).
"""

from stepgraph.server.app import create_app
from stepgraph.server.settings import ServerSettings

__all__ = ["ServerSettings", "create_app"]

"""The stepgraph server: hosts compiled graphs over HTTP with the LangGraph Server API.

Start it with ``stepgraph serve --config stepgraph.json`` (or ``stepgraph dev``), or build
the ASGI app yourself::

    from stepgraph.server import ServerSettings, create_app

    app = create_app(ServerSettings(graphs={"agent": "./agent.py:graph"}))

The official ``langgraph-sdk`` client and LangGraph's ``RemoteGraph`` work against it, and so
do the JavaScript clients (JS SDK, ``useStream`` from ``@langchain/langgraph-sdk/react`` and
``@langchain/react``, ``@ag-ui/langgraph``): CORS (``cors.py``) and the v3 thread-streaming
protocol (``routes/v3.py``: ``POST /threads/{id}/commands`` and ``/threads/{id}/stream/events``).
Layout: ``routes/`` (one module per resource) over ``resources/`` (stored assistants,
threads, runs), ``runtime/`` (run queue, per-run event log, executor; the v3 thread event
logs, commands and event conversion) and ``storage/`` (SQLite or PostgreSQL documents +
checkpointer + store).
"""

from stepgraph.server.app import create_app
from stepgraph.server.settings import ServerSettings

__all__ = ["ServerSettings", "create_app"]

"""``langgraph.stream`` submodules that this stepgraph build does not have natively.

They hold the v3 event-streaming extension names langchain v1 imports at import time
(``StreamTransformer``, ``StreamChannel``, run-stream classes...). When stepgraph's own
``stepgraph.stream`` modules define them, the alias uses those instead (native first); the
placeholders here (``_pending.py``) let the ecosystem import and subclass them, and raise
``V3StreamingUnavailableError`` (SG614) if v3 streaming actually tries to use one.
"""

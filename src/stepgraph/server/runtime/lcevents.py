"""The wire ``events`` stream mode: LangChain-style callback events, built from engine parts.

LangGraph's server sends ``astream_events`` output in this mode; stepgraph has no callback
tracer, so the events are derived from the engine's ``tasks`` and ``messages`` streams:

* ``on_chain_start`` / ``on_chain_end`` for the graph (first and last) and for each node
  (from its task's start and successful result); a node's successful result also gives its
  ``on_chain_stream`` (``data.chunk``: what it returned) and the graph's ``on_chain_stream``
  (``data.chunk``: ``{node: result}``, the graph's ``updates`` chunk), as ``astream_events``;
* ``on_chat_model_start``, one ``on_chat_model_stream`` per chunk (``data.chunk``) and
  ``on_chat_model_end`` (``data.output``, the whole message) for every streamed chat-model
  message; a message ends with its ``chunk_position: "last"`` chunk, or when its node's
  task finishes, or at the end of the run.

Each event has ``event``, ``data``, ``name``, ``tags``, ``run_id``, ``metadata`` (the run's
metadata plus ``langgraph_node`` and friends) and ``parent_ids``. CopilotKit's
``@ag-ui/langgraph`` relies on ``on_chat_model_stream`` / ``on_chat_model_end`` to stream
text and to close a message.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

from stepgraph.server.serde import jsonable

__all__ = ["CallbackEvents"]

Namespace = tuple[str, ...]


@dataclass
class _Model:
    """A chat-model message being streamed."""

    run_id: str
    name: str
    node: str | None
    metadata: dict[str, Any]
    parent_ids: list[str]
    acc: Any = None
    text: str = ""
    first: dict[str, Any] = field(default_factory=dict)


def _chunk_type(chunk: Any) -> str:
    if isinstance(chunk, dict):
        return str(chunk.get("type") or "")
    return type(chunk).__name__


def _accumulate(model: _Model, chunk: Any) -> None:
    if isinstance(chunk, dict):
        if not model.first:
            model.first = dict(chunk)
        content = chunk.get("content")
        if isinstance(content, str):
            model.text += content
        return
    try:
        model.acc = chunk if model.acc is None else model.acc + chunk
    except TypeError:
        model.acc = chunk


def _output(model: _Model) -> Any:
    if model.acc is not None:
        try:
            from langchain_core.messages import message_chunk_to_message

            return jsonable(message_chunk_to_message(model.acc), stream=True)
        except ImportError:  # pragma: no cover - chunks are langchain objects only with langchain-core
            return jsonable(model.acc, stream=True)
    return {**model.first, "type": "ai", "content": model.text}


class CallbackEvents:
    """Turns one run's engine parts into ``events`` payloads."""

    def __init__(self, graph_name: str, run_id: str, metadata: dict[str, Any] | None = None) -> None:
        self.graph_name = graph_name
        self.run_id = run_id
        self.metadata = dict(metadata or {})
        self._models: dict[tuple[Namespace, str], _Model] = {}
        self._nodes: dict[str, str] = {}  # task id -> node name (running root tasks)

    def _event(self, event: str, name: str, run_id: str, data: dict[str, Any], *, tags: list[str] | None = None,
               metadata: dict[str, Any] | None = None, parent_ids: list[str] | None = None) -> dict[str, Any]:
        return {"event": event, "data": data, "name": name, "tags": tags or [], "run_id": run_id,
                "metadata": metadata if metadata is not None else self.metadata, "parent_ids": parent_ids or []}

    def start(self, graph_input: Any) -> list[dict[str, Any]]:
        """The graph's ``on_chain_start``."""
        return [self._event("on_chain_start", self.graph_name, self.run_id,
                            {"input": jsonable(graph_input, stream=True)})]

    def end(self, output: Any) -> list[dict[str, Any]]:
        """Open chat models ended, then the graph's ``on_chain_end``."""
        out = self._end_models(None)
        out.append(self._event("on_chain_end", self.graph_name, self.run_id,
                               {"output": jsonable(output, stream=True)}))
        return out

    def feed(self, ns: Namespace, mode: str, payload: Any) -> list[dict[str, Any]]:
        """The events for one engine part (``tasks`` and ``messages`` modes only)."""
        if mode == "tasks" and isinstance(payload, dict) and not ns:
            return self._task(payload)
        if mode == "messages":
            chunk, meta = payload if isinstance(payload, (tuple, list)) and len(payload) == 2 else (payload, {})
            return self._chunk(ns, chunk, meta if isinstance(meta, dict) else {})
        return []

    def _node_meta(self, name: str) -> dict[str, Any]:
        return {**self.metadata, "langgraph_node": name}

    def _task(self, payload: dict[str, Any]) -> list[dict[str, Any]]:
        task_id, name = str(payload.get("id")), str(payload.get("name"))
        if "input" in payload:
            self._nodes[task_id] = name
            return [self._event("on_chain_start", name, task_id, {"input": jsonable(payload.get("input"), stream=True)},
                                metadata=self._node_meta(name), parent_ids=[self.run_id])]
        self._nodes.pop(task_id, None)
        out = self._end_models(name)
        if payload.get("error") is None and not payload.get("interrupts"):
            result = jsonable(payload.get("result"), stream=True)
            meta = self._node_meta(name)
            out.append(self._event("on_chain_stream", name, task_id, {"chunk": result}, metadata=meta,
                                   parent_ids=[self.run_id]))
            out.append(self._event("on_chain_end", name, task_id, {"output": result}, metadata=meta,
                                   parent_ids=[self.run_id]))
            out.append(self._event("on_chain_stream", self.graph_name, self.run_id, {"chunk": {name: result}}))
        return out

    def _chunk(self, ns: Namespace, chunk: Any, meta: dict[str, Any]) -> list[dict[str, Any]]:
        if not _chunk_type(chunk).endswith("Chunk"):
            return []  # a complete message (returned by a node): not a model stream
        mid = str((chunk.get("id") if isinstance(chunk, dict) else getattr(chunk, "id", None)) or "")
        key = (ns, mid)
        out: list[dict[str, Any]] = []
        model = self._models.get(key)
        metadata = {**self.metadata, **jsonable(meta, stream=True)}
        if model is None:
            name = str(meta.get("ls_model_name") or meta.get("ls_provider") or "ChatModel")
            node = meta.get("langgraph_node")
            model = self._models[key] = _Model(str(uuid.uuid4()), name, node, metadata, [self.run_id])
            out.append(self._event("on_chat_model_start", name, model.run_id, {"input": {}},
                                   metadata=metadata, parent_ids=model.parent_ids))
        _accumulate(model, chunk)
        data = jsonable(chunk, stream=True)
        if isinstance(data, dict):  # the fields clients read from a LangChain chunk
            data = {"additional_kwargs": {}, "response_metadata": {}, "tool_call_chunks": [], **data}
        out.append(self._event("on_chat_model_stream", model.name, model.run_id, {"chunk": data},
                               metadata=metadata, parent_ids=model.parent_ids))
        if isinstance(data, dict) and data.get("chunk_position") == "last":
            out.append(self._model_end(self._models.pop(key)))
        return out

    def _model_end(self, model: _Model) -> dict[str, Any]:
        return self._event("on_chat_model_end", model.name, model.run_id, {"output": _output(model)},
                           metadata=model.metadata, parent_ids=model.parent_ids)

    def _end_models(self, node: str | None) -> list[dict[str, Any]]:
        keys = [k for k, m in self._models.items() if node is None or m.node == node]
        return [self._model_end(self._models.pop(k)) for k in keys]

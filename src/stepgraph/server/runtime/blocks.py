"""Chat-model output as the v3 ``messages`` channel: content-block events.

The engine's ``messages`` stream yields ``(chunk, metadata)`` pairs. Per message id this
module turns them into::

    message-start -> content-block-start -> content-block-delta ... -> content-block-finish
                  -> (next block ...) -> message-finish

Text goes to ``text`` blocks (``text-delta``), reasoning to ``reasoning`` blocks
(``reasoning-delta``), tool-call chunks to ``tool_call_chunk`` blocks (``tool-call-delta``,
finished as a parsed ``tool_call``). Blocks of one message never interleave. A message is
finished by its ``chunk_position: "last"`` chunk, or by ``finish()`` (the caller calls it
when the step's values arrive and when the run ends). Only chat-model output is streamed:
messages a node returned without a model (engine metadata ``ls_integration: langgraph``),
human and tool messages are left to the ``values`` channel.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from stepgraph.server.serde import jsonable

__all__ = ["MessageBlocks"]

Namespace = tuple[str, ...]
Out = list[tuple[Namespace, dict[str, Any]]]

_AI_TYPES = ("ai", "AIMessageChunk", "AIMessage", "assistant")
_USAGE_KEYS = ("input_tokens", "output_tokens", "total_tokens")


@dataclass
class _Message:
    """One message being streamed: its current block and usage so far."""

    id: str
    index: int = -1
    kind: str | None = None
    text: str = ""
    tool: dict[str, Any] = field(default_factory=dict)
    usage: dict[str, int] = field(default_factory=dict)


def _as_dict(message: Any) -> dict[str, Any] | None:
    if isinstance(message, dict):
        return message
    data = jsonable(message, stream=True)
    return data if isinstance(data, dict) else None


def _pieces(message: dict[str, Any]) -> list[tuple[str, Any]]:
    """``(kind, payload)`` of a chunk: text / reasoning strings, tool-call chunk dicts."""
    out: list[tuple[str, Any]] = []
    content = message.get("content")
    if isinstance(content, str):
        if content:
            out.append(("text", content))
    elif isinstance(content, list):
        for block in content:
            if isinstance(block, str):
                if block:
                    out.append(("text", block))
            elif isinstance(block, dict):
                kind = block.get("type")
                if kind == "text" and block.get("text"):
                    out.append(("text", block["text"]))
                elif kind in ("reasoning", "thinking"):
                    text = block.get("reasoning") or block.get("thinking") or "".join(
                        s.get("text", "") for s in block.get("summary") or () if isinstance(s, dict))
                    if text:
                        out.append(("reasoning", text))
    for chunk in message.get("tool_call_chunks") or ():
        if isinstance(chunk, dict):
            out.append(("tool", chunk))
    return out


def _parse_args(raw: str) -> Any:
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except ValueError:
        return {}


class MessageBlocks:
    """Streams messages (keyed by namespace and id) as content-block events."""

    def __init__(self) -> None:
        self._open: dict[tuple[Namespace, str], _Message] = {}

    def feed(self, ns: Namespace, chunk: Any, metadata: Any) -> Out:
        """The events for one engine ``messages`` part."""
        meta = metadata if isinstance(metadata, dict) else {}
        if meta.get("ls_integration") == "langgraph":
            return []  # returned by a node, not produced by a model
        message = _as_dict(chunk)
        if message is None or message.get("type", "ai") not in _AI_TYPES:
            return []
        mid = str(message.get("id") or "")
        is_chunk = str(message.get("type", "")).endswith("Chunk")
        out: Out = []
        key = (ns, mid)
        state = self._open.get(key)
        if state is None:
            state = self._open[key] = _Message(mid)
            out.append((ns, {"event": "message-start", "role": "ai", "id": mid}))
        if is_chunk:
            for kind, payload in _pieces(message):
                out += self._piece(ns, state, kind, payload)
        else:
            out += self._complete(ns, state, message)
        usage = message.get("usage_metadata")
        if isinstance(usage, dict):
            for k in _USAGE_KEYS:
                if isinstance(usage.get(k), int):
                    state.usage[k] = state.usage.get(k, 0) + usage[k]
        if not is_chunk or message.get("chunk_position") == "last":
            out += self._finish(ns, self._open.pop(key))
        return out

    def finish(self, prefix: Namespace = ()) -> Out:
        """Finish every open message whose namespace starts with ``prefix``."""
        out: Out = []
        for key in [k for k in self._open if k[0][: len(prefix)] == prefix]:
            out += self._finish(key[0], self._open.pop(key))
        return out

    # -- blocks ----------------------------------------------------------------------------
    def _piece(self, ns: Namespace, state: _Message, kind: str, payload: Any) -> Out:
        out: Out = []
        if kind == "tool":
            call_id, name, index = payload.get("id"), payload.get("name"), payload.get("index")
            new_call = state.kind != "tool" or (call_id and call_id != state.tool.get("id")) or (
                index is not None and state.tool.get("index") is not None and index != state.tool["index"])
            if new_call:
                out += self._start(ns, state, "tool", {"type": "tool_call_chunk", "id": call_id,
                                                        "name": name, "args": ""})
                state.tool = {"id": call_id, "name": name, "index": index, "args": ""}
            args = payload.get("args") or ""
            if args:
                state.tool["args"] += args
                out.append((ns, {"event": "content-block-delta", "index": state.index,
                                 "delta": {"type": "tool-call-delta", "args": args}}))
            return out
        if state.kind != kind:
            out += self._start(ns, state, kind, {"type": kind, kind: ""})
        state.text += payload
        out.append((ns, {"event": "content-block-delta", "index": state.index,
                         "delta": {"type": f"{kind}-delta", kind: payload}}))
        return out

    def _complete(self, ns: Namespace, state: _Message, message: dict[str, Any]) -> Out:
        """A message that arrived whole (a model that did not stream)."""
        out: Out = []
        for kind, payload in _pieces({**message, "tool_call_chunks": None}):
            out += self._piece(ns, state, kind, payload)
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict):
                args = json.dumps(call.get("args") or {})
                out += self._piece(ns, state, "tool", {"id": call.get("id"), "name": call.get("name"), "args": args})
        return out

    def _start(self, ns: Namespace, state: _Message, kind: str, content: dict[str, Any]) -> Out:
        out = self._finish_block(ns, state)
        state.index += 1
        state.kind, state.text = kind, ""
        out.append((ns, {"event": "content-block-start", "index": state.index, "content": content}))
        return out

    def _finish_block(self, ns: Namespace, state: _Message) -> Out:
        if state.kind is None:
            return []
        if state.kind == "tool":
            content = {"type": "tool_call", "id": state.tool.get("id"), "name": state.tool.get("name"),
                       "args": _parse_args(state.tool.get("args", ""))}
        else:
            content = {"type": state.kind, state.kind: state.text}
        state.kind = None
        return [(ns, {"event": "content-block-finish", "index": state.index, "content": content})]

    def _finish(self, ns: Namespace, state: _Message) -> Out:
        out = self._finish_block(ns, state)
        data: dict[str, Any] = {"event": "message-finish"}
        if state.usage:
            data["usage"] = dict(state.usage)
        out.append((ns, data))
        return out

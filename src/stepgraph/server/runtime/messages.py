"""The wire ``messages`` mode: chat-model chunks accumulated per message id.

The engine's ``messages`` stream yields ``(chunk, metadata)``. On the wire,
``messages-tuple`` passes those pairs through; ``messages`` sends, per message id, one
``messages/metadata`` event, then ``messages/partial`` events carrying the message
accumulated so far (or one ``messages/complete`` for a message that was not streamed).
Chunks may be langchain-core message chunks or plain dicts (``{"type", "content", "id"}``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MessageAccumulator", "message_id"]


def message_id(message: Any) -> str | None:
    """The id of a message object or dict."""
    if isinstance(message, dict):
        return message.get("id")
    return getattr(message, "id", None)


def _is_lc_chunk(message: Any) -> bool:
    return type(message).__name__.endswith("Chunk") and hasattr(message, "content") and hasattr(message, "__add__")


def _is_lc_message(message: Any) -> bool:
    return hasattr(message, "content") and hasattr(message, "type") and callable(getattr(message, "model_dump", None))


def _complete_lc(acc: Any) -> Any:
    try:
        from langchain_core.messages import message_chunk_to_message
    except ImportError:  # pragma: no cover - only without langchain-core
        return acc
    return message_chunk_to_message(acc)


def _dict_type(kind: Any) -> str:
    kind = str(kind or "ai")
    base = kind[:-5] if kind.endswith("Chunk") else kind
    return {"AIMessage": "ai", "HumanMessage": "human", "ToolMessage": "tool",
            "SystemMessage": "system"}.get(base, base)


class MessageAccumulator:
    """Turns ``(chunk, metadata)`` pairs into ``messages/*`` events."""

    def __init__(self) -> None:
        self._acc: dict[str, Any] = {}

    def feed(self, chunk: Any, metadata: Any) -> list[tuple[str, Any]]:
        """The ``(event suffix, payload)`` pairs for one engine ``messages`` part."""
        out: list[tuple[str, Any]] = []
        mid = message_id(chunk)
        key = mid if mid is not None else f"__anon_{len(self._acc)}"
        if key not in self._acc:
            out.append(("metadata", {key: {"metadata": metadata}}))
            self._acc[key] = None
        if _is_lc_chunk(chunk):
            acc = self._acc[key]
            acc = chunk if acc is None else acc + chunk
            self._acc[key] = acc
            out.append(("partial", [_complete_lc(acc)]))
        elif isinstance(chunk, dict) and str(chunk.get("type", "")).endswith("Chunk"):
            acc = self._acc[key]
            if acc is None:
                acc = {**chunk, "type": _dict_type(chunk.get("type"))}
            else:
                acc = {**acc, "content": str(acc.get("content") or "") + str(chunk.get("content") or "")}
            self._acc[key] = acc
            out.append(("partial", [acc]))
        elif _is_lc_message(chunk) or isinstance(chunk, dict):
            out.append(("complete", [chunk]))
        else:
            out.append(("complete", [{"type": "ai", "content": str(chunk), "id": mid}]))
        return out

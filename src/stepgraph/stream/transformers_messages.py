"""``run.messages``: one langchain-core ``ChatModelStream`` per chat-model call of the run.

In a v3 run the ``messages`` stream mode carries the chat model's content-block protocol
events (``message-start``, ``content-block-*``, ``message-finish``; see
``stream/_messages_handler.py``), routed here to the stream of their model run by
``metadata["run_id"]``; a whole ``AIMessage`` a node returns (not streamed by a model) is
replayed as a finished stream. Tool messages and legacy token chunks are not projected.
Needs langchain-core (imported when the first stream is made).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from stepgraph.stream._types import ProtocolEvent, StreamTransformer
from stepgraph.stream.stream_channel import StreamChannel


def _whole_message_kinds() -> tuple[type, tuple[type, ...]] | None:
    """(BaseMessage, the kinds not projected), or ``None`` without langchain-core."""
    try:
        from langchain_core.messages import AIMessageChunk, BaseMessage, ToolMessage
    except ImportError:  # pragma: no cover - langchain-core is optional
        return None
    return BaseMessage, (AIMessageChunk, ToolMessage)


class MessagesTransformer(StreamTransformer):
    """Project the run's own-level chat-model streams onto ``run.messages``."""

    _native = True
    required_stream_modes = ("messages",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._by_run: dict[str, Any] = {}
        self._ignored_runs: set[str] = set()
        self._pump_fn: Callable[[], bool] | None = None
        self._apump_fn: Callable[[], Awaitable[bool]] | None = None
        self._scope_list: list[str] = list(scope)

    def init(self) -> dict[str, Any]:
        return {"messages": self._log}

    def _bind_pump(self, fn: Callable[[], bool]) -> None:
        self._pump_fn = fn

    def _bind_apump(self, fn: Callable[[], Awaitable[bool]]) -> None:
        self._apump_fn = fn

    def _make_stream(self, *, namespace: list[str], node: str | None, message_id: str | None) -> Any:
        """A stream whose readers drive the run's pump (async if an async pump is bound)."""
        from langchain_core.language_models.chat_model_stream import (
            AsyncChatModelStream,
            ChatModelStream,
        )

        if self._apump_fn is None and self._pump_fn is not None:
            stream = ChatModelStream(namespace=namespace, node=node, message_id=message_id)
            stream.set_request_more(self._pump_fn)
            return stream
        astream = AsyncChatModelStream(namespace=namespace, node=node, message_id=message_id)
        if self._apump_fn is not None:
            astream.set_arequest_more(self._apump_fn)
        return astream

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "messages" or event["params"]["namespace"] != self._scope_list:
            return True
        payload, metadata = event["params"]["data"]
        node = metadata.get("langgraph_node") if metadata else None
        run_id = str(metadata.get("run_id", "")) if metadata else ""
        if isinstance(payload, dict) and "event" in payload:
            self._route_protocol_event(payload, run_id=run_id, node=node)
        elif (kinds := _whole_message_kinds()) is not None:
            base, skipped = kinds
            if isinstance(payload, base) and not isinstance(payload, skipped):
                self._route_whole_message(payload, node=node)
        return True

    def _route_protocol_event(self, event: dict[str, Any], *, run_id: str, node: str | None) -> None:
        kind = event.get("event")
        if kind == "message-start":
            if event.get("role") == "tool":  # tool results are not chat tokens
                self._ignored_runs.add(run_id)
                return
            mid = event.get("message_id")
            stream = self._make_stream(namespace=[], node=node,
                                       message_id=str(mid) if mid is not None else None)
            self._by_run[run_id] = stream
            self._log.push(stream)
            stream.dispatch(event)
        elif run_id in self._ignored_runs:
            if kind == "message-finish":
                self._ignored_runs.discard(run_id)
        elif (stream := self._by_run.get(run_id)) is not None:
            stream.dispatch(event)
            if kind == "message-finish":
                del self._by_run[run_id]

    def _route_whole_message(self, message: Any, *, node: str | None) -> None:
        from langchain_core.language_models._compat_bridge import message_to_events

        stream = self._make_stream(namespace=[], node=node, message_id=message.id)
        for event in message_to_events(message, message_id=message.id):
            stream.dispatch(event)
        self._log.push(stream)

    def finalize(self) -> None:
        self._by_run.clear()
        self._ignored_runs.clear()

    def fail(self, err: BaseException) -> None:
        for stream in list(self._by_run.values()):
            stream.fail(err)
        self._by_run.clear()
        self._ignored_runs.clear()

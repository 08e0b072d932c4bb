"""``run.tool_calls``: one ``ToolCallStream`` per tool call, from the ``tools`` stream mode.

Opt-in (``transformers=[ToolCallTransformer]``; also exported by ``stepgraph.prebuilt``).
``tool-started`` makes a stream, ``tool-output-delta`` feeds its ``output_deltas``,
``tool-finished`` / ``tool-error`` end it. Only the transformer's own level is projected;
``tools`` events stay in the main log.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from stepgraph.stream._types import ProtocolEvent, StreamTransformer
from stepgraph.stream.stream_channel import StreamChannel


class ToolCallStream:
    """One tool call: ``tool_call_id``, ``tool_name``, ``input``; ``output_deltas`` (what the
    tool streamed), then ``output`` or ``error`` once ``completed``."""

    def __init__(self, tool_call_id: str, tool_name: str, input: dict[str, Any] | None = None) -> None:
        self.tool_call_id = tool_call_id
        self.tool_name = tool_name
        self.input = input
        self._output_deltas: StreamChannel[Any] = StreamChannel()
        self.output: Any = None
        self.error: str | None = None
        self.completed = False

    @property
    def output_deltas(self) -> StreamChannel[Any]:
        return self._output_deltas

    def _bind(self, *, is_async: bool) -> None:
        self._output_deltas._bind(is_async=is_async)

    def _push_delta(self, delta: Any) -> None:
        self._output_deltas.push(delta)

    def _end(self, output: Any = None, error: str | None = None) -> None:
        self.output, self.error, self.completed = output, error, True
        self._output_deltas.close()

    def _finish(self, output: Any) -> None:
        self._end(output=output)

    def _fail(self, message: str) -> None:
        self._end(error=message)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._output_deltas)

    def __aiter__(self) -> AsyncIterator[Any]:
        return self._output_deltas.__aiter__()

    def __repr__(self) -> str:
        status = "running" if not self.completed else ("failed" if self.error is not None else "completed")
        return (f"ToolCallStream(tool_call_id={self.tool_call_id!r}, "
                f"tool_name={self.tool_name!r}, status={status})")


def _tool_output(output: Any) -> Any:
    """A ``ToolMessage`` (or its serialized form) as its content; anything else as is."""
    mod = sys.modules.get("langchain_core.messages")
    tool_message = getattr(mod, "ToolMessage", None) if mod is not None else None
    if tool_message is not None and isinstance(output, tool_message):
        return output.content
    if (isinstance(output, dict) and output.get("type") == "constructor"
            and isinstance(output.get("id"), list) and output["id"][-1] == "ToolMessage"):
        kwargs = output.get("kwargs")
        if isinstance(kwargs, dict):
            return kwargs.get("content")
    return output


class ToolCallTransformer(StreamTransformer):
    """Project the ``tools`` stream mode onto ``run.tool_calls``."""

    _native = True
    required_stream_modes = ("tools",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[ToolCallStream] = StreamChannel()
        self._active: dict[str, ToolCallStream] = {}
        self._is_async = False
        self._pump_fn: Callable[[], bool] | None = None
        self._apump_fn: Callable[[], Awaitable[bool]] | None = None

    def init(self) -> dict[str, Any]:
        return {"tool_calls": self._log}

    def _bind_pump(self, fn: Callable[[], bool]) -> None:
        self._pump_fn, self._is_async = fn, False

    def _bind_apump(self, fn: Callable[[], Awaitable[bool]]) -> None:
        self._apump_fn, self._is_async = fn, True

    def _new_stream(self, call_id: str, name: str, input: Any) -> ToolCallStream:
        stream = ToolCallStream(call_id, name, input)
        stream._bind(is_async=self._is_async)
        stream._output_deltas._request_more = self._pump_fn
        stream._output_deltas._arequest_more = self._apump_fn
        return stream

    def process(self, event: ProtocolEvent) -> bool:
        if event["method"] != "tools" or tuple(event["params"]["namespace"]) != self.scope:
            return True
        data = event["params"]["data"]
        call_id = data.get("tool_call_id")
        if call_id is None:
            return True
        kind = data.get("event")
        if kind == "tool-started":
            stream = self._new_stream(call_id, data.get("tool_name", ""), data.get("input"))
            self._active[call_id] = stream
            self._log.push(stream)
        elif kind == "tool-output-delta":
            if (active := self._active.get(call_id)) is not None:
                active._push_delta(data.get("delta"))
        elif kind == "tool-finished":
            if (done := self._active.pop(call_id, None)) is not None:
                done._finish(_tool_output(data.get("output")))
        elif kind == "tool-error":
            if (failed := self._active.pop(call_id, None)) is not None:
                failed._fail(data.get("message", ""))
        return True

    def finalize(self) -> None:
        for stream in self._active.values():
            if not stream.completed:
                stream._finish(None)
        self._active.clear()

    def fail(self, err: BaseException) -> None:
        for stream in self._active.values():
            if not stream.completed:
                stream._fail(str(err))
        self._active.clear()

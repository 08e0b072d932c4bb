"""The ``tools`` stream mode: the lifecycle of each langchain tool call made inside a node.

``graph.stream(..., stream_mode="tools")`` yields dicts keyed by ``event``:

* ``{"event": "tool-started", "tool_call_id", "tool_name", "input"}``
* ``{"event": "tool-output-delta", "tool_call_id", "delta"}``: what the tool streams with
  ``ToolRuntime.emit_output_delta(delta)`` (``stepgraph.prebuilt``) while it runs
* ``{"event": "tool-finished", "tool_call_id", "output"}``
* ``{"event": "tool-error", "tool_call_id", "message"}`` (an interrupt is not an error: the
  tool runs again on resume)

Tools of a subgraph are streamed with ``subgraphs=True`` under the subgraph's namespace. The
events come from a langchain callback handler added to the task configs of a run that
streams ``tools``; importing this module imports no langchain-core.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from stepgraph._running import current_task
from stepgraph.constants import TAG_NOSTREAM
from stepgraph.errors import GraphBubbleUp
from stepgraph.messages._merge import langchain_available
from stepgraph.stream.messages import swap_handler

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop

__all__ = ["MODE", "emit_output_delta", "task_callbacks"]

MODE = "tools"

ToolCallWriter = Callable[[Any], None]

tool_call_writer: ContextVar[ToolCallWriter | None] = ContextVar(
    "stepgraph_tool_call_writer", default=None
)
"""The ``tool-output-delta`` writer of the tool call running in this context, if streamed."""


def emit_output_delta(delta: Any) -> None:
    """Stream ``delta`` as the running tool call's partial output (no-op when not streamed)."""
    writer = tool_call_writer.get()
    if writer is not None:
        writer(delta)


_HANDLERS: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def _handler(loop: RunLoop) -> Any:
    handler = _HANDLERS.get(loop)
    if handler is None:
        handler = _HANDLERS[loop] = _handler_class()(loop)
    return handler


def task_callbacks(loop: RunLoop, callbacks: Any) -> Any:
    """``callbacks`` of a task config of a run streaming ``tools``: this run's handler added,
    any handler inherited from a parent graph replaced (unchanged without langchain-core)."""
    if not langchain_available():
        return callbacks
    handler = _handler(loop)
    kind = type(handler)
    return swap_handler(callbacks, handler, kind)


_CLASS: list[type] = []


def _handler_class() -> type:
    if _CLASS:
        return _CLASS[0]
    from langchain_core.callbacks import BaseCallbackHandler


    class StreamToolCallHandler(BaseCallbackHandler):
        """Streams one run's tool calls to its ``tools`` mode, keyed by ``tool_call_id``."""

        run_inline = True  # inline, in the tool's thread / task: the writer variable is seen
        stepgraph_internal = True  # not a reason to trace a run (engine/tracing.py)

        def __init__(self, loop: RunLoop) -> None:
            self._loop = weakref.ref(loop)
            self._calls: dict[Any, tuple[str, Any]] = {}

        def _emit(self, payload: dict[str, Any]) -> None:
            loop = self._loop()
            if loop is not None:
                loop.sink.emit(loop.ns, MODE, payload)

        def on_tool_start(self, serialized: Any, input_str: str, *, run_id: Any,
                          tags: list[str] | None = None, inputs: Any = None,
                          **kwargs: Any) -> Any:
            task = current_task()
            if (task is not None and task.run is not self._loop()) or (
                tags and TAG_NOSTREAM in tags
            ):
                return  # a tool of a graph nested in one of our nodes, or opted out
            call_id = kwargs.get("tool_call_id") or str(run_id)
            name = (serialized or {}).get("name") or kwargs.get("name") or ""

            def writer(delta: Any) -> None:
                if task is not None:
                    task.touch()
                self._emit({"event": "tool-output-delta", "tool_call_id": call_id, "delta": delta})

            self._calls[run_id] = (call_id, tool_call_writer.set(writer))
            payload: dict[str, Any] = {"event": "tool-started", "tool_call_id": call_id,
                                       "tool_name": name}
            if inputs is not None:
                payload["input"] = inputs
            self._emit(payload)

        def _finish(self, run_id: Any) -> str | None:
            found = self._calls.pop(run_id, None)
            if found is None:
                return None
            call_id, token = found
            try:
                tool_call_writer.reset(token)
            except ValueError:  # ended in another context: that context is gone anyway
                pass
            return call_id

        def on_tool_end(self, output: Any, *, run_id: Any, **kwargs: Any) -> Any:
            call_id = self._finish(run_id)
            if call_id is not None:
                self._emit({"event": "tool-finished", "tool_call_id": call_id, "output": output})

        def on_tool_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> Any:
            call_id = self._finish(run_id)
            if call_id is not None and not isinstance(error, GraphBubbleUp):
                self._emit({"event": "tool-error", "tool_call_id": call_id,
                            "message": str(error)})

    _CLASS.append(StreamToolCallHandler)
    return StreamToolCallHandler

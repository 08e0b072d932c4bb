"""The langchain-core callback handler behind the ``messages`` stream mode.

Imports langchain-core, so it is only loaded on the first run that streams ``messages``
with langchain-core installed.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from stepgraph._running import current_task
from stepgraph.constants import TAG_NOSTREAM

# -- langchain-core callback handler ----------------------------------------------------------


@cache
def handler_class() -> type:
    """Build the callback handler class (imports langchain-core: called on first use only)."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.outputs import ChatGeneration, ChatGenerationChunk

    try:
        from langchain_core.tracers._streaming import _StreamingCallbackHandler
    except ImportError:  # pragma: no cover - older langchain-core
        _StreamingCallbackHandler = object  # type: ignore[assignment,misc]

    class StreamMessagesHandler(BaseCallbackHandler, _StreamingCallbackHandler):  # type: ignore[misc,valid-type]
        """Reports a run's chat-model tokens and final messages to its ``messages`` stream.

        Being a ``_StreamingCallbackHandler`` makes ``BaseChatModel.invoke`` stream, as in
        LangGraph.
        """

        run_inline = True  # called in the thread / asyncio task of the model call, in order
        stepgraph_internal = True  # not a reason to trace a run (engine/tracing.py)

        def __init__(self, run: Any) -> None:
            self._run = run
            self.metadata: dict[Any, dict[str, Any]] = {}

        def tap_output_aiter(self, run_id: Any, output: Any) -> Any:
            return output

        def tap_output_iter(self, run_id: Any, output: Any) -> Any:
            return output

        def on_chat_model_start(
            self,
            serialized: Any,
            messages: Any,
            *,
            run_id: Any,
            parent_run_id: Any = None,
            tags: list[str] | None = None,
            metadata: dict[str, Any] | None = None,
            **kwargs: Any,
        ) -> Any:
            if not metadata or (tags and TAG_NOSTREAM in tags):
                return
            meta = self._run.model_metadata(metadata, tags)
            if meta is not None:
                self.metadata[run_id] = meta

        def on_llm_new_token(
            self, token: str, *, chunk: Any = None, run_id: Any, **kwargs: Any
        ) -> Any:
            if not isinstance(chunk, ChatGenerationChunk):
                return
            meta = self.metadata.get(run_id)
            if meta is not None:
                task = current_task()
                if task is not None:
                    task.touch()
                self._run.emit(chunk.message, meta)

        def on_llm_end(self, response: Any, *, run_id: Any, **kwargs: Any) -> Any:
            meta = self.metadata.pop(run_id, None)
            if meta is not None and response.generations and response.generations[0]:
                gen = response.generations[0][0]
                if isinstance(gen, ChatGeneration):
                    self._run.emit(gen.message, meta, dedupe=True)

        def on_llm_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> Any:
            self.metadata.pop(run_id, None)

    return StreamMessagesHandler


@cache
def handler_class_v3() -> type:
    """The handler of a v3 event-streaming run (``stream_events(version="v3")``): chat models
    report content-block protocol events (``on_stream_event``) instead of token chunks."""
    try:
        from langchain_core.tracers._streaming import _V2StreamingCallbackHandler
    except ImportError:  # pragma: no cover - older langchain-core
        _V2StreamingCallbackHandler = object  # type: ignore[assignment,misc]

    base: Any = handler_class()

    class StreamMessagesHandlerV3(base, _V2StreamingCallbackHandler):  # type: ignore[misc,valid-type]
        """Forwards each protocol event as a ``messages`` part ``(event, metadata)``, the
        model's run id in ``metadata["run_id"]`` (how ``MessagesTransformer`` groups them)."""

        def __init__(self, run: Any) -> None:
            super().__init__(run)
            self._streamed: set[Any] = set()

        def on_llm_new_token(self, token: str, **kwargs: Any) -> Any:
            """Legacy chunks (a node calling ``model.stream()``) are not v3 events."""

        def on_stream_event(self, event: Any, *, run_id: Any, **kwargs: Any) -> Any:
            meta = self.metadata.get(run_id)
            if meta is None:
                return
            if event.get("event") == "message-start":
                self._streamed.add(run_id)
                if mid := event.get("message_id"):
                    self._run.seen.add(mid)  # the node returning it does not stream it again
            task = current_task()
            if task is not None:
                task.touch()
            self._run.emit_raw((event, {**meta, "run_id": str(run_id)}))

        def on_llm_end(self, response: Any, *, run_id: Any, **kwargs: Any) -> Any:
            meta = self.metadata.pop(run_id, None)
            streamed = run_id in self._streamed
            self._streamed.discard(run_id)
            if meta is None or not response.generations or not response.generations[0]:
                return
            gen = response.generations[0][0]
            message = getattr(gen, "message", None)
            if message is None:
                return
            if streamed:
                if message.id is None:
                    import uuid

                    message.id = str(uuid.uuid4())
                self._run.seen.add(message.id)
            else:
                self._run.emit(message, meta, dedupe=True)

        def on_llm_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> Any:
            self._streamed.discard(run_id)
            super().on_llm_error(error, run_id=run_id, **kwargs)

    return StreamMessagesHandlerV3

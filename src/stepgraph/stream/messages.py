"""The ``messages`` stream mode: LLM tokens and messages produced inside nodes.

``graph.stream(..., stream_mode="messages")`` yields ``(message, metadata)`` pairs:

* **langchain-core chat models** (when langchain-core is installed): every token chunk of a
  chat model called inside a node, as an ``AIMessageChunk``, the moment it is produced;
  ``model.invoke()`` streams too, and a model that cannot stream yields its final message
  when it ends. Nothing to do in the node: ``model.invoke(state["messages"])`` works
  without passing ``config`` (the node's config is the ambient langchain config while it
  runs), and so does ``model.invoke(messages, config)``. A model tagged
  ``stepgraph.constants.TAG_NOSTREAM`` (``model.with_config(tags=["nostream"])``) is
  skipped.
* **messages returned by nodes**: each langchain-core message in a node's update that was
  not streamed before (dedupe by id; the node's input messages count as streamed).
* **any other LLM client**, through this module's hook, callable from inside a node::

      from stepgraph.stream.messages import push_token, push_message

      def call_model(state):
          mid = None
          text = ""
          for delta in my_client.stream(state["messages"]):
              mid = push_token(delta, message_id=mid)  # streams one chunk
              text += delta
          return {"messages": [{"role": "assistant", "content": text, "id": mid}]}

  ``push_token(token, *, message_id=None, metadata=None) -> str`` streams one chunk. A
  string token becomes the dict ``{"type": "AIMessageChunk", "content": token, "id": id}``;
  a dict is streamed as a chunk with ``type`` defaulting to ``"AIMessageChunk"``; a
  langchain-core ``BaseMessageChunk`` is streamed as is. The id is ``message_id``, else the
  chunk's own id, else a new ``uuid4`` string; it is returned so that the next chunks of
  the same message can pass it back. ``push_message(message, *, metadata=None)`` streams a
  complete message (a dict or a langchain-core message) and returns it with an id. Both
  are no-ops (apart from the returned id/message) when ``messages`` is not streamed, and
  raise ``RuntimeError`` outside a running node. A pushed id counts as streamed, so the
  node returning that message later does not stream it twice.
  ``stepgraph.graph.message.push_message`` is LangGraph's variant: it also writes the
  message to the state (``state_key``).

``metadata`` is the node's: ``langgraph_step``, ``langgraph_node``, ``langgraph_triggers``,
``langgraph_path``, ``langgraph_checkpoint_ns``, the run's metadata and ``thread_id``,
``checkpoint_ns`` (the subgraph's namespace inside a subgraph; for a chat model at the root,
the task's), plus, for chat models, the run's tags (``"tags"``) and the model's ``ls_*``
keys; ``push_token``/``push_message`` merge their ``metadata`` argument in.

Subgraph messages are streamed only with ``subgraphs=True`` (the part's namespace is the
subgraph's); otherwise a subgraph's new messages surface as the output of the parent node
that ran it.

Importing this module never imports langchain-core; the langchain callback handler is
built on first use, and only when ``messages`` is streamed and langchain-core is installed.
"""

from __future__ import annotations

import dataclasses
import sys
import weakref
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from stepgraph._running import current_task
from stepgraph.config import METADATA_FROM_CONFIGURABLE
from stepgraph.messages._dict import new_id
from stepgraph.messages._merge import langchain_available

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task

__all__ = ["push_message", "push_token"]

MODE = "messages"


V3_KEY = "__pregel_stream_messages_v2"
"""``configurable`` flag of a v3 event-streaming run: chat models report protocol events."""

_SCOPE: ContextVar[Task | None] = ContextVar("stepgraph_messages_scope", default=None)


# -- per-run state ---------------------------------------------------------------------------


class _RunMessages:
    """The ``messages`` stream of one run loop: where parts go and which ids were streamed."""

    __slots__ = ("_loop", "sink", "ns", "extra", "seen", "_handler", "v3")

    def __init__(self, loop: RunLoop, seen: set[Any]) -> None:
        self._loop = weakref.ref(loop)
        self.sink = loop.sink
        self.ns = loop.ns
        self.extra = _graph_metadata(loop)
        self.seen = seen
        self._handler: Any = None
        self.v3 = _is_v3(loop)

    def owns(self, task: Task | None) -> bool:
        """Whether an event seen now belongs to this run (not to a graph nested in a node)."""
        return task is None or task.run is self._loop()

    def task_metadata(self, task: Task) -> dict[str, Any]:
        return {**task.config.get("metadata", {}), **self.extra}

    def model_metadata(self, metadata: dict[str, Any], tags: list[str] | None) -> dict[str, Any] | None:
        """The metadata of a chat model's parts (``None``: the model is not ours to stream)."""
        task = current_task()
        if not self.owns(task):
            return None  # a model called inside a graph nested in one of our nodes
        meta = {**metadata, **self.extra}
        if task is not None and metadata.get("langgraph_checkpoint_ns") != task.ns:
            # A functional-API task call sees its caller's ambient config: report the call's
            # own metadata, as LangGraph does.
            if meta.get("checkpoint_ns") == metadata.get("langgraph_checkpoint_ns"):
                meta["checkpoint_ns"] = task.ns
            meta.update(task.config.get("metadata", {}))
        if tags and (user := [t for t in tags if not t.startswith("seq:step")]):
            meta["tags"] = user
        return meta

    def emit(self, message: Any, metadata: dict[str, Any], *, dedupe: bool = False) -> None:
        mid = _get_id(message)
        if dedupe and mid is not None and mid in self.seen:
            return
        if mid is None:
            mid = new_id()
            message.id = mid
        self.seen.add(mid)
        self.sink.emit(self.ns, MODE, (message, metadata))

    def emit_raw(self, payload: Any) -> None:
        self.sink.emit(self.ns, MODE, payload)

    def handler(self) -> Any:
        """The langchain callback handler that reports this run's chat-model tokens."""
        if self._handler is None:
            # lazy: langchain-core handler
            from stepgraph.stream._messages_handler import handler_class, handler_class_v3

            self._handler = (handler_class_v3() if self.v3 else handler_class())(self)
        return self._handler


def _is_v3(loop: RunLoop) -> bool:
    """Whether chat models of this run report v3 protocol events: the run was started by
    ``stream_events(version="v3")`` (its ``V3_KEY`` token), or it is a subgraph of such a run
    whose own caller does not read ``messages`` itself (a graph streamed with
    ``stream_mode="messages"`` inside a v3 run's node keeps the v1 chunks)."""
    token = loop.configurable.get(V3_KEY)
    if not token:
        return False
    parent = loop.parent_task
    if parent is None or parent.run.configurable.get(V3_KEY) != token:
        return True
    return MODE not in getattr(loop.sink, "local", ())


def _graph_metadata(loop: RunLoop) -> dict[str, Any]:
    """What LangGraph copies from ``configurable`` into a graph run's metadata (``thread_id``,
    a subgraph's ``checkpoint_ns``...): at each graph entry, from the root down, the keys not
    already there. So a nested subgraph reports its outermost subgraph's namespace."""
    chain = []
    run: Any = loop
    while run is not None:
        chain.append(run)
        run = run.parent_task.run if run.parent_task is not None else None
    out: dict[str, Any] = {}
    for run in reversed(chain):
        base = run.config.get("metadata") or {}
        for k in METADATA_FROM_CONFIGURABLE:
            if k not in out and k not in base and (v := run.configurable.get(k)):
                out[k] = v
    return out


_RUNS: weakref.WeakKeyDictionary[Any, _RunMessages] = weakref.WeakKeyDictionary()


def _run_messages(loop: RunLoop) -> _RunMessages:
    state = _RUNS.get(loop)
    if state is None:
        # A subgraph whose parts reach its parent's stream shares the parent's seen ids, so
        # the parent node that returns the subgraph's messages does not stream them again.
        seen: set[Any] | None = None
        parent = loop.parent_task
        if parent is not None and getattr(loop.sink, "target", None) is not None:
            up = _RUNS.get(parent.run)
            if up is not None:
                seen = up.seen
        state = _RUNS.setdefault(loop, _RunMessages(loop, set() if seen is None else seen))
    return state


def _get_id(message: Any) -> Any:
    return message.get("id") if isinstance(message, dict) else getattr(message, "id", None)


# -- engine hooks ----------------------------------------------------------------------------


def task_callbacks(loop: RunLoop, callbacks: Any) -> Any:
    """The ``callbacks`` of a task config in a run streaming ``messages`` (``build_task_config``).

    Adds this run's handler to the given callbacks (a list or a langchain callback manager),
    replacing any handler inherited from a parent graph. Returns ``callbacks`` unchanged when
    langchain-core is not installed.
    """
    if not langchain_available():
        return callbacks
    # lazy: langchain-core handler
    from stepgraph.stream._messages_handler import handler_class

    handler = _run_messages(loop).handler()
    kind = handler_class()  # the v3 handler is a subclass: either kind is replaced
    return swap_handler(callbacks, handler, kind)


def in_scope(task: Task) -> bool:
    """Whether ``task``'s attempt already runs inside :func:`attempt_sync`/``attempt_async``."""
    return _SCOPE.get() is task


def attempt_sync(task: Task, attempt: Callable[[Task], None]) -> None:
    """Run one attempt of ``task`` (``runner._attempt_sync``) with ``messages`` streamed."""
    state, tokens = _enter(task)
    try:
        attempt(task)
    finally:
        _exit(tokens)
    if state is not None and not task.node.hidden:
        _emit_outputs(state, task)


async def attempt_async(task: Task, attempt: Callable[[Task], Awaitable[None]]) -> None:
    """Async twin of :func:`attempt_sync`."""
    state, tokens = _enter(task)
    try:
        await attempt(task)
    finally:
        _exit(tokens)
    if state is not None and not task.node.hidden:
        _emit_outputs(state, task)


def _enter(task: Task) -> tuple[_RunMessages | None, tuple[Any, ...]]:
    scope = _SCOPE.set(task)
    if not langchain_available():
        return None, (scope,)
    from langchain_core.runnables.config import var_child_runnable_config

    state = _run_messages(task.run)
    config = {k: v for k, v in task.config.items() if k != "run_name" and k != "run_id"}
    lc = var_child_runnable_config.set(config)  # type: ignore[arg-type]
    message_cls = _base_message()
    if message_cls is not None and not task.node.hidden:  # like LangGraph, skip __start__
        _mark_seen(state.seen, task.input, message_cls)
    return state, (scope, var_child_runnable_config, lc)


def _exit(tokens: tuple[Any, ...]) -> None:
    if len(tokens) == 3:
        tokens[1].reset(tokens[2])
    _SCOPE.reset(tokens[0])


def _base_message() -> Any:
    mod = sys.modules.get("langchain_core.messages")
    return getattr(mod, "BaseMessage", None) if mod is not None else None


def _tool_message() -> Any:
    mod = sys.modules.get("langchain_core.messages")
    return getattr(mod, "ToolMessage", None) if mod is not None else None


def _values(obj: Any) -> Sequence[Any]:
    """Top-level values of a state: a dict, a pydantic model or a dataclass instance."""
    if isinstance(obj, dict):
        return list(obj.values())
    fields = getattr(type(obj), "model_fields", None)
    if isinstance(fields, dict):
        return [getattr(obj, k, None) for k in fields]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [getattr(obj, f.name) for f in dataclasses.fields(obj)]
    return ()


def _mark_seen(seen: set[Any], state: Any, message_cls: type) -> None:
    for value in _values(state):
        if isinstance(value, message_cls):
            if value.id is not None:
                seen.add(value.id)
        elif isinstance(value, Sequence) and not isinstance(value, str):
            for item in value:
                if isinstance(item, message_cls) and item.id is not None:
                    seen.add(item.id)


def _emit_outputs(state: _RunMessages, task: Task) -> None:
    """Stream the messages of ``task``'s update that were not streamed before."""
    message_cls = _base_message()
    if message_cls is None or not task.writes:
        return
    skipped = _tool_message() if state.v3 else None  # v3: tool results are not chat messages
    metadata: dict[str, Any] | None = None
    for _, value in task.writes:
        if isinstance(value, message_cls):
            items: Sequence[Any] = (value,)
        elif isinstance(value, (list, tuple)):
            items = value
        else:
            continue
        for item in items:
            if skipped is not None and isinstance(item, skipped):
                continue
            if isinstance(item, message_cls) and (item.id is None or item.id not in state.seen):
                if metadata is None:
                    metadata = {**state.task_metadata(task), "ls_integration": "langgraph"}
                state.emit(item, metadata, dedupe=True)


# -- the hook for other LLM clients ----------------------------------------------------------


def _running(fn: str) -> Task:
    task = current_task()
    if task is None:
        raise RuntimeError(f"{fn}() must be called from inside a running graph node")
    return task


def push_token(token: Any, *, message_id: str | None = None, metadata: dict[str, Any] | None = None) -> str:
    """Stream one token chunk of an LLM response to ``stream_mode="messages"``.

    ``token`` is a string (streamed as ``{"type": "AIMessageChunk", "content": token,
    "id": id}``), a dict (streamed as a chunk; ``type`` defaults to ``"AIMessageChunk"``) or a
    langchain-core message chunk (streamed as is). The id is ``message_id``, else the chunk's
    own id, else a new one. Returns the id: pass it back for the next chunks of the same
    message. ``metadata`` is merged into the node's metadata. A no-op when ``messages`` is
    not streamed.
    """
    task = _running("push_token")
    mid = message_id or (token.get("id") if isinstance(token, dict) else getattr(token, "id", None))
    if not mid:
        mid = new_id()
    if MODE not in task.run.sink.modes:
        return mid
    if isinstance(token, str):
        chunk: Any = {"type": "AIMessageChunk", "content": token, "id": mid}
    elif isinstance(token, dict):
        chunk = {"type": "AIMessageChunk", **token, "id": mid}
    elif hasattr(token, "content") and hasattr(token, "id"):
        chunk = token
        if chunk.id != mid:
            chunk.id = mid
    else:
        raise TypeError(
            f"push_token() takes a str, a dict or a langchain-core message chunk, "
            f"got {type(token).__name__}"
        )
    _push(task, chunk, metadata)
    return mid


def push_message(message: Any, *, metadata: dict[str, Any] | None = None) -> Any:
    """Stream one complete message to ``stream_mode="messages"`` (the state is not changed).

    ``message`` is a dict message or a langchain-core message. A dict without an id is
    copied with a new ``uuid4`` id; a langchain message without one gets it in place.
    Returns the message streamed. See ``stepgraph.graph.message.push_message`` to write it to
    the state as well.
    """
    task = _running("push_message")
    if isinstance(message, dict):
        if not message.get("id"):
            message = {**message, "id": new_id()}
    elif not (hasattr(message, "content") and hasattr(message, "id")):
        raise TypeError(
            f"push_message() takes a dict or a langchain-core message, got {type(message).__name__}"
        )
    elif message.id is None:
        message.id = new_id()
    if MODE in task.run.sink.modes:
        _push(task, message, metadata)
    return message


def _push(task: Task, message: Any, metadata: dict[str, Any] | None) -> None:
    task.touch()
    state = _run_messages(task.run)
    meta = state.task_metadata(task)
    if metadata:
        meta.update(metadata)
    state.emit(message, meta)


def swap_handler(callbacks: Any, handler: Any, kind: type) -> Any:
    """``callbacks`` (``None``, a list or a langchain-core callback manager) with every handler
    of type ``kind`` (inherited from a parent graph) replaced by ``handler``."""
    if callbacks is None:
        return [handler]
    if isinstance(callbacks, list):
        return [*(h for h in callbacks if not isinstance(h, kind)), handler]
    manager = callbacks.copy()
    for h in [*manager.handlers, *manager.inheritable_handlers]:
        if isinstance(h, kind):
            manager.remove_handler(h)
    manager.add_handler(handler, inherit=True)
    return manager

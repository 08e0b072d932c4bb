"""``astream_events(version="v2")``: a run as LangChain-style stream events.

The graph run is reported as ``on_chain_start`` / ``on_chain_stream`` / ``on_chain_end`` for
the graph and for each node task (built from the ``debug`` and ``updates`` stream modes),
and chat models called inside nodes as ``on_chat_model_start`` / ``_stream`` / ``_end``
(from a langchain-core callback handler, when langchain-core is installed). The handler
writes to the run's ``events`` stream mode.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from stepgraph._running import current_task
from stepgraph.constants import END
from stepgraph.messages._dict import new_id
from stepgraph.messages._merge import langchain_available
from stepgraph.stream.messages import swap_handler

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop

INTERNAL_MODES = ["debug", "updates", "values", "messages", "events"]


class EventFilter:
    """``include_*`` / ``exclude_*`` options of ``astream_events``."""

    def __init__(self, *, include_names: Sequence[str] | None = None,
                 include_types: Sequence[str] | None = None, include_tags: Sequence[str] | None = None,
                 exclude_names: Sequence[str] | None = None, exclude_types: Sequence[str] | None = None,
                 exclude_tags: Sequence[str] | None = None) -> None:
        self.include = (include_names, include_types, include_tags)
        self.exclude = (exclude_names, exclude_types, exclude_tags)

    def allows(self, event: dict[str, Any]) -> bool:
        kind = event["event"].split("_", 2)[1] if event["event"].startswith("on_") else ""
        kind = "chat_model" if event["event"].startswith("on_chat_model") else kind
        name, tags = event.get("name"), set(event.get("tags") or ())
        inc_names, inc_types, inc_tags = self.include
        exc_names, exc_types, exc_tags = self.exclude
        if inc_names or inc_types or inc_tags:
            if not ((inc_names and name in inc_names) or (inc_types and kind in inc_types)
                    or (inc_tags and tags & set(inc_tags))):
                return False
        if exc_names and name in exc_names:
            return False
        if exc_types and kind in exc_types:
            return False
        return not (exc_tags and tags & set(exc_tags))


class EventConverter:
    """Turns ``(ns, mode, payload)`` parts of one run into stream events, in order."""

    def __init__(self, graph_name: str, graph_input: Any, run_id: str | None = None,
                 chunk_mode: str = "updates", metadata: dict[str, Any] | None = None) -> None:
        self.graph_name = graph_name
        self.run_id = str(run_id) if run_id else new_id()
        self.chunk_mode = chunk_mode
        """What the graph's ``on_chain_stream`` chunks are: ``updates`` or ``values``."""
        self.metadata = dict(metadata or {})
        """The run's metadata (``thread_id``...), on the graph's and its nodes' events."""
        self.triggers: dict[str, tuple[str, ...]] = {}
        self.calls: set[str] = set()
        """Ids of ``@task`` calls: they send their own events (the debug parts are skipped)."""
        self.inputs: dict[str, Any] = {}
        self.steps: dict[str, int] = {}
        self.last_values: Any = None
        self.pending: list[dict[str, Any]] = []
        self.call_pending: list[dict[str, Any]] = []
        """Graph chunks of finished ``@task`` calls: LangGraph's consumer sees them at the
        caller's next pause (the next task start, or the caller's own output)."""
        self.last_ended: str | None = None
        self.start = self._event("on_chain_start", self.graph_name, self.run_id, [], [],
                                 dict(self.metadata), {"input": graph_input})

    @staticmethod
    def _event(kind: str, name: str, run_id: str, parents: list[str], tags: list[str],
               metadata: dict[str, Any], data: dict[str, Any]) -> dict[str, Any]:
        return {"event": kind, "name": name, "run_id": run_id, "parent_ids": parents,
                "tags": tags, "metadata": metadata, "data": data}

    def _node_meta(self, ns: tuple[str, ...], payload: dict[str, Any], step: int) -> dict[str, Any]:
        task_ns = "|".join([*ns, f"{payload['name']}:{payload['id']}"])
        triggers = payload.get("triggers") or self.triggers.get(payload["id"]) or ()
        return {**self.metadata, "langgraph_step": step, "langgraph_node": payload["name"],
                "langgraph_triggers": tuple(triggers),
                "langgraph_path": ("__pregel_pull", payload["name"]),
                "langgraph_checkpoint_ns": task_ns}

    def convert(self, part: tuple[tuple[str, ...], str, Any]) -> Iterable[dict[str, Any]]:
        ns, mode, payload = part
        if mode == "events":
            if payload["event"] == "on_chain_start":  # a task call (engine/calls.py)
                self.calls.add(payload["run_id"])
                self.last_ended = None
                yield from self._take_call_pending()
            yield {**payload, "parent_ids": [self.run_id, *payload["parent_ids"]]}
        elif mode == "debug" and payload["type"] in ("task", "task_result"):
            if payload["payload"]["id"] in self.calls:
                self.last_ended = payload["payload"]["name"] if payload["type"] == "task_result" else None
                return
            yield from self._task_event(ns, payload)
            if payload["type"] == "task_result" and not ns:
                yield from self._flush(payload["payload"]["name"])
        elif mode == "values" and not ns:
            self.last_values = payload
            if self.chunk_mode == "values":
                yield self._event("on_chain_stream", self.graph_name, self.run_id, [], [],
                                  dict(self.metadata), {"chunk": payload})
        elif mode == "updates" and not ns and self.chunk_mode == "updates":
            # the graph's chunk follows the node's own end event, as in LangGraph
            event = self._event("on_chain_stream", self.graph_name, self.run_id, [], [],
                                dict(self.metadata), {"chunk": payload})
            if self.last_ended is not None and list(payload) == [self.last_ended]:
                self.call_pending.append(event)  # a task call's result, streamed after its end
            else:
                self.pending.append(event)
            self.last_ended = None

    def _flush(self, node: str | None = None) -> Iterable[dict[str, Any]]:
        keep = []
        for event in self.pending:
            if node is None or node in event["data"]["chunk"]:
                yield event
            else:
                keep.append(event)
        self.pending = keep

    def _task_event(self, ns: tuple[str, ...], event: dict[str, Any]) -> Iterable[dict[str, Any]]:
        payload = event["payload"]
        step = event.get("step") or 0
        tid = payload["id"]
        tags = [f"graph:step:{step}"]
        parents = [self.run_id]
        if event["type"] == "task":
            self.last_ended = None
            yield from self._take_call_pending()
            self.inputs[tid] = payload.get("input")
            self.steps[tid] = step
            self.triggers[tid] = tuple(payload.get("triggers") or ())
            yield self._event("on_chain_start", payload["name"], tid, parents, tags,
                              self._node_meta(ns, payload, step), {"input": payload.get("input")})
        elif event["type"] == "task_result":
            step = self.steps.pop(tid, step)
            tags = [f"graph:step:{step}"]
            meta = self._node_meta(ns, payload, step)
            result = payload.get("result")
            if isinstance(result, dict) and list(result) == [END]:
                result = result[END]  # an entrypoint's node: its return value
            if payload.get("error") is None:
                yield self._event("on_chain_stream", payload["name"], tid, parents, tags, meta,
                                  {"chunk": result})
            yield from self._take_call_pending()
            inputs = self.inputs.pop(tid, None)
            self.triggers.pop(tid, None)
            self.last_ended = payload["name"]
            if payload.get("error") is not None:
                return  # as in LangGraph, a failed run has no end event
            data = {"output": result, "input": inputs}
            yield self._event("on_chain_end", payload["name"], tid, parents, tags, meta, data)

    def _take_call_pending(self) -> list[dict[str, Any]]:
        out, self.call_pending = self.call_pending, []
        return out

    def end(self, output: Any) -> list[dict[str, Any]]:
        final = {"output": output if output is not None else self.last_values}
        return [*self._take_call_pending(), *self._flush(),
                self._event("on_chain_end", self.graph_name, self.run_id, [], [],
                            dict(self.metadata), final)]


def with_events_handler(loop: RunLoop, callbacks: Any) -> Any:
    """``callbacks`` plus this run's events handler (unchanged without langchain-core)."""
    if not langchain_available():
        return callbacks
    handler = events_handler(loop)
    return swap_handler(callbacks, handler, type(handler))


def events_handler(loop: RunLoop) -> Any:
    """The langchain callback handler reporting chat models to ``loop``'s ``events`` stream."""
    return loop.helper("events", _handler_class())


@functools.cache
def _handler_class() -> type:
    """The handler class (made once: it subclasses langchain-core's, imported on use)."""
    from langchain_core.callbacks import BaseCallbackHandler

    class StreamEventsHandler(BaseCallbackHandler):
        """Writes ``on_chat_model_*`` events for model calls inside the run's nodes."""

        run_inline = True
        stepgraph_internal = True  # not a reason to trace a run (engine/tracing.py)

        def __init__(self, loop: RunLoop) -> None:
            self.loop = loop
            self.runs: dict[Any, dict[str, Any]] = {}

        def _emit(self, kind: str, run_id: Any, data: dict[str, Any]) -> None:
            info = self.runs.get(run_id)
            if info is None:
                return
            event = {"event": kind, "name": info["name"], "run_id": str(run_id),
                     "parent_ids": info["parents"], "tags": info["tags"],
                     "metadata": info["metadata"], "data": data}
            task = current_task()
            ns = task.run.ns if task is not None else self.loop.ns
            self.loop.sink.emit(ns, "events", event)

        def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: Any,
                                parent_run_id: Any = None, tags: list[str] | None = None,
                                metadata: dict[str, Any] | None = None, **kwargs: Any) -> Any:
            task = current_task()
            parents = [p for p in (getattr(task, "id", None),) if p]
            name = kwargs.get("name") or (serialized or {}).get("name") or "chat_model"
            self.runs[run_id] = {"name": name, "parents": parents, "tags": list(tags or ()),
                                 "metadata": dict(metadata or {}), "input": {"messages": messages}}
            self._emit("on_chat_model_start", run_id, {"input": {"messages": messages}})

        def on_llm_new_token(self, token: str, *, chunk: Any = None, run_id: Any, **kwargs: Any) -> Any:
            message = getattr(chunk, "message", None)
            if message is not None:
                self._emit("on_chat_model_stream", run_id, {"chunk": message})

        def on_llm_end(self, response: Any, *, run_id: Any, **kwargs: Any) -> Any:
            output = None
            if response.generations and response.generations[0]:
                output = getattr(response.generations[0][0], "message", None)
            info = self.runs.get(run_id) or {}
            self._emit("on_chat_model_end", run_id, {"output": output, "input": info.get("input")})
            self.runs.pop(run_id, None)

        def on_llm_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> Any:
            self._emit("on_chat_model_error", run_id, {"error": error})
            self.runs.pop(run_id, None)

    return StreamEventsHandler

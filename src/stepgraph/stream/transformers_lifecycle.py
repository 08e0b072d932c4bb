"""Subgraph discovery from the ``tasks`` stream: ``run.lifecycle`` and ``run.subgraphs``.

A subgraph namespace ``(..., "node:task_id")`` is *started* at the first task event seen in
it and *ends* when its parent task's result arrives (``interrupted`` when the result has
interrupts, ``failed`` when it has an error, else ``completed``); whatever is still open
when the run ends is closed by the run's own outcome. ``tasks`` events are folded into these
projections and kept out of the main event log.
"""

from __future__ import annotations

import logging
from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from stepgraph.errors import GraphDrained, GraphInterrupt
from stepgraph.stream._types import ProtocolEvent, StreamTransformer
from stepgraph.stream.stream_channel import StreamChannel

_log = logging.getLogger(__name__)

SubgraphStatus = Literal["started", "completed", "failed", "interrupted", "drained"]
Transition = tuple[tuple[str, ...], SubgraphStatus, "str | None"]


class LifecyclePayload(TypedDict, total=False):
    """An item of ``run.lifecycle`` (and the data of a ``lifecycle`` protocol event)."""

    event: SubgraphStatus
    namespace: list[str]
    graph_name: NotRequired[str]
    trigger_call_id: NotRequired[str]
    cause: NotRequired[dict[str, Any]]
    error: NotRequired[str]


def _split_segment(segment: str) -> tuple[str, str | None]:
    """``"node:task_id"`` -> ``("node", "task_id")``; no colon -> ``(segment, None)``."""
    name, sep, task_id = segment.partition(":")
    return name, (task_id if sep else None)


def status_of_error(err: BaseException) -> tuple[SubgraphStatus, str | None]:
    if isinstance(err, GraphDrained):
        return "drained", None
    if isinstance(err, GraphInterrupt):
        return "interrupted", None
    return "failed", str(err)


def status_of_result(data: dict[str, Any]) -> tuple[SubgraphStatus, str | None]:
    if data.get("interrupts"):
        return "interrupted", None
    if error := data.get("error"):
        return "failed", str(error)
    return "completed", None


def _tool_call_id(data: dict[str, Any]) -> str | None:
    """The tool call a task runs: its input is ``{"tool_call": {...}}`` (one call per task)
    or a list of tool calls (the first one counts)."""
    payload = data.get("input")
    if isinstance(payload, dict) and isinstance(payload.get("tool_call"), dict):
        candidate = payload["tool_call"].get("id")
        return candidate if isinstance(candidate, str) else None
    if isinstance(payload, list):
        for call in payload:
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                return call["id"]
    return None


class _TasksLifecycleBase(StreamTransformer):
    """The bookkeeping both subgraph transformers share. Subclasses choose which namespaces
    they track (``_should_track``) and what a start / an end does (``_on_started``,
    ``_on_terminal``; the start's cause, if any, is in ``self._pending_cause``)."""

    required_stream_modes = ("tasks",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._seen: set[tuple[str, ...]] = set()
        self._open: dict[tuple[str, ...], str] = {}
        """Tracked namespace -> id of the parent task whose result ends it."""
        self._lc_by_ns: dict[tuple[str, ...], str | None] = {}
        """The ``lc_agent_name`` first seen in each namespace."""
        self._pending_tool_calls: dict[str, str] = {}
        """Task id -> the tool call id it runs (a subagent's cause)."""
        self._pending_cause: dict[str, Any] | None = None

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        raise NotImplementedError

    def _on_started(self, ns: tuple[str, ...], graph_name: str | None,
                    trigger_call_id: str | None) -> None:
        raise NotImplementedError

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        raise NotImplementedError

    # -- the shared decisions ------------------------------------------------------------------
    def _book(self, event: ProtocolEvent) -> list[Transition] | None:
        """Record a ``tasks`` event (starting what it starts); the namespaces it ends.
        ``None`` for any other event."""
        if event["method"] != "tasks":
            return None
        ns = tuple(event["params"]["namespace"])
        data = event["params"]["data"]
        if "result" in data:
            return self._pop_terminal_transitions(ns, data)
        self._record_identity(ns, data)
        self._record_pending_tool_calls(data)
        self._handle_task_start(ns, data)
        return []

    def _record_identity(self, ns: tuple[str, ...], data: dict[str, Any]) -> None:
        if ns not in self._lc_by_ns:
            self._lc_by_ns[ns] = (data.get("metadata") or {}).get("lc_agent_name")

    def _record_pending_tool_calls(self, data: dict[str, Any]) -> None:
        task_id = data.get("id")
        if isinstance(task_id, str) and (call_id := _tool_call_id(data)) is not None:
            self._pending_tool_calls[task_id] = call_id

    def _handle_task_start(self, ns: tuple[str, ...], data: dict[str, Any]) -> None:
        if ns in self._seen or not self._should_track(ns):
            return
        self._seen.add(ns)
        name, trigger = _split_segment(ns[-1])
        agent = (data.get("metadata") or {}).get("lc_agent_name")
        cause = None
        if agent is not None and trigger is not None:
            if call_id := self._pending_tool_calls.get(trigger):
                cause = {"type": "toolCall", "tool_call_id": str(call_id)}
        self._pending_cause = cause
        self._on_started(ns, agent if agent is not None else (name or None), trigger)
        if trigger is not None:
            self._open[ns] = trigger

    def _pop_terminal_transitions(self, ns: tuple[str, ...], data: dict[str, Any]) -> list[Transition]:
        result_id = data.get("id")
        if not result_id:
            return []
        ended: list[Transition] = []
        for child, parent_task in list(self._open.items()):
            if child[:-1] == ns and parent_task == result_id:
                status, error = status_of_result(data)
                ended.append((child, status, error))
                del self._open[child]
        return ended

    def _close_open(self, status: SubgraphStatus, error: str | None) -> list[Transition]:
        ended = [(ns, status, error) for ns in self._open]
        self._open.clear()
        return ended

    # -- sync hooks (the async ones default to these) ------------------------------------------
    def process(self, event: ProtocolEvent) -> bool:
        ended = self._book(event)
        if ended is None:
            return True
        for ns, status, error in ended:
            self._on_terminal(ns, status, error)
        return False

    def finalize(self) -> None:
        for ns, status, error in self._close_open("completed", None):
            self._on_terminal(ns, status, error)

    def fail(self, err: BaseException) -> None:
        for ns, status, error in self._close_open(*status_of_error(err)):
            self._on_terminal(ns, status, error)


class LifecycleTransformer(_TasksLifecycleBase):
    """``run.lifecycle``: a ``LifecyclePayload`` when a subgraph (at any depth below the
    scope) starts and when it ends; forwarded as ``lifecycle`` protocol events."""

    _native = True

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._channel: StreamChannel[LifecyclePayload] = StreamChannel("lifecycle")

    def init(self) -> dict[str, Any]:
        return {"lifecycle": self._channel}

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        depth = len(self.scope)
        return len(ns) > depth and ns[:depth] == self.scope

    def _on_started(self, ns: tuple[str, ...], graph_name: str | None,
                    trigger_call_id: str | None) -> None:
        if trigger_call_id is None:
            return  # cannot be matched with a parent result: closed at the end of the run
        payload: LifecyclePayload = {"event": "started", "namespace": list(ns)}
        if graph_name:
            payload["graph_name"] = graph_name
        payload["trigger_call_id"] = trigger_call_id
        if self._pending_cause is not None:
            payload["cause"] = self._pending_cause
        self._channel.push(payload)

    def _on_terminal(self, ns: tuple[str, ...], status: SubgraphStatus, error: str | None) -> None:
        payload: LifecyclePayload = {"event": status, "namespace": list(ns)}
        if error is not None:
            payload["error"] = error
        self._channel.push(payload)

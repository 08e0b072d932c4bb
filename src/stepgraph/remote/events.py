"""Folding one remote run's SSE events into what the caller (and a parent graph) sees.

``RemoteCall`` is built once per ``invoke``/``stream`` call (``plan_call``) and fed every
``(event, data)`` pair the server sends, by the sync or the async loop alike. It

* raises ``RemoteException`` for an ``error`` event and ``ParentCommand`` for a
  ``command`` event addressed to the parent graph;
* splits ``"<mode>|<ns>|..."`` event names, decodes payloads to local shapes and returns
  the parts the caller asked for, shaped as a local graph's ``stream`` shapes them;
* streams every part into the parent's sink when running as a node of a parent that
  streams subgraphs, under the caller's namespace;
* remembers the last root ``values`` (``invoke``'s result) and the run's interrupts, which
  become the parent's interrupt when running as a node (``finish``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stepgraph._running import current_task
from stepgraph.config import ensure_config
from stepgraph.constants import INTERRUPT, MISSING
from stepgraph.errors import GraphInterrupt, ParentCommand
from stepgraph.remote.node import NodeLink
from stepgraph.remote.wire import (
    RemoteException,
    decode_payload,
    split_event,
    thread_id_of,
    tracing_headers,
    wire_config,
    without_interrupt,
)
from stepgraph.stream.output import normalize_modes, shape
from stepgraph.types import Command, GraphOutput, Interrupt, Send


def wire_modes(modes: Sequence[str], link: NodeLink | None) -> list[str]:
    """Modes to ask the server for: the caller's, the parent's, and ``updates`` (which
    carries interrupts); ``messages`` is requested as ``messages-tuple``."""
    out: list[str] = []
    extra = link.parent_modes() if link is not None else []
    for mode in (*modes, *extra, "updates"):
        mode = "messages-tuple" if mode == "messages" else mode
        if mode != "events" and mode not in out:
            out.append(mode)
    return out


def command_json(cmd: Command) -> dict[str, Any]:
    """A ``Command`` as the ``command`` of a run request."""
    out: dict[str, Any] = {}
    if cmd.resume is not None:
        out["resume"] = cmd.resume
    if cmd.update is not None:
        out["update"] = cmd.update
    goto = cmd.goto
    if goto:
        items = goto if isinstance(goto, (list, tuple)) else [goto]
        out["goto"] = [
            {"node": g.node, "input": g.arg} if isinstance(g, Send) else g for g in items
        ]
    return out


class RemoteCall:
    """One remote run: its request and the fold of its events."""

    __slots__ = (
        "thread_id", "request", "modes", "single", "subgraphs", "version", "link",
        "values", "interrupts", "root_interrupts", "run_id", "waiting", "nested",
    )

    def __init__(self, modes: list[str], single: bool, subgraphs: bool, version: str,
                 link: NodeLink | None) -> None:
        self.modes = frozenset(modes)
        self.single = single
        self.subgraphs = subgraphs
        self.version = version
        self.link = link
        self.thread_id: str | None = None
        self.request: dict[str, Any] = {}
        self.values: Any = MISSING
        self.interrupts: tuple[Interrupt, ...] | None = None
        self.root_interrupts: tuple[Interrupt, ...] | None = None
        self.run_id: str | None = None
        self.waiting: BaseException | None = None
        """Set when the call must not reach the server (a parent interrupt to re-raise)."""
        self.nested = False
        """Called as a subgraph without a running task (the config names a caller's
        ``checkpoint_ns``): a remote interrupt is raised as ``GraphInterrupt``."""

    # -- events -------------------------------------------------------------------------
    def feed(self, event: str, data: Any, event_id: str | None = None) -> list[Any]:
        """Fold one event; return the parts to hand to the caller (often none)."""
        if event == "metadata":
            if isinstance(data, Mapping):
                self.run_id = data.get("run_id")
            if self.link is not None:
                self.link.accepted()
            return []
        mode, ns = split_event(event)
        if mode == "error":
            raise RemoteException(data)
        if mode == "end":
            return []
        if mode == "command" and isinstance(data, Mapping) and data.get("graph") == Command.PARENT:
            raise ParentCommand(Command(graph=Command.PARENT, update=data.get("update"),
                                        resume=data.get("resume"), goto=data.get("goto") or ()))
        payload = decode_payload(mode, data)
        if mode == "updates" and isinstance(payload, dict) and INTERRUPT in payload:
            if not ns:
                self.root_interrupts = payload[INTERRUPT]
            elif self.interrupts is None:
                self.interrupts = payload[INTERRUPT]
        elif mode == "values" and not ns:
            self.values = payload
        if self.link is not None:
            self.link.emit(ns, mode, payload)
            ns = self.link.ns + ns
        if mode in self.modes and (not ns or self.subgraphs or mode == "messages"):
            if not self.single and not self.subgraphs and self.version == "v1":
                return [(mode, payload, event_id)]  # the SDK's StreamPart, as LangGraph's
            return [shape((ns, mode, payload), self.single, self.subgraphs, self.version)]
        return []

    # -- results ------------------------------------------------------------------------
    def found_interrupts(self) -> tuple[Interrupt, ...] | None:
        if self.root_interrupts is not None:
            return tuple(self.root_interrupts)
        if self.interrupts is not None:
            return tuple(self.interrupts)
        if isinstance(self.values, dict) and INTERRUPT in self.values:
            return tuple(self.values[INTERRUPT])
        return None

    def finish(self) -> None:
        """After the last event: as a node, a remote interrupt interrupts the parent."""
        if self.link is None:
            if self.nested and (found := self.found_interrupts()):
                raise GraphInterrupt(list(found))
            return
        found = self.found_interrupts()
        if found is not None:
            raise self.link.interrupt(found)

    def result(self, version: str = "v1") -> Any:
        """What ``invoke`` returns: the final state (with ``__interrupt__`` when paused)."""
        values = None if self.values is MISSING else without_interrupt(self.values)
        if self.link is not None:
            return self.link.node_output(values)
        found = self.found_interrupts() or ()
        if version == "v2":
            return GraphOutput(values, found)
        if found and isinstance(values, dict):
            return {**values, INTERRUPT: list(found)}
        if found and values is None:
            return {INTERRUPT: list(found)}
        return values


_OWN_REQUEST_KEYS = frozenset({
    "thread_id", "assistant_id", "input", "command", "stream_mode", "stream_subgraphs", "config",
    "context", "checkpoint_id", "interrupt_before", "interrupt_after", "if_not_exists", "headers",
    "params",
})


def plan_call(
    remote: Any, input: Any, config: Mapping[str, Any] | None, *,
    stream_mode: Any, default_mode: str, subgraphs: bool, version: str,
    interrupt_before: Any, interrupt_after: Any, context: Any,
    headers: Mapping[str, str] | None = None, params: Any = None,
    extra: Mapping[str, Any] | None = None,
) -> RemoteCall:
    """The request and the event fold of one ``invoke``/``stream`` call of ``remote``.

    ``extra`` are further ``runs.stream`` parameters of the SDK (``multitask_strategy``...).
    """
    task = current_task()
    inherited = task.config if task is not None and config is None else None
    merged = ensure_config(inherited, remote.config, config)
    link = NodeLink(task, remote) if task is not None else None
    modes, single = normalize_modes(stream_mode, default_mode)
    call = RemoteCall(modes, single, subgraphs, version, link)
    call.thread_id = thread_id_of(merged)
    call.nested = link is None and bool(((config or {}).get("configurable") or {}).get("checkpoint_ns"))
    clash = sorted(set(extra or ()) & _OWN_REQUEST_KEYS)
    if clash:
        raise TypeError(f"RemoteGraph: {', '.join(clash)} cannot be given as extra run parameters")
    request: dict[str, Any] = {
        **(extra or {}),
        "stream_mode": wire_modes(modes, link),
        "stream_subgraphs": bool(subgraphs or (link is not None and link.forward)),
        "config": wire_config(merged),
        "context": context,
        "if_not_exists": "create",
        "headers": tracing_headers(headers) if remote.distributed_tracing else (
            dict(headers) if headers else None
        ),
    }
    if params is not None:
        request["params"] = params
    if isinstance(input, Command):
        request["command"] = command_json(input)
    elif link is not None and link.pending:
        resume = link.resume_value()
        if resume is MISSING:
            call.waiting = link.still_waiting()
        else:
            request["command"] = {"resume": resume}
    else:
        request["input"] = input
    checkpoint_id = (merged.get("configurable") or {}).get("checkpoint_id")
    if checkpoint_id and call.thread_id and link is None:
        request["checkpoint_id"] = checkpoint_id
    for key, value in (("interrupt_before", interrupt_before),
                       ("interrupt_after", interrupt_after)):
        if value is not None:
            request[key] = value
    call.request = request
    return call

"""From engine stream parts to wire events, following the LangGraph Server conventions.

* ``messages-tuple`` is the engine's ``messages`` mode, sent as event ``messages``;
  ``messages`` (on the wire) becomes ``messages/metadata`` + ``messages/partial|complete``.
* Subgraph events are named ``<mode>|<node>:<task_id>|...``.
* ``events`` sends LangChain-style callback events derived from the engine's ``tasks`` and
  ``messages`` streams (``lcevents.CallbackEvents``): graph and node ``on_chain_*``, chat
  models' ``on_chat_model_start|stream|end``.
* The run always streams ``values`` internally, so the last root snapshot (with its
  ``__interrupt__`` list) is known for ``runs.wait`` and ``runs.join`` (and ``custom``,
  see ``engine_modes``); parts of modes the client did not ask for are dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from stepgraph.server.runtime.eventlog import RunLog
from stepgraph.server.runtime.lcevents import CallbackEvents
from stepgraph.server.runtime.messages import MessageAccumulator
from stepgraph.server.serde import dumps

__all__ = ["WIRE_MODES", "WireEmitter", "engine_modes"]

WIRE_MODES = ("values", "updates", "messages", "messages-tuple", "custom", "debug", "tasks",
              "checkpoints", "events")
_TO_ENGINE: dict[str, tuple[str, ...]] = {"messages-tuple": ("messages",), "events": ("messages", "tasks")}


def engine_modes(wire: Iterable[str]) -> list[str]:
    """The engine modes to request for the wire modes ``wire`` (always ``values`` and ``custom``).

    ``custom`` is always on as a workaround: with it the async driver runs every step on its
    cancellable multi-task path, so cancelling a run never records the interrupted node as
    finished (the single-task fast path stores a ``__no_writes__`` marker for it, after which
    the thread's ``next`` is empty and a resume skips that node).
    """
    out = ["values", "custom"]
    for mode in wire:
        for engine in _TO_ENGINE.get(mode, (mode,)):
            if engine not in out:
                out.append(engine)
    return out


class WireEmitter:
    """Writes one run's engine parts to its event log as wire events."""

    def __init__(self, log: RunLog, wire_modes: Iterable[str], *, subgraphs: bool = False,
                 events: CallbackEvents | None = None) -> None:
        self.log = log
        self.wire = set(wire_modes)
        self.subgraphs = subgraphs
        self.last_values: Any = None
        self._acc = MessageAccumulator() if "messages" in self.wire else None
        self._events = events if "events" in self.wire else None

    def start(self, graph_input: Any) -> None:
        """Before the first part: the graph's ``on_chain_start`` (``events`` mode)."""
        if self._events is not None:
            for event in self._events.start(graph_input):
                self.emit("events", event)

    def end(self) -> None:
        """After the last part of a successful run: the graph's ``on_chain_end``."""
        if self._events is not None:
            for event in self._events.end(self.last_values):
                self.emit("events", event)

    @property
    def engine_subgraphs(self) -> bool:
        """Whether to stream subgraphs from the engine: also for messages without subgraphs.

        Like the LangGraph server, chat-model tokens of subgraphs reach a client that did
        not ask for subgraph events, as root ``messages`` events.
        """
        return self.subgraphs or bool({"messages", "messages-tuple", "events"} & self.wire)

    def handle(self, part: Any) -> None:
        """Emit one engine part (``(ns, mode, payload)`` or ``(mode, payload)``)."""
        if len(part) == 3:
            ns, mode, payload = part
        else:
            (mode, payload), ns = part, ()
        if ns and not self.subgraphs:
            if mode != "messages":
                return
            ns = ()
        suffix = "".join("|" + seg for seg in ns)
        if self._events is not None:
            for event in self._events.feed(tuple(ns), mode, payload):
                self.emit("events" + suffix, event)
        if mode == "values":
            if not ns:
                self.last_values = payload
            if "values" in self.wire:
                self.emit("values" + suffix, payload)
        elif mode == "messages":
            self._messages(payload, suffix)
        elif mode in self.wire:
            self.emit(mode + suffix, payload)

    def _messages(self, payload: Any, suffix: str) -> None:
        chunk, metadata = _pair(payload)
        if "messages-tuple" in self.wire:
            self.emit("messages" + suffix, [chunk, metadata])
        if self._acc is not None:
            for kind, data in self._acc.feed(chunk, metadata):
                self.emit(f"messages/{kind}" + suffix, data)

    def emit(self, name: str, payload: Any) -> None:
        """Append one event (the payload JSON-encoded once, here)."""
        self.log.append(name, dumps(payload))


def _pair(payload: Any) -> tuple[Any, Any]:
    if isinstance(payload, (tuple, list)) and len(payload) == 2:
        return payload[0], payload[1]
    return payload, {}

"""One v3 run's engine stream parts as protocol events in its thread's log.

Channels produced (``docs/protocol/v3-thread-streaming.md`` §5):

* ``lifecycle``: root ``running`` first; a subgraph's ``started`` before its first event;
  a subgraph's ``completed`` / ``interrupted`` / ``failed`` when the parent task that ran
  it finishes; the root's terminal event (``completed``, ``interrupted``, ``failed`` with
  ``error``) last, once the thread's status is final.
* ``values``: the state after each step at every namespace, ``__interrupt__`` removed and
  messages serialized compactly.
* ``messages``: chat-model output as content-block events (``blocks.MessageBlocks``).
* ``input.requested``: one per interrupt, in the namespace where ``interrupt()`` ran.
* ``updates`` (``{node, values}``) and ``custom`` (``{name?, payload}``).

The run needs the engine modes ``ENGINE_MODES`` with subgraphs streamed.
"""

from __future__ import annotations

from typing import Any

from stepgraph.server.runtime.blocks import MessageBlocks
from stepgraph.server.runtime.threadlog import ThreadLog
from stepgraph.server.serde import jsonable

__all__ = ["ENGINE_MODES", "ProtocolEmitter", "compact_values", "subgraph_names"]

ENGINE_MODES = ("values", "updates", "messages", "custom", "tasks")

Namespace = tuple[str, ...]

_MESSAGE_TYPES = {"human", "ai", "tool", "system", "function", "chat", "remove", "developer"}
_DROP_EMPTY = ("additional_kwargs", "response_metadata", "name", "tool_calls", "invalid_tool_calls",
               "usage_metadata", "example", "tool_call_chunks", "chunk_position")


def _compact_message(message: dict[str, Any]) -> dict[str, Any]:
    out = {k: message[k] for k in ("type", "content", "id") if k in message}
    for key, value in message.items():
        if key in out or (key in _DROP_EMPTY and value in (None, {}, [], False)):
            continue
        out[key] = value
    return out


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") in _MESSAGE_TYPES and "content" in value


def compact_values(values: Any) -> Any:
    """``values`` (JSON data) with messages written compactly: ``type``, ``content``, ``id``
    first, empty defaults (``additional_kwargs: {}``, ``name: null``...) left out."""
    if not isinstance(values, dict):
        return values
    out: dict[str, Any] = {}
    for key, value in values.items():
        if _is_message(value):
            value = _compact_message(value)
        elif isinstance(value, list) and value and all(_is_message(v) for v in value):
            value = [_compact_message(v) for v in value]
        out[key] = value
    return out


def subgraph_names(graph: Any) -> dict[str, str]:
    """``{"node|node...": compiled name}`` of the graphs used as nodes (for ``graph_name``)."""
    try:
        return {path: str(getattr(sub, "name", "") or path.rsplit("|", 1)[-1])
                for path, sub in graph.get_subgraphs(recurse=True)}
    except Exception:  # noqa: BLE001 - names are cosmetic; fall back to node names
        return {}


def _interrupt(item: Any) -> tuple[str | None, Any]:
    if isinstance(item, dict):
        return item.get("id"), item.get("value")
    return getattr(item, "id", None), getattr(item, "value", None)


class ProtocolEmitter:
    """Writes one run's protocol events to its thread log."""

    def __init__(self, log: ThreadLog, run_id: str, graph_id: str,
                 subgraph_names: dict[str, str] | None = None) -> None:
        self.log = log
        self.run_id = run_id
        self.graph_id = graph_id
        self.subgraph_names = subgraph_names or {}
        self.blocks = MessageBlocks()
        self.requested: set[str] = set()
        self._children: dict[Namespace, bool] = {}  # started namespaces -> finished?
        self._done = False
        log.writers += 1  # the log is kept while a run writes to it (until ``finish``)

    # -- helpers ----------------------------------------------------------------------------
    def _emit(self, method: str, ns: Namespace, data: Any, *, event_id: str | None = None,
              name: str | None = None) -> None:
        self.log.append(method, ns, data, event_id=event_id, name=name)

    def _lifecycle(self, ns: Namespace, event: str, **extra: Any) -> None:
        data = {"event": event, "graph_name": self._graph_name(ns), **extra}
        self._emit("lifecycle", ns, data, event_id=f"synth:{self.run_id}:lc|{'|'.join(ns)}|{event}")

    def _graph_name(self, ns: Namespace) -> str:
        if not ns:
            return self.graph_id
        path = "|".join(seg.split(":", 1)[0] for seg in ns)
        return self.subgraph_names.get(path) or ns[-1].split(":", 1)[0]

    def _messages(self, events: list[tuple[Namespace, dict[str, Any]]]) -> None:
        for ns, data in events:
            self._emit("messages", ns, data)

    def _ensure_started(self, ns: Namespace) -> None:
        for depth in range(1, len(ns) + 1):
            prefix = ns[:depth]
            if prefix not in self._children:
                self._children[prefix] = False
                task_id = prefix[-1].split(":", 1)[1] if ":" in prefix[-1] else prefix[-1]
                self._lifecycle(prefix, "started", namespace=list(prefix), trigger_call_id=task_id)

    def _end_child(self, ns: Namespace, event: str, **extra: Any) -> None:
        for child in sorted((c for c, done in self._children.items() if not done and c[: len(ns)] == ns),
                            key=len, reverse=True):
            self._messages(self.blocks.finish(child))
            self._children[child] = True
            self._lifecycle(child, event, **extra)

    # -- run events -------------------------------------------------------------------------
    def start(self) -> None:
        """The root ``running`` event."""
        self._lifecycle((), "running")

    def handle(self, part: Any) -> None:
        """One engine part ``(namespace, mode, payload)``."""
        if len(part) == 3:
            ns, mode, payload = part
        else:
            (mode, payload), ns = part, ()
        ns = tuple(ns)
        if ns and self._children.get(ns[:1]) is True:
            return  # late event of a finished subgraph
        self._ensure_started(ns)
        if mode == "values":
            self._messages(self.blocks.finish(ns))
            values = jsonable(payload, stream=True)
            if isinstance(values, dict):
                values.pop("__interrupt__", None)
            self._emit("values", ns, compact_values(values))
        elif mode == "messages":
            chunk, metadata = payload if isinstance(payload, (tuple, list)) and len(payload) == 2 else (payload, {})
            self._messages(self.blocks.feed(ns, chunk, metadata))
        elif mode == "updates":
            self._updates(ns, payload)
        elif mode == "custom":
            data = jsonable(payload, stream=True)
            name = data.get("name") if isinstance(data, dict) and isinstance(data.get("name"), str) else None
            self._emit("custom", ns, {"name": name, "payload": data} if name else {"payload": data}, name=name)
        elif mode == "tasks" and isinstance(payload, dict) and ("result" in payload or "error" in payload):
            child = (*ns, f"{payload.get('name')}:{payload.get('id')}")
            if child in self._children and not self._children[child]:
                if payload.get("error"):
                    self._end_child(child, "failed", error=str(payload["error"]))
                elif payload.get("interrupts"):
                    self._end_child(child, "interrupted")
                else:
                    self._end_child(child, "completed")

    def _updates(self, ns: Namespace, payload: Any) -> None:
        if not isinstance(payload, dict):
            return
        for node, values in payload.items():
            if node == "__interrupt__":
                for item in values or ():
                    iid, value = _interrupt(item)
                    if iid is None or iid in self.requested:
                        continue
                    self.requested.add(iid)
                    self.log.interrupt_ids.add(iid)
                    self._emit("input.requested", ns,
                               {"interrupt_id": iid, "payload": jsonable(value, stream=True)},
                               event_id=f"synth:{self.run_id}:input|{'|'.join(ns)}|{iid}")
            elif node != "__metadata__":
                self._emit("updates", ns, {"node": node, "values": jsonable(values, stream=True)})

    def finish(self, status: str, error: dict[str, Any] | None) -> None:
        """The terminal events: open messages and subgraphs closed, then the root's outcome."""
        if self._done:
            return
        self._done = True
        self.log.writers -= 1
        self._messages(self.blocks.finish(()))
        if error is not None:
            event, extra = "failed", {"error": str(error.get("message") or error.get("error") or "error")}
        elif status == "interrupted":
            event, extra = "failed", {"error": "Run was cancelled"}
        elif self.requested:
            event, extra = "interrupted", {}
        else:
            event, extra = "completed", {}
        for child in list(self._children):
            if len(child) == 1:
                self._end_child(child, event, **extra)
        self._lifecycle((), event, **extra)

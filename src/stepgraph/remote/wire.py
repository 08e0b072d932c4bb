"""The JSON side of ``RemoteGraph``: clients, configs, states and graphs (no I/O here).

Everything that crosses the wire goes through these functions, so the sync and async
methods of ``RemoteGraph`` share every rule:

* ``make_clients`` builds the ``langgraph_sdk`` clients (the SDK is imported lazily);
* ``wire_config`` keeps the JSON-able part of a run config (``thread_id`` goes to the URL);
* ``snapshot_of`` / ``config_of`` turn a server ``ThreadState`` into a ``StateSnapshot``;
* ``decode_payload`` gives stream payloads the shapes local graphs stream (``Interrupt``
  objects under ``__interrupt__``, ``messages`` as tuples);
* ``graph_of`` turns ``GET /assistants/{id}/graph`` into a drawable ``stepgraph.draw.Graph``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from uuid import UUID

from stepgraph.constants import INTERRUPT
from stepgraph.errors import StepgraphError
from stepgraph.types import Interrupt, PregelTask, StateSnapshot

API_KEY_ENV = ("LANGGRAPH_API_KEY", "LANGSMITH_API_KEY", "LANGCHAIN_API_KEY")
"""Environment variables read, in order, when no ``api_key`` is given."""

INSTALL_HINT = "pip install 'stepgraph[remote]'"

CHECKPOINT_KEYS = ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")
_NOT_SENT = frozenset({"checkpoint_ns", "checkpoint_id", "checkpoint_map"})
_DROP = object()


class RemoteException(StepgraphError):
    """The remote run failed: the server's ``error`` event (``{"error", "message"}``).

    ``args[0]`` is the event data as received (LangGraph's shape); ``error`` is the remote
    exception class name and ``message`` its text.
    """

    code = "SG510"

    def __init__(self, data: Any) -> None:
        super().__init__(data)
        self.data = data
        if isinstance(data, Mapping):
            self.error = data.get("error")
            self.message = data.get("message")
        else:
            self.error, self.message = None, data

    def __str__(self) -> str:
        if self.error:
            return f"[{self.code}] remote run failed: {self.error}: {self.message}"
        return f"[{self.code}] remote run failed: {self.message!r}"


class RemoteConfigError(StepgraphError, ValueError):
    """A ``RemoteGraph`` built or called without what it needs (a client, a thread id)."""

    code = "SG502"


class RemoteDependencyError(StepgraphError, ImportError):
    """``langgraph-sdk`` (the HTTP client ``RemoteGraph`` uses) is not installed."""

    code = "SG501"


# -- clients --------------------------------------------------------------------------------
def load_sdk() -> Any:
    """The ``langgraph_sdk`` module, or a coded error saying how to install it."""
    try:
        import langgraph_sdk
    except ImportError as exc:
        raise RemoteDependencyError(
            "RemoteGraph needs the 'langgraph-sdk' package, which is not installed.",
            code="SG501",
            hint=INSTALL_HINT,
        ) from exc
    return langgraph_sdk


def resolve_api_key(api_key: str | None) -> str | None:
    """``api_key`` if given, else the first of ``API_KEY_ENV`` that is set."""
    if api_key:
        return api_key
    for name in API_KEY_ENV:
        value = os.environ.get(name)
        if value and value.strip():
            return value.strip().strip("'\"")
    return None


def make_clients(
    url: str | None, api_key: str | None, headers: Mapping[str, str] | None,
    client: Any, sync_client: Any,
) -> tuple[Any, Any]:
    """(async client, sync client): the given ones, plus SDK clients for ``url``."""
    if url is None:
        return client, sync_client
    sdk = load_sdk()
    key = resolve_api_key(api_key)
    hdrs = dict(headers) if headers else None
    if client is None:
        client = sdk.get_client(url=url, api_key=key, headers=hdrs)
    if sync_client is None:
        sync_client = sdk.get_sync_client(url=url, api_key=key, headers=hdrs)
    return client, sync_client


# -- configs --------------------------------------------------------------------------------
def _clean(value: Any) -> Any:
    """``value`` with only JSON-able parts (``_DROP`` when nothing is left)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            c = _clean(v)
            if c is not _DROP:
                out[str(k)] = c
        return out
    if isinstance(value, (list, tuple)):
        return [c for c in (_clean(v) for v in value) if c is not _DROP]
    return _DROP


def wire_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a run config the server gets: JSON-able ``configurable`` (without the
    thread, checkpoint and internal ``__...`` keys), string ``tags``, JSON-able
    ``metadata`` and ``recursion_limit``."""
    configurable = {
        k: v for k, v in (config.get("configurable") or {}).items()
        if k != "thread_id" and k not in _NOT_SENT and not str(k).startswith("__")
    }
    out: dict[str, Any] = {"configurable": _clean(configurable)}
    tags = [t for t in config.get("tags") or () if isinstance(t, str)]
    if tags:
        out["tags"] = tags
    metadata = _clean(dict(config.get("metadata") or {}))
    if metadata:
        out["metadata"] = metadata
    limit = config.get("recursion_limit")
    if isinstance(limit, int):
        out["recursion_limit"] = limit
    return out


def thread_id_of(config: Mapping[str, Any] | None, what: str | None = None) -> str | None:
    """The config's ``thread_id`` (as a string); required when ``what`` names the caller."""
    tid = ((config or {}).get("configurable") or {}).get("thread_id")
    if tid is None and what is not None:
        raise RemoteConfigError(
            f"RemoteGraph.{what}() needs a thread: the config has no 'thread_id'.",
            code="SG504",
            hint="pass config={'configurable': {'thread_id': ...}}",
        )
    return None if tid is None else str(tid)


def checkpoint_of(config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``checkpoint`` object of a state request (thread, namespace, checkpoint id)."""
    configurable = config.get("configurable") or {}
    out = {k: configurable[k] for k in CHECKPOINT_KEYS if configurable.get(k) is not None}
    if "thread_id" in out:
        out["thread_id"] = str(out["thread_id"])
    return out


def before_of(config: Mapping[str, Any]) -> dict[str, Any]:
    """The ``before`` of a history request: the checkpoint, readable in both shapes servers
    read it (the API's checkpoint object; LangGraph's server passes it on to its saver as a
    config, so the same keys also sit under ``configurable``)."""
    ckpt = {k: v for k, v in checkpoint_of(config).items() if k != "checkpoint_map"}
    return {**ckpt, "configurable": dict(ckpt)}


def tracing_headers(headers: Mapping[str, str] | None) -> dict[str, str] | None:
    """``headers`` plus LangSmith's distributed-tracing headers of the current run tree
    (``langsmith-trace``, ``baggage``; a ``baggage`` already given is kept in front), so the
    server's run joins the caller's trace. Unchanged without a current run tree."""
    import sys

    helpers = sys.modules.get("langsmith.run_helpers")
    tree = helpers.get_current_run_tree() if helpers is not None else None
    if tree is None:
        return dict(headers) if headers else None
    traced = dict(tree.to_headers())
    out = dict(headers) if headers else {}
    if "baggage" in out and "baggage" in traced:
        traced["baggage"] = f"{out['baggage']},{traced['baggage']}"
    out.update(traced)
    return out


# -- states ---------------------------------------------------------------------------------
def to_interrupts(items: Any) -> tuple[Interrupt, ...]:
    """Wire interrupts (``{"value", "id"[, ...]}``) as ``Interrupt`` objects."""
    out = []
    for item in items or ():
        if isinstance(item, Interrupt):
            out.append(item)
        elif isinstance(item, Mapping):
            out.append(Interrupt(value=item.get("value"), id=item.get("id") or ""))
        else:
            out.append(Interrupt(value=item))
    return tuple(out)


def _tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def config_of(checkpoint: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A wire ``checkpoint`` as a run config (as LangGraph's RemoteGraph builds it)."""
    if not checkpoint:
        return None
    configurable = {
        "thread_id": checkpoint.get("thread_id"),
        "checkpoint_ns": checkpoint.get("checkpoint_ns") or "",
        "checkpoint_id": checkpoint.get("checkpoint_id"),
        "checkpoint_map": checkpoint.get("checkpoint_map") or {},
    }
    return {"configurable": configurable}


def _task_of(task: Mapping[str, Any]) -> PregelTask:
    nested = task.get("state")
    if isinstance(nested, Mapping) and "values" in nested:
        state: Any = snapshot_of(nested)
    elif isinstance(nested, Mapping):
        state = nested
    else:
        state = config_of(task.get("checkpoint"))
    return PregelTask(
        id=task["id"],
        name=task["name"],
        path=_tuples(task.get("path") or []),
        error=task.get("error"),
        interrupts=to_interrupts(task.get("interrupts")),
        state=state,
        result=task.get("result"),
    )


def snapshot_of(state: Mapping[str, Any], thread_id: str | None = None) -> StateSnapshot:
    """A server ``ThreadState`` as a ``StateSnapshot`` (an empty thread gives empty values)."""
    tasks = tuple(_task_of(t) for t in state.get("tasks") or ())
    interrupts = to_interrupts(state.get("interrupts"))
    if not interrupts:
        interrupts = tuple(i for t in tasks for i in t.interrupts)
    config = config_of(state.get("checkpoint"))
    if config is None:
        config = {"configurable": {"thread_id": thread_id}} if thread_id else {"configurable": {}}
    return StateSnapshot(
        values=state.get("values") if state.get("values") is not None else {},
        next=tuple(state.get("next") or ()),
        config=config,  # type: ignore[arg-type]
        metadata=state.get("metadata"),
        created_at=state.get("created_at"),
        parent_config=config_of(state.get("parent_checkpoint")),  # type: ignore[arg-type]
        tasks=tasks,
        interrupts=interrupts,
    )


def update_result(response: Mapping[str, Any]) -> dict[str, Any]:
    """The config ``update_state`` returns: the new checkpoint's."""
    return config_of(response.get("checkpoint")) or {"configurable": {}}


# -- stream payloads ------------------------------------------------------------------------
def split_event(event: str) -> tuple[str, tuple[str, ...]]:
    """``"updates|outer:<id>|inner:<id>"`` -> ``("updates", ("outer:<id>", "inner:<id>"))``."""
    mode, *ns = event.split("|")
    return mode, tuple(ns)


def decode_payload(mode: str, data: Any) -> Any:
    """A stream payload in the shape a local graph streams it."""
    if mode in ("updates", "values") and isinstance(data, dict) and INTERRUPT in data:
        return {**data, INTERRUPT: to_interrupts(data[INTERRUPT])}
    if mode == "messages" and isinstance(data, list) and len(data) == 2:
        return (data[0], data[1])
    return data


def without_interrupt(values: Any) -> Any:
    if isinstance(values, dict) and INTERRUPT in values:
        return {k: v for k, v in values.items() if k != INTERRUPT}
    return values


# -- graphs ---------------------------------------------------------------------------------
def graph_of(data: Mapping[str, Any]) -> Any:
    """``GET /assistants/{id}/graph`` JSON as a drawable ``stepgraph.draw.Graph``."""
    from stepgraph.draw.graph import Edge, Graph, Node

    graph = Graph()
    for node in data.get("nodes") or ():
        body = node.get("data")
        name = node.get("name") or (body.get("name") if isinstance(body, Mapping) else None)
        graph.nodes[node["id"]] = Node(node["id"], name or node["id"], body, node.get("metadata"))
    for edge in data.get("edges") or ():
        graph.edges.append(
            Edge(edge["source"], edge["target"], edge.get("data"), bool(edge.get("conditional")))
        )
    return graph

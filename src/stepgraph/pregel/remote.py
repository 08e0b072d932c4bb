"""``RemoteGraph``: a graph hosted on a LangGraph-API server, used like a local graph.

It speaks the LangGraph Server API through the ``langgraph-sdk`` clients (an optional
dependency: ``pip install 'stepgraph[remote]'``), against stepgraph's own server or a real
LangGraph server alike::

    remote = RemoteGraph("agent", url="http://127.0.0.1:2024")
    remote.invoke({"value": "x"}, {"configurable": {"thread_id": tid}})

It returns and streams what LangGraph's RemoteGraph does (one mode, several modes as the
SDK's ``(mode, payload, event_id)`` parts, ``subgraphs=True`` with namespace tuples,
``__interrupt__`` as ``Interrupt`` objects, ``StateSnapshot``/``PregelTask``), and it can be a node of a local
graph (``builder.add_node("remote", RemoteGraph(...))``): the parent's thread is the remote
thread, the remote's events stream under the caller's namespace, a remote interrupt
interrupts the parent, and resuming the parent with ``Command(resume=...)`` resumes the
remote run (LangGraph's RemoteGraph restarts it instead).

Differences from LangGraph's RemoteGraph: a missing ``url``/client is an error at
construction (SG502), not at the first call; ``get_state_history`` without ``limit`` pages
through the whole history; ``ainvoke`` works with only a ``sync_client``.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

from stepgraph.config import ensure_config
from stepgraph.errors import StepgraphError
from stepgraph.remote.events import RemoteCall, plan_call
from stepgraph.remote.run_stream import V3_SUPPORTED_KWARGS as _V3_SUPPORTED_KWARGS
from stepgraph.remote.wire import (
    RemoteConfigError,
    RemoteException,
    before_of,
    checkpoint_of,
    graph_of,
    make_clients,
    snapshot_of,
    thread_id_of,
    tracing_headers,
    update_result,
)
from stepgraph.types import StateSnapshot

__all__ = ["_V3_SUPPORTED_KWARGS", "RemoteException", "RemoteGraph"]

_merge_tracing_headers = tracing_headers
"""LangGraph's name (looked up at call time, so it can be replaced)."""


class RemoteGraph:
    """A graph on a LangGraph-API server (``graph_id`` is a graph id or an assistant id).

    Args:
        graph_id: the assistant or graph id runs are created for.
        url: the server's base URL; builds ``langgraph_sdk`` sync and async clients.
        api_key: sent as ``x-api-key``; defaults to ``LANGGRAPH_API_KEY``,
            ``LANGSMITH_API_KEY`` or ``LANGCHAIN_API_KEY`` from the environment.
        headers: extra HTTP headers of the clients built from ``url``.
        client / sync_client: ready ``get_client()`` / ``get_sync_client()`` clients.
        config: a config merged under every call's config.
        name: the node name when added with ``add_node(remote)``; defaults to ``graph_id``.
        distributed_tracing: send LangSmith's tracing headers of the current run tree with
            each run request, so the server's run joins the caller's trace.

    Run methods also take ``headers`` (extra HTTP headers of that request), ``params``
    (query parameters) and further keyword arguments of the SDK's ``runs.stream``.
    """

    history_page_size = 100
    """Checkpoints fetched per request when ``get_state_history`` has no ``limit``."""

    def __init__(
        self,
        graph_id: str,
        /,
        *,
        url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        client: Any = None,
        sync_client: Any = None,
        config: Mapping[str, Any] | None = None,
        name: str | None = None,
        distributed_tracing: bool = False,
    ) -> None:
        if url is None and client is None and sync_client is None:
            raise RemoteConfigError(
                f"RemoteGraph({graph_id!r}) needs a server: neither url nor client was given.",
                code="SG502",
                hint="RemoteGraph(graph_id, url='http://127.0.0.1:2024'), or pass "
                "client=langgraph_sdk.get_client(...) / sync_client=get_sync_client(...)",
            )
        self.assistant_id = graph_id
        self.name = name or graph_id
        self.config = dict(config) if config else None
        self.url = url
        self.api_key = api_key
        self.headers = dict(headers) if headers else None
        self.distributed_tracing = distributed_tracing
        self.client, self.sync_client = make_clients(url, api_key, headers, client, sync_client)

    @property
    def graph_id(self) -> str:
        return self.assistant_id

    def __repr__(self) -> str:
        where = self.url or "<client>"
        return f"RemoteGraph({self.assistant_id!r}, url={where!r}, name={self.name!r})"

    # -- copies -------------------------------------------------------------------------
    def copy(self, update: Mapping[str, Any] | None = None, **kwargs: Any) -> RemoteGraph:
        """A shallow copy (sharing the clients) with some attributes replaced."""
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        for key, value in {**(update or {}), **kwargs}.items():
            if key not in self.__dict__ and key != "history_page_size":
                raise TypeError(f"RemoteGraph has no attribute {key!r} to copy with")
            new.__dict__[key] = value
        return new

    def with_config(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> RemoteGraph:
        """A copy whose calls run with ``config`` (and ``kwargs``) merged over this one's."""
        return self.copy(config=ensure_config(self.config, config, kwargs))

    # -- clients ------------------------------------------------------------------------
    def _sync(self, what: str) -> Any:
        if self.sync_client is None:
            raise RemoteConfigError(
                f"RemoteGraph.{what}() needs a sync client, but only an async client was given.",
                code="SG503",
                hint="pass url=... or sync_client=langgraph_sdk.get_sync_client(...), "
                "or use the async method",
            )
        return self.sync_client

    def _async(self, what: str) -> Any:
        if self.client is None:
            raise RemoteConfigError(
                f"RemoteGraph.{what}() needs an async client, but only a sync client was given.",
                code="SG503",
                hint="pass url=... or client=langgraph_sdk.get_client(...), or use the sync method",
            )
        return self.client

    def _plan(self, input: Any, config: Any, *, stream_mode: Any, default_mode: str,
              subgraphs: bool = False, version: str = "v1", interrupt_before: Any = None,
              interrupt_after: Any = None, context: Any = None, headers: Any = None,
              params: Any = None, extra: Mapping[str, Any] | None = None) -> RemoteCall:
        return plan_call(
            self, input, config, stream_mode=stream_mode, default_mode=default_mode,
            subgraphs=subgraphs, version=version, interrupt_before=interrupt_before,
            interrupt_after=interrupt_after, context=context, headers=headers, params=params,
            extra=extra,
        )

    def _run_sync(self, call: RemoteCall) -> Iterator[Any]:
        client = self._sync("stream")
        if call.waiting is not None:
            raise call.waiting
        for part in client.runs.stream(thread_id=call.thread_id, assistant_id=self.assistant_id,
                                       **call.request):
            yield from call.feed(part.event, part.data, getattr(part, "id", None))
        call.finish()

    async def _run_async(self, call: RemoteCall) -> AsyncIterator[Any]:
        client = self._async("astream")
        if call.waiting is not None:
            raise call.waiting
        async for part in client.runs.stream(thread_id=call.thread_id,
                                             assistant_id=self.assistant_id, **call.request):
            for out in call.feed(part.event, part.data, getattr(part, "id", None)):
                yield out
        call.finish()

    # -- v3 event streaming (remote/run_stream.py) --------------------------------------
    def _reject_v3_unsupported(self, *, control: Any, transformers: Any, interrupt_before: Any,
                               interrupt_after: Any, extra_kwargs: dict[str, Any]) -> None:
        from stepgraph.remote.run_stream import reject_v3_unsupported

        reject_v3_unsupported(control=control, transformers=transformers,
                              interrupt_before=interrupt_before, interrupt_after=interrupt_after,
                              extra_kwargs=extra_kwargs)

    def _open_v3(self, client: Any, input: Any, config: Any, headers: Any,
                 kwargs: dict[str, Any], cls: Any, **v3: Any) -> Any:
        from stepgraph.remote.run_stream import start_args

        self._reject_v3_unsupported(extra_kwargs=kwargs, **v3)
        thread_id, wire = start_args(self, config)
        sent = _merge_tracing_headers(headers) if self.distributed_tracing else headers
        sdk_thread = client.threads.stream(thread_id=thread_id, assistant_id=self.assistant_id,
                                           headers=sent)
        return cls(client, sdk_thread=sdk_thread, input=input, config=wire,
                   metadata=kwargs.get("metadata"))

    def stream_events(self, input: Any, config: Any = None, *, version: str = "v2",
                      interrupt_before: Any = None, interrupt_after: Any = None,
                      control: Any = None, transformers: Any = None, headers: Any = None,
                      **kwargs: Any) -> Any:
        """``version="v3"``: the remote run as a run stream over the server's v3 thread
        protocol (enter it with ``with`` to start the run). v1/v2 events are not supported."""
        if version != "v3":
            raise NotImplementedError(
                f"RemoteGraph.stream_events(version={version!r}) is not implemented; use "
                "stream() for v1/v2 streaming or version='v3'."
            )
        from stepgraph.remote.run_stream import _RemoteGraphRunStream

        def make(client: Any, **kw: Any) -> Any:
            return _RemoteGraphRunStream(sync_client=client, **kw)

        return self._open_v3(self._sync("stream_events"), input, config, headers, kwargs, make,
                             control=control, transformers=transformers,
                             interrupt_before=interrupt_before, interrupt_after=interrupt_after)

    async def astream_events(self, input: Any, config: Any = None, *, version: str = "v2",
                             interrupt_before: Any = None, interrupt_after: Any = None,
                             control: Any = None, transformers: Any = None, headers: Any = None,
                             **kwargs: Any) -> Any:
        """Async twin of ``stream_events`` (``async with await rg.astream_events(...)``)."""
        if version != "v3":
            raise NotImplementedError(
                f"RemoteGraph.astream_events(version={version!r}) is not implemented; use "
                "astream() for v1/v2 streaming or version='v3'."
            )
        from stepgraph.remote.run_stream import _AsyncRemoteGraphRunStream

        def make(client: Any, **kw: Any) -> Any:
            return _AsyncRemoteGraphRunStream(client=client, **kw)

        return self._open_v3(self._async("astream_events"), input, config, headers, kwargs, make,
                             control=control, transformers=transformers,
                             interrupt_before=interrupt_before, interrupt_after=interrupt_after)

    # -- runs ---------------------------------------------------------------------------
    def stream(
        self, input: Any, config: Any = None, *, stream_mode: Any = None,
        subgraphs: bool = False, interrupt_before: Any = None, interrupt_after: Any = None,
        context: Any = None, version: str = "v1", headers: Mapping[str, str] | None = None,
        params: Any = None, **kwargs: Any,
    ) -> Iterator[Any]:
        """Run on the server, yielding parts shaped as LangGraph's ``RemoteGraph`` yields them.

        ``stream_mode`` defaults to ``"updates"``; one mode yields its payloads, a list yields
        the SDK's ``(mode, payload, event_id)`` parts; ``subgraphs=True`` yields
        ``(namespace, ...)``; ``version="v2"`` yields dicts.
        """
        call = self._plan(input, config, stream_mode=stream_mode, default_mode="updates",
                          subgraphs=subgraphs, version=version,
                          interrupt_before=interrupt_before, interrupt_after=interrupt_after,
                          context=context, headers=headers, params=params, extra=kwargs)
        yield from self._run_sync(call)

    async def astream(
        self, input: Any, config: Any = None, *, stream_mode: Any = None,
        subgraphs: bool = False, interrupt_before: Any = None, interrupt_after: Any = None,
        context: Any = None, version: str = "v1", headers: Mapping[str, str] | None = None,
        params: Any = None, **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Async twin of ``stream``."""
        call = self._plan(input, config, stream_mode=stream_mode, default_mode="updates",
                          subgraphs=subgraphs, version=version,
                          interrupt_before=interrupt_before, interrupt_after=interrupt_after,
                          context=context, headers=headers, params=params, extra=kwargs)
        async for out in self._run_async(call):
            yield out

    def invoke(
        self, input: Any, config: Any = None, *, stream_mode: Any = "values",
        interrupt_before: Any = None, interrupt_after: Any = None, context: Any = None,
        version: str = "v1", headers: Mapping[str, str] | None = None, params: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Run on the server and return the final state (with ``__interrupt__`` if paused).

        As a node of a local graph, a remote interrupt raises the parent's interrupt.
        """
        if stream_mode != "values":
            return list(self.stream(input, config, stream_mode=stream_mode,
                                    interrupt_before=interrupt_before,
                                    interrupt_after=interrupt_after, context=context,
                                    version=version, headers=headers, params=params, **kwargs))
        call = self._plan(input, config, stream_mode="values", default_mode="values",
                          interrupt_before=interrupt_before, interrupt_after=interrupt_after,
                          context=context, headers=headers, params=params, extra=kwargs)
        for _ in self._run_sync(call):
            pass
        return call.result(version)

    async def ainvoke(
        self, input: Any, config: Any = None, *, stream_mode: Any = "values",
        interrupt_before: Any = None, interrupt_after: Any = None, context: Any = None,
        version: str = "v1", headers: Mapping[str, str] | None = None, params: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Async twin of ``invoke`` (with only a sync client it runs in a worker thread)."""
        options = dict(stream_mode=stream_mode, interrupt_before=interrupt_before,
                       interrupt_after=interrupt_after, context=context, version=version,
                       headers=headers, params=params, **kwargs)
        if self.client is None:
            from stepgraph.engine.callable import run_sync_in_thread

            return await run_sync_in_thread(functools.partial(self.invoke, **options),
                                            input, config)
        if stream_mode != "values":
            del options["stream_mode"]
            return [p async for p in self.astream(input, config, stream_mode=stream_mode,
                                                  **options)]
        call = self._plan(input, config, stream_mode="values", default_mode="values",
                          interrupt_before=interrupt_before, interrupt_after=interrupt_after,
                          context=context, headers=headers, params=params, extra=kwargs)
        async for _ in self._run_async(call):
            pass
        return call.result(version)

    # -- state --------------------------------------------------------------------------
    def _state_call(self, config: Any, what: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
        merged = ensure_config(self.config, config)
        tid = thread_id_of(merged, what)
        assert tid is not None
        return tid, merged, checkpoint_of(merged)

    def get_state(self, config: Any, *, subgraphs: bool = False) -> StateSnapshot:
        """The thread's state at its latest (or the config's ``checkpoint_id``) checkpoint."""
        tid, _, ckpt = self._state_call(config, "get_state")
        state = self._sync("get_state").threads.get_state(tid, checkpoint=ckpt, subgraphs=subgraphs)
        return snapshot_of(state, tid)

    async def aget_state(self, config: Any, *, subgraphs: bool = False) -> StateSnapshot:
        tid, _, ckpt = self._state_call(config, "aget_state")
        client = self._async("aget_state")
        state = await client.threads.get_state(tid, checkpoint=ckpt, subgraphs=subgraphs)
        return snapshot_of(state, tid)

    def get_state_history(
        self, config: Any, *, filter: Mapping[str, Any] | None = None, before: Any = None,
        limit: int | None = None,
    ) -> Iterator[StateSnapshot]:
        """The thread's checkpoints, newest first (all of them unless ``limit`` is given)."""
        tid, _, ckpt = self._state_call(config, "get_state_history")
        client = self._sync("get_state_history")
        pager = _HistoryPager(self.history_page_size, limit, before)
        while (size := pager.next_size()) is not None:
            states = client.threads.get_history(tid, limit=size, before=pager.cursor,
                                                metadata=filter, checkpoint=ckpt)
            yield from pager.take(states, tid)

    async def aget_state_history(
        self, config: Any, *, filter: Mapping[str, Any] | None = None, before: Any = None,
        limit: int | None = None,
    ) -> AsyncIterator[StateSnapshot]:
        """Async ``get_state_history``."""
        tid, _, ckpt = self._state_call(config, "aget_state_history")
        client = self._async("aget_state_history")
        pager = _HistoryPager(self.history_page_size, limit, before)
        while (size := pager.next_size()) is not None:
            states = await client.threads.get_history(tid, limit=size, before=pager.cursor,
                                                      metadata=filter, checkpoint=ckpt)
            for snap in pager.take(states, tid):
                yield snap

    def update_state(self, config: Any, values: Any, as_node: str | None = None,
                     task_id: str | None = None) -> dict[str, Any]:
        """Write ``values`` as if ``as_node`` ran; returns the new checkpoint's config."""
        tid, _, ckpt = self._state_call(config, "update_state")
        response = self._sync("update_state").threads.update_state(
            tid, values, as_node=as_node, checkpoint=ckpt)
        return update_result(response)

    async def aupdate_state(self, config: Any, values: Any, as_node: str | None = None,
                            task_id: str | None = None) -> dict[str, Any]:
        tid, _, ckpt = self._state_call(config, "aupdate_state")
        response = await self._async("aupdate_state").threads.update_state(
            tid, values, as_node=as_node, checkpoint=ckpt)
        return update_result(response)

    def bulk_update_state(self, config: Any, supersteps: Sequence[Any]) -> Any:
        raise _not_supported("bulk_update_state")

    async def abulk_update_state(self, config: Any, supersteps: Sequence[Any]) -> Any:
        raise _not_supported("abulk_update_state")

    # -- drawing ------------------------------------------------------------------------
    def get_graph(self, config: Any = None, *, xray: bool | int = False) -> Any:
        """The server's drawing of the graph as a ``stepgraph.draw.Graph``."""
        data = self._sync("get_graph").assistants.get_graph(self.assistant_id, xray=xray)
        return graph_of(data)

    async def aget_graph(self, config: Any = None, *, xray: bool | int = False) -> Any:
        data = await self._async("aget_graph").assistants.get_graph(self.assistant_id, xray=xray)
        return graph_of(data)


class _NotSupported(StepgraphError, NotImplementedError):
    code = "SG509"


def _not_supported(what: str) -> _NotSupported:
    return _NotSupported(
        f"RemoteGraph.{what}() is not supported: the server API has no bulk state update.",
        code="SG509",
        hint="call update_state() once per update",
    )


class _HistoryPager:
    """Pages of ``GET /threads/{id}/history``, newest first, for the sync and async twins:
    ``next_size()`` says how many to ask for (``None``: done), ``take`` reads a page."""

    def __init__(self, page_size: int, limit: int | None, before: Any) -> None:
        self.page_size = page_size
        self.remaining = limit
        self.cursor = before_of(before) if before else None
        self.done = False

    def next_size(self) -> int | None:
        if self.done or (self.remaining is not None and self.remaining <= 0):
            return None
        if self.remaining is None:
            return self.page_size
        return min(self.remaining, self.page_size)

    def take(self, states: list[Any], tid: str) -> list[StateSnapshot]:
        size = self.next_size() or 0
        if self.remaining is not None:
            self.remaining -= len(states)
        if len(states) < size or not states or not states[-1].get("checkpoint"):
            self.done = True
        else:
            self.cursor = before_of({"configurable": states[-1]["checkpoint"]})
        return [snapshot_of(state, tid) for state in states]

"""``run.subgraphs``: one run-stream handle per direct child subgraph.

Each handle has a mux of its own (``StreamMux._make_child``, fresh transformers scoped to the
subgraph's namespace), so its ``values``/``messages``/``subgraphs`` (grandchildren) fill as
the parent forwards the subgraph's events; reading them drives the root run. The sync and
async hooks share the decisions (``_ends``, ``_handle_for_event``) and differ only in
closing/forwarding with ``close``/``push`` or ``aclose``/``apush``.
"""

from __future__ import annotations

import logging
from typing import Any

from stepgraph.stream._types import ProtocolEvent
from stepgraph.stream.run_stream import AsyncSubgraphRunStream, SubgraphRunStream
from stepgraph.stream.stream_channel import StreamChannel
from stepgraph.stream.transformers_lifecycle import (
    SubgraphStatus,
    Transition,
    _TasksLifecycleBase,
    status_of_error,
)

_log = logging.getLogger(__name__)

Handle = SubgraphRunStream | AsyncSubgraphRunStream
Ending = tuple[Handle, SubgraphStatus, "str | None"]


def _mark_terminal(handle: Handle, status: SubgraphStatus, error: str | None) -> bool:
    """Record how ``handle`` ended; ``False`` when it had already ended."""
    if handle._seen_terminal:
        return False
    handle.status = status
    if error is not None and handle.error is None:
        handle.error = error
    handle._seen_terminal = True
    return True


def _open_mux(handle: Handle) -> Any:
    mux = handle._mux
    return None if mux is None or mux._events._closed else mux


def _failure(status: SubgraphStatus, error: str | None) -> BaseException | None:
    return RuntimeError(error or "Subgraph failed") if status == "failed" else None


class SubgraphTransformer(_TasksLifecycleBase):
    """Discover direct child subgraphs as ``SubgraphRunStream`` handles on ``run.subgraphs``."""

    _native = True
    supports_sync = True

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Handle] = StreamChannel()
        self._handles: dict[tuple[str, ...], Handle] = {}
        self._mux: Any = None

    def init(self) -> dict[str, Any]:
        return {"subgraphs": self._log}

    def _on_register(self, mux: Any) -> None:
        self._mux = mux

    def _should_track(self, ns: tuple[str, ...]) -> bool:
        depth = len(self.scope)
        return len(ns) == depth + 1 and ns[:depth] == self.scope

    def _on_started(self, ns: tuple[str, ...], graph_name: str | None,
                    trigger_call_id: str | None) -> None:
        if self._mux is None:
            return
        try:
            child = self._mux._make_child(ns)
        except RuntimeError:
            return
        cls = AsyncSubgraphRunStream if child.is_async else SubgraphRunStream
        handle = cls(child, path=ns, graph_name=graph_name, trigger_call_id=trigger_call_id)
        self._handles[ns] = handle
        self._log.push(handle)

    # -- shared decisions ----------------------------------------------------------------------
    def _ends(self, transitions: list[Transition]) -> list[Ending]:
        """The handles these transitions end (each handle ends once)."""
        out: list[Ending] = []
        for ns, status, error in transitions:
            handle = self._handles.get(ns)
            if handle is not None and _mark_terminal(handle, status, error):
                out.append((handle, status, error))
        return out

    def _ends_at_finish(self) -> list[Ending]:
        ends = self._ends(self._close_open("completed", None))
        return ends + self._ends([(ns, "completed", None) for ns in self._handles])

    def _handle_for_event(self, event: ProtocolEvent) -> Handle | None:
        ns = tuple(event["params"]["namespace"])
        depth = len(self.scope)
        if len(ns) <= depth:
            return None
        handle = self._handles.get(ns[: depth + 1])
        return handle if handle is not None and _open_mux(handle) is not None else None

    def _fail_all(self, err: BaseException) -> list[Handle]:
        status, error = status_of_error(err)
        self._open.clear()
        for handle in self._handles.values():
            _mark_terminal(handle, status, error)
        return [h for h in self._handles.values() if _open_mux(h) is not None]

    # -- sync lane -----------------------------------------------------------------------------
    def _end_sync(self, ends: list[Ending]) -> BaseException | None:
        first = None
        for handle, status, error in ends:
            if (mux := _open_mux(handle)) is None:
                continue
            try:
                err = _failure(status, error)
                mux.close() if err is None else mux.fail(err)
            except BaseException as e:
                first = first or e
        return first

    def process(self, event: ProtocolEvent) -> bool:
        ended = self._book(event)
        if ended:
            self._end_sync(self._ends(ended))
        if (handle := self._handle_for_event(event)) is not None:
            handle._observe_event(event)
            handle._mux.push(event)
        return ended is None

    def finalize(self) -> None:
        if (err := self._end_sync(self._ends_at_finish())) is not None:
            raise err

    def fail(self, err: BaseException) -> None:
        for handle in self._fail_all(err):
            try:
                handle._mux.fail(err)
            except Exception:
                _log.warning("Could not fail the subgraph stream at %s", handle.path, exc_info=True)

    # -- async lane ----------------------------------------------------------------------------
    async def _end_async(self, ends: list[Ending]) -> BaseException | None:
        first = None
        for handle, status, error in ends:
            if (mux := _open_mux(handle)) is None:
                continue
            try:
                err = _failure(status, error)
                await (mux.aclose() if err is None else mux.afail(err))
            except BaseException as e:
                first = first or e
        return first

    async def aprocess(self, event: ProtocolEvent) -> bool:
        ended = self._book(event)
        if ended:
            await self._end_async(self._ends(ended))
        if (handle := self._handle_for_event(event)) is not None:
            handle._observe_event(event)
            await handle._mux.apush(event)
        return ended is None

    async def afinalize(self) -> None:
        if (err := await self._end_async(self._ends_at_finish())) is not None:
            raise err

    async def afail(self, err: BaseException) -> None:
        for handle in self._fail_all(err):
            try:
                await handle._mux.afail(err)
            except Exception:
                _log.warning("Could not fail the subgraph stream at %s", handle.path, exc_info=True)

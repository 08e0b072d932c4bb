"""The v3 event envelope (``ProtocolEvent``) and the extension point (``StreamTransformer``).

A v3 run turns every raw stream part into a ``ProtocolEvent`` and hands it to each registered
transformer in turn; transformers build projections (``StreamChannel`` objects, plain values)
that the run stream exposes. See ``docs/v3-streaming.md``.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Coroutine
from typing import Any, ClassVar, Literal, NotRequired

from typing_extensions import TypedDict

_log = logging.getLogger(__name__)

ASYNC_HOOKS = ("aprocess", "afinalize", "afail")


class _ProtocolEventParams(TypedDict):
    namespace: list[str]
    timestamp: int
    """Wall-clock milliseconds (not monotonic: order by ``seq``)."""
    data: Any
    interrupts: NotRequired[tuple[Any, ...]]


class ProtocolEvent(TypedDict):
    """One event of a v3 run: ``method`` is the stream mode (or a channel name), ``seq`` the
    position in the root run's event log."""

    type: Literal["event"]
    event_id: NotRequired[str]
    seq: NotRequired[int]
    method: str
    params: _ProtocolEventParams


class StreamTransformer(ABC):
    """A projection of a run's events. ``init()`` returns the projections (a dict); every
    event goes through ``process`` (sync runs) or ``aprocess`` (async runs), which return
    ``False`` to keep the event out of the main log. ``finalize``/``fail`` (and their async
    twins) run when the run ends; ``StreamChannel`` projections are closed or failed for you.

    Class attributes: ``required_stream_modes`` (the graph stream modes it needs),
    ``requires_async`` (needs a running event loop), ``supports_sync`` (overrides async hooks
    but still works in sync runs), ``before_builtins`` (runs before the built-in transformers),
    and ``_native`` (its projections become attributes of the run stream).
    """

    requires_async: ClassVar[bool] = False
    supports_sync: ClassVar[bool] = False
    required_stream_modes: ClassVar[tuple[str, ...]] = ()
    before_builtins: ClassVar[bool] = False

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        self.scope: tuple[str, ...] = scope

    @abstractmethod
    def init(self) -> dict[str, Any]:
        """The projections of this transformer, by key."""

    def _on_register(self, mux: Any) -> None:  # noqa: B027 - an optional hook
        """Told the mux that registered it (a hook for transformers that nest muxes)."""

    def process(self, event: ProtocolEvent) -> bool:
        raise NotImplementedError(f"{type(self).__name__} must override process() or aprocess()")

    async def aprocess(self, event: ProtocolEvent) -> bool:
        return self.process(event)

    def finalize(self) -> None:  # noqa: B027 - an optional hook
        """The run ended normally."""

    async def afinalize(self) -> None:
        self.finalize()

    def fail(self, err: BaseException) -> None:  # noqa: B027 - an optional hook
        """The run ended with ``err``."""

    async def afail(self, err: BaseException) -> None:
        self.fail(err)

    def schedule(
        self, coro: Coroutine[Any, Any, Any], *, on_error: Literal["log", "raise"] = "log"
    ) -> asyncio.Task[Any]:
        """Run ``coro`` alongside the run (async runs only). The mux awaits it before
        ``afinalize`` and cancels it on failure; with ``on_error="log"`` its exception is only
        logged, with ``"raise"`` it fails the run."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError(
                f"{type(self).__name__}.schedule() requires a running event loop: use "
                "astream_events(version='v3') (set requires_async=True on the class to fail "
                "at registration instead)."
            ) from None
        task = asyncio.ensure_future(_logged(coro) if on_error == "log" else coro)
        pending = self.__dict__.setdefault("_stream_scheduled_tasks", set())
        pending.add(task)
        task.add_done_callback(pending.discard)
        return task


async def _logged(coro: Coroutine[Any, Any, Any]) -> Any:
    try:
        return await coro
    except asyncio.CancelledError:
        raise
    except BaseException:
        _log.exception("A task scheduled by a StreamTransformer failed")
        return None


def transformer_requires_async(transformer: StreamTransformer) -> bool:
    """Whether ``transformer`` can only run in an async run."""
    if transformer.requires_async:
        return True
    if transformer.supports_sync:
        return False
    cls = type(transformer)
    return any(getattr(cls, name) is not getattr(StreamTransformer, name) for name in ASYNC_HOOKS)


def scheduled_tasks(transformer: StreamTransformer) -> list[asyncio.Task[Any]]:
    """The unfinished tasks ``transformer`` scheduled."""
    return [t for t in getattr(transformer, "_stream_scheduled_tasks", ()) if not t.done()]

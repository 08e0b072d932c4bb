"""Streaming responses: SSE that follows a run's event log, and ``wait``'s streamed JSON.

SSE frames are written as in the LangGraph server (``event:``/``data:``[``/id:``] lines,
CRLF), with a ``: heartbeat`` comment after every ``heartbeat`` seconds of silence. No
``end`` event: the response closes when the run's log closes. ``wait``/``join`` send a
bare newline every ``heartbeat`` seconds until the run ends, then the JSON result.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from typing import Any

from sse_starlette.sse import EventSourceResponse
from starlette.responses import StreamingResponse

from stepgraph.server.runtime.eventlog import RunLog
from stepgraph.server.serde import dumps

__all__ = ["run_sse", "thread_sse", "wait_response"]

HEARTBEAT = b": heartbeat\r\n\r\n"


def run_sse(
    log: RunLog | None, *, headers: dict[str, str], with_ids: bool, heartbeat: float,
    after: tuple[int, int] | None = None, live: bool = False, modes: Collection[str] | None = None,
    on_disconnect: Callable[[], None] | None = None,
) -> EventSourceResponse:
    """SSE of ``log`` (an empty stream when ``None``), filtered to ``modes`` when given.

    ``on_disconnect`` is called when the client goes away before the log closed.
    """

    async def frames() -> AsyncIterator[bytes]:
        finished = False
        try:
            if log is not None:
                async for event in log.follow(after=after, live=live, heartbeat=heartbeat):
                    if event is None:
                        yield HEARTBEAT
                    elif not modes or event.name in ("metadata", "error") or event.mode in modes:
                        yield event.frame(with_id=with_ids)
            finished = True
        finally:
            if not finished and on_disconnect is not None:
                on_disconnect()

    return EventSourceResponse(frames(), headers=headers, ping=0, sep="\r\n")


def wait_response(
    outcome: Awaitable[Any], *, headers: dict[str, str], heartbeat: float,
    on_disconnect: Callable[[], None] | None = None,
) -> StreamingResponse:
    """Streamed JSON: newlines while ``outcome`` is pending, then its value."""

    async def body() -> AsyncIterator[bytes]:
        task = asyncio.ensure_future(outcome)
        finished = False
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=heartbeat)
                if done:
                    break
                yield b"\n"
            finished = True
            yield dumps(task.result(), stream=True)
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
            if not finished and on_disconnect is not None:
                on_disconnect()

    return StreamingResponse(body(), media_type="application/json", headers=headers)


def thread_sse(
    runs: AsyncIterator[tuple[Any, bool] | None], *, headers: dict[str, str], heartbeat: float,
    modes: Collection[str] | None = None,
) -> EventSourceResponse:
    """SSE of every run of a thread, one after the other, until the client disconnects.

    ``runs`` (``RunService.thread_runs``) yields each run's log with whether it is followed
    live (a run already running when the client connected: from that moment) or from its
    start (its ``metadata`` event), and ``None`` while no run comes (a heartbeat).
    """

    async def frames() -> AsyncIterator[bytes]:
        try:
            async for item in runs:
                if item is None:
                    yield HEARTBEAT
                    continue
                log, live = item
                async for event in log.follow(live=live, heartbeat=heartbeat):
                    if event is None:
                        yield HEARTBEAT
                    elif not modes or event.name in ("metadata", "error") or event.mode in modes:
                        yield event.frame(with_id=True)
        finally:
            await runs.aclose()  # type: ignore[attr-defined]

    return EventSourceResponse(frames(), headers=headers, ping=0, sep="\r\n")

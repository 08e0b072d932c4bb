"""The built-in transformers that project one stream mode at the run's own level.

Each one pushes the ``data`` of its mode's events whose namespace is its scope onto one
``StreamChannel`` (``run.values``, ``run.updates``, ...); events of deeper subgraphs reach
the subgraph handles' own projections instead. ``ValuesTransformer`` is always registered;
the others are opt-in (``transformers=[UpdatesTransformer, ...]``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from stepgraph.stream._types import ProtocolEvent, StreamTransformer
from stepgraph.stream.stream_channel import StreamChannel


class _ModeProjection(StreamTransformer):
    """Push the data of every own-level ``mode`` event onto the ``key`` projection."""

    _native = True
    mode: ClassVar[str]

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._log: StreamChannel[Any] = StreamChannel()
        self._scope_list: list[str] = list(scope)

    def init(self) -> dict[str, Any]:
        return {self.mode: self._log}

    def _own(self, event: ProtocolEvent) -> bool:
        return event["method"] == self.mode and event["params"]["namespace"] == self._scope_list

    def process(self, event: ProtocolEvent) -> bool:
        if self._own(event):
            self._take(event)
        return True

    def _take(self, event: ProtocolEvent) -> None:
        self._log.push(event["params"]["data"])


class ValuesTransformer(_ModeProjection):
    """``run.values``: the run's state after each step (also tracks its interrupts)."""

    mode = "values"
    required_stream_modes = ("values",)

    def __init__(self, scope: tuple[str, ...] = ()) -> None:
        super().__init__(scope)
        self._latest: dict[str, Any] | None = None
        self._interrupted = False
        self._interrupts: list[Any] = []

    @property
    def error(self) -> BaseException | None:
        """The error that ended the run, ``None`` while it runs or when it succeeded."""
        return self._log._error

    def _take(self, event: ProtocolEvent) -> None:
        params = event["params"]
        self._latest = params["data"]
        if interrupts := params.get("interrupts", ()):
            self._interrupted = True
            self._interrupts.extend(interrupts)
        self._log.push(params["data"])


class CustomTransformer(_ModeProjection):
    """``run.custom``: what nodes wrote with ``get_stream_writer()``."""

    mode = "custom"
    required_stream_modes = ("custom",)


class UpdatesTransformer(_ModeProjection):
    """``run.updates``: ``{node: update}`` after each task."""

    mode = "updates"
    required_stream_modes = ("updates",)


class CheckpointsTransformer(_ModeProjection):
    """``run.checkpoints``: each checkpoint saved (needs a checkpointer)."""

    mode = "checkpoints"
    required_stream_modes = ("checkpoints",)


class DebugTransformer(_ModeProjection):
    """``run.debug``: the ``debug`` stream mode's events."""

    mode = "debug"
    required_stream_modes = ("debug",)


class TasksTransformer(_ModeProjection):
    """``run.tasks``: each task's start and result payloads."""

    mode = "tasks"
    required_stream_modes = ("tasks",)

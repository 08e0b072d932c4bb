"""Checkpoint data model and the ``BaseCheckpointSaver`` contract (LangGraph-compatible).

A *checkpoint* is the state of a graph between two supersteps: channel values, their
versions and which versions each node has seen. A *saver* stores checkpoints per thread
(``config["configurable"]["thread_id"]``) and namespace (``checkpoint_ns``, ``""`` at the
root, one per subgraph), plus the *pending writes* of tasks that finished in the step that
follows a checkpoint.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, NamedTuple, TypedDict, TypeVar

from stepgraph.checkpoint._delta import DeltaChannelHistory, HistoryWalk
from stepgraph.checkpoint._ids import uuid6
from stepgraph.checkpoint.serde.base import SerializerProtocol
from stepgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from stepgraph.constants import MISSING, WRITES_IDX_MAP
from stepgraph.errors import StepgraphError

if TYPE_CHECKING:
    from stepgraph.channels.base import BaseChannel

__all__ = [
    "CHECKPOINT_FORMAT_VERSION",
    "EXCLUDED_METADATA_KEYS",
    "WRITES_IDX_MAP",
    "BaseCheckpointSaver",
    "ChannelVersion",
    "ChannelVersions",
    "Checkpoint",
    "DeltaChannelHistory",
    "CheckpointMetadata",
    "CheckpointTuple",
    "PendingWrite",
    "RunnableConfig",
    "SaverError",
    "SerializerProtocol",
    "copy_checkpoint",
    "create_checkpoint",
    "empty_checkpoint",
    "get_checkpoint_id",
    "get_checkpoint_metadata",
    "next_string_version",
    "uuid6",
]

RunnableConfig = dict[str, Any]
"""A run config; savers read ``config["configurable"]`` (``thread_id``, ``checkpoint_ns``, ``checkpoint_id``)."""
ChannelVersion = str | int | float
"""A channel's version; only ``<`` between versions of one saver has to make sense."""
ChannelVersions = dict[str, ChannelVersion]
PendingWrite = tuple[str, str, Any]
"""``(task_id, channel, value)``: one write of a task that finished after a checkpoint."""
V = TypeVar("V", int, float, str)

CHECKPOINT_FORMAT_VERSION = 4
"""The ``v`` field of checkpoints written by stepgraph (LangGraph's runtime format)."""

EXCLUDED_METADATA_KEYS = frozenset(
    {
        "thread_id",
        "checkpoint_id",
        "checkpoint_ns",
        "checkpoint_map",
        "langgraph_step",
        "langgraph_node",
        "langgraph_triggers",
        "langgraph_path",
        "langgraph_checkpoint_ns",
    }
)
"""Config keys never copied into checkpoint metadata."""


class Checkpoint(TypedDict):
    """The state of a graph between two supersteps."""

    v: int
    """Format version (4)."""
    id: str
    """Unique, and sorts in creation order (a UUIDv6 string)."""
    ts: str
    """ISO 8601 creation time."""
    channel_values: dict[str, Any]
    """Values of the channels that have one."""
    channel_versions: ChannelVersions
    """Current version of each channel."""
    versions_seen: dict[str, ChannelVersions]
    """Per node (and pseudo-node ``__input__``/``__interrupt__``): the versions it last saw."""
    updated_channels: list[str] | None
    """Channels updated by the step that produced this checkpoint."""


class CheckpointMetadata(TypedDict, total=False):
    """What a saver stores next to a checkpoint; ``list(filter=...)`` matches on it."""

    source: Literal["input", "loop", "update", "fork"]
    step: int
    """-1 for the first (input) checkpoint, then 0, 1, ..."""
    parents: dict[str, str]
    """Namespace -> checkpoint id of the enclosing graphs (``{}`` at the root)."""
    run_id: str


class CheckpointTuple(NamedTuple):
    """A stored checkpoint with its config, metadata, parent and pending writes."""

    config: RunnableConfig
    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    parent_config: RunnableConfig | None = None
    pending_writes: list[PendingWrite] | None = None


class SaverError(StepgraphError, ValueError):
    """A saver was misused or its storage is not usable (codes SG410-SG419).

    SG410 config without ``thread_id``; SG411 ``put_writes`` without ``checkpoint_id``;
    SG412 optional driver not installed; SG413 database written by a newer stepgraph;
    SG414 stored data is inconsistent; SG415 sync call from inside the saver's event loop.
    """

    code = "SG410"


def get_checkpoint_id(config: RunnableConfig | None) -> str | None:
    """The ``checkpoint_id`` of a config (or legacy ``thread_ts``), else ``None``."""
    if not config:
        return None
    conf = config.get("configurable") or {}
    return conf.get("checkpoint_id") or conf.get("thread_ts")


def thread_target(config: RunnableConfig | None) -> tuple[str, str, str | None]:
    """``(thread_id, checkpoint_ns, checkpoint_id)`` of a config; SG410 without a thread_id."""
    conf = (config or {}).get("configurable") or {}
    thread_id = conf.get("thread_id")
    if thread_id is None:
        raise SaverError(
            "A checkpointer needs config['configurable']['thread_id'] to know which thread "
            "to read or write; this config has none.",
            code="SG410",
            hint='pass config={"configurable": {"thread_id": "some-id"}}',
        )
    if type(thread_id) is not str:
        thread_id = str(thread_id)
    return thread_id, conf.get("checkpoint_ns") or "", (
        conf.get("checkpoint_id") or conf.get("thread_ts")
    )


def checkpoint_config(thread_id: str, ns: str, checkpoint_id: str) -> RunnableConfig:
    """The config that addresses one stored checkpoint."""
    return {
        "configurable": {
            "thread_id": thread_id,
            "checkpoint_ns": ns,
            "checkpoint_id": checkpoint_id,
        }
    }


def _clean(value: Any) -> Any:
    return value.replace("\x00", "") if isinstance(value, str) else value


def get_checkpoint_metadata(
    config: RunnableConfig, metadata: CheckpointMetadata | Mapping[str, Any]
) -> CheckpointMetadata:
    """``metadata`` plus primitive values of ``config["metadata"]`` and ``config["configurable"]``.

    Keys already in ``metadata``, keys starting with ``__`` and ``EXCLUDED_METADATA_KEYS`` are
    skipped; only str/int/float/bool values are copied; NUL characters are stripped from strings.
    """
    out: dict[str, Any] = {
        k: v.replace("\x00", "") if isinstance(v, str) else v for k, v in metadata.items()
    }
    for source in (config.get("metadata"), config.get("configurable")):
        if not source:
            continue
        for key, value in source.items():
            if key in out or key in EXCLUDED_METADATA_KEYS or key.startswith("__"):
                continue
            if isinstance(value, str | int | float | bool):
                out[key] = _clean(value)
    return out  # type: ignore[return-value]


def empty_checkpoint() -> Checkpoint:
    """A checkpoint with no channels (the start of a new thread)."""
    return Checkpoint(
        v=CHECKPOINT_FORMAT_VERSION,
        id=str(uuid6(clock_seq=-2)),
        ts=datetime.now(UTC).isoformat(),
        channel_values={},
        channel_versions={},
        versions_seen={},
        updated_channels=None,
    )


def copy_checkpoint(checkpoint: Checkpoint) -> Checkpoint:
    """A copy whose dicts (values, versions, versions_seen per node) can be changed freely."""
    return Checkpoint(
        v=checkpoint["v"],
        id=checkpoint["id"],
        ts=checkpoint["ts"],
        channel_values=dict(checkpoint["channel_values"]),
        channel_versions=dict(checkpoint["channel_versions"]),
        versions_seen={k: dict(v) for k, v in checkpoint["versions_seen"].items()},
        updated_channels=checkpoint.get("updated_channels"),
    )


def create_checkpoint(
    checkpoint: Checkpoint,
    channels: Mapping[str, BaseChannel] | None,
    step: int,
    *,
    id: str | None = None,
    updated_channels: list[str] | None = None,
) -> Checkpoint:
    """A new checkpoint with ``checkpoint``'s versions and the current values of ``channels``.

    Channels without a version or without a value are left out of ``channel_values``; with
    ``channels=None`` the values of ``checkpoint`` are kept.
    """
    if channels is None:
        values = checkpoint["channel_values"]
    else:
        values = {}
        for name in checkpoint["channel_versions"]:
            channel = channels.get(name)
            if channel is None:
                continue
            value = channel.checkpoint()
            if value is not MISSING:
                values[name] = value
    return Checkpoint(
        v=CHECKPOINT_FORMAT_VERSION,
        id=id or str(uuid6(clock_seq=step)),
        ts=datetime.now(UTC).isoformat(),
        channel_values=values,
        channel_versions=checkpoint["channel_versions"],
        versions_seen=checkpoint["versions_seen"],
        updated_channels=updated_channels,
    )


_getrandbits = random.getrandbits
"""(The module's shared generator: ``random.seed`` still applies.)"""


def next_string_version(current: str | int | float | None) -> str:
    """A counter one above ``current``'s plus a random suffix, as a sortable string.

    ``"000000000042.3fa9c1"``: 12 zero-padded digits keep string order equal to counter
    order; the random suffix keeps versions written on two forks of one checkpoint apart.
    (LangGraph's longer ``"%032d.%016f"`` strings are read too.)
    """
    if type(current) is str:
        counter = int(current.partition(".")[0])
    elif current is None:
        counter = 0
    elif isinstance(current, str):
        counter = int(current.split(".", 1)[0])
    else:
        counter = int(current)
    # (%-format: its spec is parsed faster than an f-string's, ~0.5 µs a call)
    return "%012d.%06x" % (counter + 1, _getrandbits(24))  # noqa: UP031


def string_versions(self: Any, current: str | int | float | None, channel: Any = None) -> str:
    """A saver's ``get_next_version`` that is ``next_string_version`` (the savers that
    set it: a run then calls ``next_string_version`` directly)."""
    return next_string_version(current)


def _default_serde() -> SerializerProtocol:
    return JsonPlusSerializer()


class BaseCheckpointSaver(Generic[V]):
    """Stores checkpoints and pending writes; subclass and implement the storage methods.

    Contract of every saver:
      * ``put(config, checkpoint, metadata, new_versions)`` stores ``checkpoint`` under the
        thread and namespace of ``config``, with ``config``'s ``checkpoint_id`` as parent, and
        returns the config addressing the stored checkpoint.
      * ``get_tuple(config)`` returns the checkpoint named by ``checkpoint_id``, or the latest
        of the thread/namespace, with its pending writes; ``None`` when there is none.
      * ``list(config, filter=, before=, limit=)`` yields matching checkpoints newest first.
      * ``put_writes`` keeps the first regular write per ``(task_id, idx)`` and overwrites
        special writes (``WRITES_IDX_MAP``, negative idx).
      * ``delete_thread`` removes every checkpoint, blob and write of a thread.
    Every method has an ``a``-prefixed async twin. A config without ``thread_id`` raises
    ``SaverError`` (SG410).
    """

    serde: SerializerProtocol

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        self.serde = serde if serde is not None else _default_serde()

    @property
    def config_specs(self) -> list[Any]:
        """Configurable fields a saver reads (none beyond the standard ones)."""
        return []

    # --- sync API -----------------------------------------------------------------------
    def get(self, config: RunnableConfig) -> Checkpoint | None:
        """The checkpoint addressed by ``config`` (see ``get_tuple``), or ``None``."""
        found = self.get_tuple(config)
        return found.checkpoint if found else None

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint named by ``checkpoint_id``, else the latest one; ``None`` if absent."""
        raise NotImplementedError

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first: of ``config``'s thread (every thread for ``None``),
        only ``config``'s namespace if it names one, metadata equal to ``filter``, ids older
        than ``before``'s, at most ``limit``."""
        raise NotImplementedError

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store ``checkpoint`` (blobs only for ``new_versions``); returns its config."""
        raise NotImplementedError

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Store one task's writes against the checkpoint named by ``config``."""
        raise NotImplementedError

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint and write of ``thread_id``."""
        raise NotImplementedError

    # --- async API ----------------------------------------------------------------------
    async def aget(self, config: RunnableConfig) -> Checkpoint | None:
        """Async ``get``."""
        found = await self.aget_tuple(config)
        return found.checkpoint if found else None

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Async ``get_tuple``."""
        raise NotImplementedError

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async ``list``."""
        raise NotImplementedError
        yield  # pragma: no cover - makes this an async generator

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Async ``put``."""
        raise NotImplementedError

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Async ``put_writes``."""
        raise NotImplementedError

    async def adelete_thread(self, thread_id: str) -> None:
        """Async ``delete_thread``."""
        raise NotImplementedError

    # --- DeltaChannel support ------------------------------------------------------------
    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Per channel, the writes saved along the ancestors of ``config``'s checkpoint and
        the nearest stored value (``seed``), from which a ``DeltaChannel`` is rebuilt (see
        ``stepgraph.checkpoint._delta``). Walks ``get_tuple`` along ``parent_config``."""
        walk = HistoryWalk(channels)
        if not channels:
            return {}
        target = self.get_tuple(config)
        cursor = target.parent_config if target is not None else None
        while cursor is not None:
            saved = self.get_tuple(cursor)
            if saved is None:
                break
            cursor = walk.take(saved)
        return walk.result()

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Async ``get_delta_channel_history``."""
        walk = HistoryWalk(channels)
        if not channels:
            return {}
        target = await self.aget_tuple(config)
        cursor = target.parent_config if target is not None else None
        while cursor is not None:
            saved = await self.aget_tuple(cursor)
            if saved is None:
                break
            cursor = walk.take(saved)
        return walk.result()

    def get_next_version(self, current: V | None, channel: Any = None) -> V:
        """The version after ``current`` (``None``: the first); integers counting up by default."""
        if current is None:
            return 1  # type: ignore[return-value]
        if isinstance(current, int):
            return current + 1  # type: ignore[return-value]
        return next_string_version(current)  # type: ignore[return-value]

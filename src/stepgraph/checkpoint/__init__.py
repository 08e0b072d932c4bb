"""Checkpoint data model and savers.

Savers live in their own modules (import only what you use):
``stepgraph.checkpoint.memory.InMemorySaver``, ``stepgraph.checkpoint.sqlite.SqliteSaver`` /
``.sqlite.aio.AsyncSqliteSaver``, ``stepgraph.checkpoint.postgres.PostgresSaver`` /
``.postgres.aio.AsyncPostgresSaver``. Any saver can be checked with
``stepgraph.testing.saver_conformance``.
"""

from stepgraph.checkpoint.base import (
    CHECKPOINT_FORMAT_VERSION,
    EXCLUDED_METADATA_KEYS,
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersion,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    SaverError,
    copy_checkpoint,
    create_checkpoint,
    empty_checkpoint,
    get_checkpoint_id,
    get_checkpoint_metadata,
    uuid6,
)

__all__ = [
    "CHECKPOINT_FORMAT_VERSION",
    "EXCLUDED_METADATA_KEYS",
    "WRITES_IDX_MAP",
    "BaseCheckpointSaver",
    "ChannelVersion",
    "ChannelVersions",
    "Checkpoint",
    "CheckpointMetadata",
    "CheckpointTuple",
    "PendingWrite",
    "SaverError",
    "copy_checkpoint",
    "create_checkpoint",
    "empty_checkpoint",
    "get_checkpoint_id",
    "get_checkpoint_metadata",
    "uuid6",
]

"""``langgraph._internal._constants``: reserved config keys and channel names.

stepgraph's own reserved names come from ``stepgraph.constants``; the ``CONFIG_KEY_*``
names are the ``configurable`` keys LangGraph's runtime uses. stepgraph answers the ones
code outside the engine reads (``CONFIG_KEY_RUNTIME``, ``CONFIG_KEY_READ``,
``CONFIG_KEY_SEND``: see ``stepgraph.compat.mirror._internal._config``).
"""

from __future__ import annotations

import sys
from typing import Final

from stepgraph.constants import (  # noqa: F401 - re-exported under LangGraph's names
    END,
    ERROR,
    INPUT,
    INTERRUPT,
    NO_WRITES,
    NS_END,
    NS_SEP,
    NULL_TASK_ID,
    PULL,
    PUSH,
    RESERVED,
    RESUME,
    RETURN,
    SCHEDULED,
    START,
    TAG_HIDDEN,
    TAG_NOSTREAM,
    TASKS,
)
from stepgraph.engine.taskconfig import DURABILITY_KEY, READ_KEY, RUNTIME_KEY, SEND_KEY

CONF: Final = sys.intern("configurable")
CONFIG_KEY_RUNTIME: Final = RUNTIME_KEY
CONFIG_KEY_READ: Final = READ_KEY
CONFIG_KEY_SEND: Final = SEND_KEY
CONFIG_KEY_CHECKPOINTER: Final = sys.intern("__pregel_checkpointer")
CONFIG_KEY_STORE: Final = sys.intern("__pregel_store")
CONFIG_KEY_TASK_ID: Final = sys.intern("__pregel_task_id")
CONFIG_KEY_DURABILITY: Final = DURABILITY_KEY
CONFIG_KEY_CHECKPOINT_NS: Final = sys.intern("checkpoint_ns")
CONFIG_KEY_CHECKPOINT_ID: Final = sys.intern("checkpoint_id")
CONFIG_KEY_THREAD_ID: Final = sys.intern("thread_id")

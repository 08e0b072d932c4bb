"""Message utilities that need no langchain-core.

``stepgraph.graph.message.add_messages`` is the reducer; this package holds the plain-dict
representation it uses when langchain-core is absent (or ``format="dict"`` is asked for).
Importing it never imports langchain-core.
"""

from stepgraph.messages._dict import (
    REMOVE_ALL_MESSAGES,
    MessageDict,
    RemoveMessage,
    is_remove,
    to_message_dict,
)

__all__ = [
    "REMOVE_ALL_MESSAGES",
    "MessageDict",
    "RemoveMessage",
    "is_remove",
    "to_message_dict",
]

"""The messages reducer: ``add_messages``, ``MessagesState`` (same names as
``langgraph.graph.message``).

Representation rule, decided per call:

* ``add_messages(format="dict")`` (factory form) always works on plain dicts
  ``{"role": ..., "content": ..., "id": ...}``; langchain-core messages are converted.
* Default (``format=None``): when langchain-core is importable (checked once, lazily, with
  ``importlib.util.find_spec``) it behaves exactly like LangGraph and returns ``BaseMessage``
  objects; otherwise it works on plain dicts.
* ``format="langchain-openai"``: LangGraph's OpenAI-format conversion (needs langchain-core).

Importing this module never imports langchain-core; the langchain path is loaded on the
first merge that needs it.
"""

from functools import partial
from typing import Annotated, Any, Literal, TypeAlias

from typing_extensions import TypedDict

from stepgraph._running import current_task
from stepgraph.errors import InvalidUpdateError
from stepgraph.graph.builder import StateGraph
from stepgraph.messages._dict import REMOVE_ALL_MESSAGES, to_message_dict
from stepgraph.messages._merge import check_format, langchain_available, merge_messages, prepare
from stepgraph.stream.messages import push_message as _push
from stepgraph.warnings import LangGraphDeprecatedSinceV10, deprecated_since

__all__ = [
    "REMOVE_ALL_MESSAGES",
    "AnyMessage",
    "Messages",
    "MessageGraph",
    "MessagesState",
    "add_messages",
    "push_message",
]

AnyMessage: TypeAlias = Any
"""A message: a plain dict, or a langchain-core ``BaseMessage``.

``Any`` at runtime so that resolving a schema's type hints never imports langchain-core
(``langchain_core.messages.AnyMessage`` works in a schema too, if you import it yourself).
"""

Messages: TypeAlias = list[Any] | Any
"""What ``add_messages`` accepts on either side: a message-like value or a list of them.

Message-likes are dicts (``role`` or ``type`` key), strings (user messages), ``(role,
content)`` tuples, and langchain-core messages.
"""

Format: TypeAlias = Literal["langchain-openai", "dict"] | None


def _add_messages(left: Messages, right: Messages, *, format: Format = None) -> list[Any]:
    return merge_messages(left, right, format)


def add_messages(
    left: Messages | None = None,
    right: Messages | None = None,
    *,
    format: Format = None,
) -> Any:
    """Merge two message lists by id: the reducer for a ``messages`` state key.

    * Each side may be one message-like or a list. Messages without an id get a fresh
      ``uuid4`` string id.
    * A ``right`` message whose id is already present replaces it in place; new ids are
      appended in order.
    * A removal (``stepgraph.messages.RemoveMessage(id)``, the dict ``{"type": "remove",
      "id": id}`` or langchain-core's ``RemoveMessage``) deletes that id; an unknown id
      raises ``ValueError``. A removal with id ``REMOVE_ALL_MESSAGES`` drops everything
      before it: the result is what follows it in ``right``, merged into an empty list.
    * ``left`` and ``right`` are not mutated as lists. Plain dicts are never mutated (one
      without an id is copied); a langchain-core message without an id gets its id set in
      place, as in LangGraph.

    Called with neither ``left`` nor ``right`` it is a factory: ``add_messages(format=...)``
    returns the reducer with that format bound. ``format`` is ``None`` (see the module
    docstring for the representation rule), ``"dict"`` or ``"langchain-openai"``; anything
    else raises ``ValueError`` (in the factory form, immediately).

    Example::
        class State(TypedDict):
            messages: Annotated[list[AnyMessage], add_messages]  # or add_messages(format="dict")
    """
    if left is not None and right is not None:
        return merge_messages(left, right, format)
    if left is not None or right is not None:
        given = "left" if left is not None else "right"
        raise ValueError(
            "Must specify non-null arguments for both 'left' and 'right'. "
            f"Only received: '{given}'."
        )
    check_format(format)
    reducer = partial(_add_messages, format=format)
    reducer.__stepgraph_prepare__ = partial(prepare, format)  # type: ignore[attr-defined]
    return reducer


add_messages.__stepgraph_prepare__ = partial(prepare, None)  # type: ignore[attr-defined]
"""A compiled graph loads the reducer's message representation before its first step."""


def _messages_delta_reducer(state: Messages, writes: list[Messages]) -> list[Any]:
    """``add_messages`` as a ``DeltaChannel`` reducer (LangGraph's name for it)::
        messages: Annotated[list, DeltaChannel(_messages_delta_reducer)]

    Folds a batch of writes one after the other, so batching never changes the result.
    """
    merged: Any = state
    for write in writes:
        merged = merge_messages(merged, write, None)
    return list(merged) if not isinstance(merged, list) else merged


class MessagesState(TypedDict):
    """A state schema with one key, ``messages``, merged by :func:`add_messages`."""

    messages: Annotated[list[AnyMessage], add_messages]


class MessageGraph(StateGraph):
    """Deprecated: a graph whose whole state is one message list merged by ``add_messages``.

    Nodes take the list and return messages to add. Use ``StateGraph(MessagesState)``.
    """

    def __init__(self) -> None:
        deprecated_since(
            LangGraphDeprecatedSinceV10,
            "MessageGraph is deprecated in LangGraph v1.0.0, to be removed in v2.0.0. Please use "
            "StateGraph with a `messages` key instead.",
        )
        super().__init__(Annotated[list[AnyMessage], add_messages])  # type: ignore[arg-type]


def push_message(message: Any, *, state_key: str | None = "messages") -> Any:
    """Stream a message to the ``messages`` stream mode by hand, from inside a node.

    LangGraph's ``push_message``: the message is coerced (with langchain-core installed, to
    a ``BaseMessage`` through ``convert_to_messages``, as LangGraph does; otherwise to a
    plain-dict message), must have an id (``ValueError`` otherwise), is streamed with the
    node's metadata when ``stream_mode`` includes ``"messages"``, and, unless ``state_key``
    is ``None``, is also written to that state key as part of the node's update. Returns the
    coerced message. Raises ``RuntimeError`` outside a running node.

    For token chunks and for streaming without touching the state, see
    ``stepgraph.stream.messages`` (``push_token``, ``push_message``).
    """
    task = current_task()
    if task is None:
        raise RuntimeError("push_message() must be called from inside a running graph node")
    if langchain_available():
        from langchain_core.messages import convert_to_messages

        msg = convert_to_messages([message])[0]
        mid = msg.id
    else:
        mid = message.get("id") if isinstance(message, dict) else None
        msg = to_message_dict(message) if mid else None
    if not mid:
        raise ValueError("Message ID is required")
    if state_key:
        channels = task.run.graph.channels
        if state_key not in channels:
            raise InvalidUpdateError(
                f"push_message(state_key={state_key!r}) in node '{task.name}': the state has no "
                f"key {state_key!r} (step {task.step}).",
                code="SG205",
                hint="pass the name of the state's messages key, or state_key=None to only "
                "stream the message",
            )

    _push(msg)
    if state_key:
        task.writes.append((state_key, msg))
    return msg

"""Let langchain-core tools return a stepgraph ``Command``.

A langchain-core tool invoked with a ``ToolCall`` wraps whatever it returns in a
``ToolMessage`` unless the value is a ``ToolOutputMixin``. LangGraph's ``Command`` inherits
that mixin; stepgraph's cannot at import time (``stepgraph.types`` must not import
langchain-core), so the mixin is added as a base of ``Command`` here, when the prebuilt
package (which needs langchain-core anyway) is imported. The effect is exactly LangGraph's:
``isinstance(command, ToolOutputMixin)`` is true and a tool's ``Command`` reaches the
``ToolNode`` unwrapped.
"""

from __future__ import annotations

from langchain_core.messages.tool import ToolOutputMixin

from stepgraph.types import Command

__all__ = ["command_is_tool_output", "ensure_command_is_tool_output"]


def command_is_tool_output() -> bool:
    """Whether ``stepgraph.types.Command`` is a langchain-core ``ToolOutputMixin``."""
    return issubclass(Command, ToolOutputMixin)


def ensure_command_is_tool_output() -> bool:
    """Add ``ToolOutputMixin`` to ``Command``'s bases once; returns whether it is one."""
    if not command_is_tool_output():
        try:
            Command.__bases__ = (*Command.__bases__, ToolOutputMixin)
        except TypeError:  # pragma: no cover - a layout python refuses to extend
            return False
    return True

"""Typed payloads of the Agent Inbox human-in-the-loop convention (``interrupt([request])``)."""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict

__all__ = ["ActionRequest", "HumanInterrupt", "HumanInterruptConfig", "HumanResponse"]


class HumanInterruptConfig(TypedDict):
    """Which answers the human may give."""

    allow_ignore: bool
    allow_respond: bool
    allow_edit: bool
    allow_accept: bool


class ActionRequest(TypedDict):
    """The action put to the human: a name and its arguments."""

    action: str
    args: dict


class HumanInterrupt(TypedDict):
    """The value passed to ``interrupt()``."""

    action_request: ActionRequest
    config: HumanInterruptConfig
    description: str | None


class HumanResponse(TypedDict):
    """The resume value: ``accept``/``ignore`` (args ``None``), ``response`` (str), ``edit``."""

    type: Literal["accept", "ignore", "response", "edit"]
    args: None | str | ActionRequest

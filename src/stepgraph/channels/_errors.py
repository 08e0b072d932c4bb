"""Error builders shared by the channels (kept off the hot paths: called only to raise)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from stepgraph.errors import InvalidUpdateError

ONE_VALUE_CODE = "SG201"
"""A single-value channel got several writes in one step."""
ONE_OVERWRITE_CODE = "SG202"
"""A reducer channel got several ``Overwrite`` writes in one step."""
UNKNOWN_NAME_CODE = "SG203"
"""A barrier channel got a name it does not wait for."""


def too_many_values(key: str, count: int) -> InvalidUpdateError:
    """The ``LastValue`` error: LangGraph's message, with a code and a hint."""
    return InvalidUpdateError(
        f"At key '{key}': Can receive only one value per step. "
        "Use an Annotated key to handle multiple values.",
        code=ONE_VALUE_CODE,
        hint=(
            f"{count} writes reached '{key}' in the same step; give it a reducer, e.g. "
            "Annotated[list, operator.add], or let only one node write it per step"
        ),
    )


def guard_violated(kind: str, key: str, count: int) -> InvalidUpdateError:
    """The error of ``EphemeralValue``/``UntrackedValue`` with ``guard=True``."""
    return InvalidUpdateError(
        f"At key '{key}': {kind}(guard=True) can receive only one value per step. "
        "Use guard=False if you want to store any one of multiple values.",
        code=ONE_VALUE_CODE,
        hint=f"{count} writes reached '{key}' in the same step",
    )


def too_many_overwrites(key: str) -> InvalidUpdateError:
    """The error of a second ``Overwrite`` to one reducer key in one step."""
    return InvalidUpdateError(
        f"At key '{key}': Can receive only one Overwrite value per super-step.",
        code=ONE_OVERWRITE_CODE,
        hint="let only one node return Overwrite(...) for this key per step",
    )


def unknown_name(key: str, value: Any, names: Iterable[Any]) -> InvalidUpdateError:
    """The error of a barrier write naming a node the barrier does not wait for."""
    shown = "{" + ", ".join(sorted(repr(n) for n in names)) + "}"
    return InvalidUpdateError(
        f"At key '{key}': Value {value} not in {shown}",
        code=UNKNOWN_NAME_CODE,
        hint="only the start nodes of a waiting edge may write its barrier channel",
    )

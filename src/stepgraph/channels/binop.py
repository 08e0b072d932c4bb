"""``BinaryOperatorAggregate``: the reducer channel of ``Annotated[T, reducer]`` keys."""

from __future__ import annotations

import collections.abc as cabc
import typing
from collections.abc import Callable, Sequence
from typing import Any, Generic, Self

import typing_extensions

from stepgraph.channels._errors import too_many_overwrites
from stepgraph.channels.base import BaseChannel, IdleKind, Value
from stepgraph.constants import MISSING, OVERWRITE_KEY
from stepgraph.errors import EmptyChannelError
from stepgraph.types import Overwrite

__all__ = ["BinaryOperatorAggregate", "get_overwrite", "initial_factory", "operators_equal"]

_new = object.__new__

_WRAPPERS = frozenset(
    {
        typing.Required,
        typing.NotRequired,
        typing_extensions.Required,
        typing_extensions.NotRequired,
        getattr(typing_extensions, "ReadOnly", typing.Required),
    }
)
"""Typed-dict qualifiers whose first argument is the real type."""

_CONCRETE: dict[Any, type] = {
    cabc.Sequence: list,
    cabc.MutableSequence: list,
    cabc.Set: set,
    cabc.MutableSet: set,
    cabc.Mapping: dict,
    cabc.MutableMapping: dict,
}
"""Abstract collection types and the concrete type that gives their empty value."""

_MAYBE_OVERWRITE = (Overwrite, dict)


def initial_factory(typ: Any) -> Callable[[], Any]:
    """What to call for the empty value of ``typ``.

    Strips ``Annotated``/``Required``/``NotRequired``/``ReadOnly``, reduces generic aliases
    (``list[int]``, ``Sequence[str]``) to their origin and maps abstract collections to
    ``list``/``set``/``dict``. The result may still fail when called (``Optional[list]``,
    classes whose constructor needs arguments): the channel then starts ``MISSING``.
    """
    while True:
        origin = getattr(typ, "__origin__", None)
        if origin is None:
            break
        typ = typ.__args__[0] if origin in _WRAPPERS else origin
    try:
        return _CONCRETE.get(typ, typ)
    except TypeError:  # unhashable "type"
        return typ


def _initial(factory: Callable[[], Any]) -> Any:
    try:
        return factory()
    except Exception:
        return MISSING


def get_overwrite(value: Any) -> tuple[bool, Any]:
    """``(True, v)`` when ``value`` is an overwrite, else ``(False, None)``.

    Three forms are recognised: ``Overwrite(v)``, the single-key dict
    ``{"__overwrite__": v}``, and the JSON-erased dataclass
    ``{"type": "__overwrite__", "value": v}``.
    """
    if isinstance(value, Overwrite):
        return True, value.value
    if isinstance(value, dict):
        if len(value) == 1 and OVERWRITE_KEY in value:
            return True, value[OVERWRITE_KEY]
        if value.get("type") == OVERWRITE_KEY and "value" in value:
            return True, value["value"]
    return False, None


def operators_equal(a: Callable[..., Any], b: Callable[..., Any]) -> bool:
    """Reducer equality: any pairing with a lambda is equal (lambdas cannot be told
    apart reliably), otherwise the operators must be the same object."""
    if getattr(a, "__name__", None) == "<lambda>" or getattr(b, "__name__", None) == "<lambda>":
        return True
    return a is b


class BinaryOperatorAggregate(Generic[Value], BaseChannel[Value, Value, Value]):
    """Folds every write into the value with ``operator(value, write)``.

    The value starts as ``typ()`` (see ``initial_factory``) or ``MISSING``; while it is
    ``MISSING`` the first write is stored as is. An ``Overwrite`` write replaces the
    value, dropping what was folded before it in the step and ignoring the plain writes
    after it; a second ``Overwrite`` in one step raises ``InvalidUpdateError`` (``SG202``).
    Unlike LangGraph, an ``Overwrite`` is unwrapped even as the first write of an empty
    channel. A failing step leaves the value unchanged.
    """

    __slots__ = ("value", "operator", "_factory")

    def idle_kind(self) -> IdleKind:
        return "steady"

    def __init__(
        self, typ: Any, operator: Callable[[Value, Value], Value], *, key: str = ""
    ) -> None:
        super().__init__(typ, key)
        self.operator = operator
        self._factory = initial_factory(typ)
        self.value: Any = _initial(self._factory)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, BinaryOperatorAggregate) and operators_equal(
            self.operator, other.operator
        )

    def __repr__(self) -> str:
        name = getattr(self.operator, "__name__", repr(self.operator))
        return f"BinaryOperatorAggregate(key={self.key!r}, operator={name}, value={self.value!r})"

    @property
    def ValueType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of the stored value."""
        return self.typ

    @property
    def UpdateType(self) -> Any:  # noqa: N802 - LangGraph-compatible name
        """The type of one write."""
        return self.typ

    def copy(self) -> Self:
        """A channel with the same value object (reducers return new values)."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.operator = self.operator
        new._factory = self._factory
        new.value = self.value
        return new

    def checkpoint(self) -> Any:
        """The value itself, or ``MISSING``."""
        return self.value

    def from_checkpoint(self, checkpoint: Any) -> Self:
        """A channel holding ``checkpoint``; ``MISSING`` gives a fresh initial value."""
        new = _new(self.__class__)
        new.typ = self.typ
        new.key = self.key
        new.operator = self.operator
        new._factory = self._factory
        new.value = _initial(self._factory) if checkpoint is MISSING else checkpoint
        return new

    def update(self, values: Sequence[Value]) -> bool:
        """Fold this step's writes in order; True unless there were none."""
        if not values:
            return False
        value = self.value
        operator = self.operator
        overwritten = False
        for write in values:
            if isinstance(write, _MAYBE_OVERWRITE):
                is_overwrite, replacement = get_overwrite(write)
                if is_overwrite:
                    if overwritten:
                        raise too_many_overwrites(self.key)
                    overwritten = True
                    value = replacement
                    continue
            if overwritten:
                continue
            value = write if value is MISSING else operator(value, write)
        self.value = value
        return True

    def get(self) -> Value:
        """The folded value; ``EmptyChannelError`` while ``MISSING``."""
        value = self.value
        if value is MISSING:
            raise EmptyChannelError()
        return value

    def is_available(self) -> bool:
        """True unless the value is ``MISSING``."""
        return self.value is not MISSING

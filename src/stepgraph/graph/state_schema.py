"""State schemas -> channels: ``TypedDict``, dataclass and pydantic states, reducers, managed keys.

Each key becomes a channel: ``Annotated[T, reducer]`` a ``BinaryOperatorAggregate``, a
``BaseChannel`` in the metadata that channel, a ``ManagedValue`` a computed read-only key,
anything else a ``LastValue``. A schema without annotations is one ``__root__`` channel.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Iterator
from typing import Any, ClassVar, get_type_hints

import typing_extensions

from stepgraph._introspect import derived, signature, type_hints
from stepgraph.channels import BaseChannel, BinaryOperatorAggregate, LastValue
from stepgraph.constants import ROOT
from stepgraph.errors import GraphDefinitionError
from stepgraph.managed import ManagedValue

_QUALIFIERS = (
    typing.Required,
    typing.NotRequired,
    typing_extensions.Required,
    typing_extensions.NotRequired,
    getattr(typing_extensions, "ReadOnly", typing.Required),
)


class SchemaInfo:
    """What one schema contributes: channels, managed keys, and how to build node input."""

    __slots__ = ("schema", "channels", "managed", "keys", "is_root", "kind", "defaults")

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self.channels: dict[str, BaseChannel] = {}
        self.managed: dict[str, type[ManagedValue]] = {}
        self.kind = schema_kind(schema)
        hints = _hints(schema)
        if hints is None:
            self.is_root = True
            self.channels[ROOT] = channel_for(schema)
        else:
            self.is_root = False
            for key, typ in hints.items():
                kind = managed_of(typ)
                if kind is not None:
                    self.managed[key] = kind
                else:
                    self.channels[key] = channel_for(typ)
        self.keys: tuple[str, ...] = (*self.channels, *self.managed)

    # LangGraph's ``builder.schemas[schema]`` is a dict of key -> channel or managed value;
    # code written for it (langgraph-swarm checks ``"active_agent" in ...``) reads it so.
    def __contains__(self, key: object) -> bool:
        return key in self.channels or key in self.managed

    def __getitem__(self, key: str) -> Any:
        if key in self.channels:
            return self.channels[key]
        return self.managed[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys)

    def __len__(self) -> int:
        return len(self.keys)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def items(self) -> list[tuple[str, Any]]:
        return [(k, self[k]) for k in self.keys]


def schema_kind(schema: Any) -> str:
    """``"typeddict"``, ``"pydantic"``, ``"dataclass"``, ``"class"`` or ``"root"``."""
    if isinstance(schema, type):
        if hasattr(schema, "model_fields") and hasattr(schema, "model_validate"):
            return "pydantic"
        if hasattr(schema, "__fields__") and hasattr(schema, "parse_obj"):
            return "pydantic"
        if dataclasses.is_dataclass(schema):
            return "dataclass"
        if typing_extensions.is_typeddict(schema):
            return "typeddict"
        if getattr(schema, "__annotations__", None):
            return "class"
    return "root"


def _hints(schema: Any) -> dict[str, Any] | None:
    kind = schema_kind(schema)
    if kind == "root":
        return None
    try:
        hints = get_type_hints(schema, include_extras=True)
    except Exception as exc:  # forward refs that cannot be resolved
        hints = dict(getattr(schema, "__annotations__", {}))
        unresolved = [k for k, v in hints.items() if isinstance(v, (str, typing.ForwardRef))]
        if unresolved:
            raise GraphDefinitionError(
                f"Cannot resolve the type hints of {getattr(schema, '__name__', schema)!r} "
                f"(keys {unresolved}): {exc}",
                code="SG111",
                hint="define the schema at module level, or import the names its string "
                "annotations use in that module",
            ) from exc
    hints = {k: v for k, v in hints.items() if getattr(v, "__origin__", None) is not ClassVar
             and v is not ClassVar}
    if kind == "pydantic":
        fields = getattr(schema, "model_fields", None) or getattr(schema, "__fields__", {})
        hints = {k: v for k, v in hints.items() if k in fields}
    elif kind == "dataclass":
        names = {f.name for f in dataclasses.fields(schema)}
        hints = {k: v for k, v in hints.items() if k in names}
    return hints


def _strip_qualifiers(typ: Any) -> Any:
    while getattr(typ, "__origin__", None) in _QUALIFIERS:
        typ = typ.__args__[0]
    return typ


def managed_of(typ: Any) -> type[ManagedValue] | None:
    typ = _strip_qualifiers(typ)
    meta = getattr(typ, "__metadata__", None)
    if meta and isinstance(meta[-1], type) and issubclass(meta[-1], ManagedValue):
        return meta[-1]
    return None


def channel_for(typ: Any) -> BaseChannel:
    """The channel a key annotated ``typ`` gets."""
    typ = _strip_qualifiers(typ)
    meta = getattr(typ, "__metadata__", None)
    if meta:
        outer = typ.__origin__
        for item in meta:  # a channel anywhere in the metadata (others may follow it)
            if isinstance(item, BaseChannel):
                with_type = getattr(item, "with_type", None)  # a DeltaChannel takes the key's type
                return with_type(outer) if with_type is not None else item
            if isinstance(item, type) and issubclass(item, BaseChannel):
                return item(outer)
        last = meta[-1]
        if callable(last):
            check_reducer(last)
            return BinaryOperatorAggregate(outer, last)
    return LastValue(typ)


def check_reducer(fn: Callable[..., Any]) -> None:
    """A reducer takes exactly two positional parameters (keyword-only extras allowed)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    params = list(sig.parameters.values())
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(positional) != 2 or any(p.kind == p.VAR_POSITIONAL for p in params):
        got = ", ".join(
            ("*" if p.kind == p.VAR_POSITIONAL else "**" if p.kind == p.VAR_KEYWORD else "") + p.name
            for p in params
        )
        raise ValueError(f"Invalid reducer signature. Expected (a, b) -> c. Got ({got})")


def merge_channel(existing: dict[str, BaseChannel], key: str, channel: BaseChannel) -> None:
    """Add ``key`` from another schema: a later plain key never overrides, a clash raises."""
    current = existing.get(key)
    if current is None:
        existing[key] = channel
        return
    if isinstance(channel, LastValue) and type(channel) is LastValue:
        return
    if isinstance(current, LastValue) and type(current) is LastValue:
        existing[key] = channel
        return
    if current != channel:
        raise ValueError(f"Channel '{key}' already exists with a different type")


def make_mapper(info: SchemaInfo) -> Callable[[dict[str, Any]], Any] | None:
    """How to turn a node's input dict into its declared input type."""
    if info.kind in ("pydantic", "dataclass"):
        schema = info.schema
        return lambda values: schema(**values)
    return None


def input_schema_of(fn: Any) -> Any | None:
    """The class annotating a function's first parameter, if it has annotated fields."""
    try:
        return derived(fn, read_input_schema)
    except Exception:  # a failure is not remembered: a forward reference may resolve later
        return None


def read_input_schema(fn: Any) -> Any | None:
    """``input_schema_of`` read afresh: what reading the hints raises is raised."""
    target = fn
    if not (inspect.isfunction(target) or inspect.ismethod(target)):
        target = getattr(fn, "__call__", fn)  # noqa: B004
    params = list(signature(target).parameters.values())
    if not params:
        return None
    hint = type_hints(target, include_extras=False).get(params[0].name)
    if isinstance(hint, type) and schema_kind(hint) != "root":
        return hint
    return None

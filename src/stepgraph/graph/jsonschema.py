"""JSON schemas of state, input, output and context schemas (for servers and tools).

With pydantic installed they are pydantic's (a model's own, a ``TypedDict``'s through a
``TypeAdapter``, a dataclass or plain class as a model of its keys' channel types, so
LangGraph programs see the same schemas); without it they are built from type hints.
"""

from __future__ import annotations

import dataclasses
import types
from typing import Any, Union, get_args, get_origin, get_type_hints

_SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def _simple(tp: Any) -> str | None:
    try:
        return _SIMPLE.get(tp)
    except TypeError:  # a type hashing unhashable metadata (Annotated[..., DeltaChannel(...)])
        return None


def type_schema(tp: Any) -> dict[str, Any]:
    while getattr(tp, "__metadata__", None) or getattr(get_origin(tp), "_name", None) in (
        "NotRequired", "Required", "ReadOnly",
    ):
        tp = tp.__origin__ if getattr(tp, "__metadata__", None) else get_args(tp)[0]
    simple = _simple(tp)
    if simple is not None:
        return {"type": simple}
    origin = getattr(tp, "__origin__", None)
    if origin in (list, tuple, set, frozenset) or tp in (list, tuple, set):
        args = getattr(tp, "__args__", ())
        out: dict[str, Any] = {"type": "array"}
        if args and args[0] is not Ellipsis:
            out["items"] = type_schema(args[0])
        return out
    if origin is dict or tp is dict:
        return {"type": "object"}
    return {}


def schema_json(schema: Any) -> dict[str, Any]:
    """A JSON schema for ``schema``: pydantic's when available, else built from hints."""
    if hasattr(schema, "model_json_schema"):
        return schema.model_json_schema()
    from stepgraph.pregel.schemas import has_pydantic, type_jsonschema

    if has_pydantic():
        try:
            return type_jsonschema(schema)
        except Exception:  # a type pydantic cannot describe: fall back to the hints
            pass
    return hinted_schema(schema)


def state_jsonschema(schema: Any, keys: Any, channels: dict[str, Any], name: str) -> dict[str, Any]:
    """The JSON schema of a graph's input or output ``schema`` whose keys are ``keys``.

    A pydantic model or ``TypedDict`` gives its own schema; any other schema (a dataclass,
    a plain class, a root type) is described by its keys' channel update types, with the
    defaults a caller may leave out.
    """
    from stepgraph.channels.base import BaseChannel
    from stepgraph.constants import ROOT
    from stepgraph.graph.state_schema import schema_kind
    from stepgraph.pregel.schemas import fields_model, has_pydantic, root_model

    kind = schema_kind(schema)
    if kind in ("pydantic", "typeddict") or not has_pydantic():
        return schema_json(schema)
    keys = list(keys)
    try:
        if keys == [ROOT]:
            return root_model(name, channels[ROOT].UpdateType).model_json_schema()
        fields = {
            k: (channels[k].UpdateType, field_default(k, channels[k].UpdateType, schema))
            for k in keys
            if isinstance(channels.get(k), BaseChannel)
        }
        return fields_model(name, fields).model_json_schema()
    except Exception:  # a type pydantic cannot describe: fall back to the hints
        return hinted_schema(schema)


def field_default(key: str, typ: Any, schema: Any) -> Any:
    """The default a caller may omit ``key`` with (``...``: required): a dataclass field's
    default, ``None`` for an optional type, else required."""
    if dataclasses.is_dataclass(schema):
        for f in dataclasses.fields(schema):
            if f.name != key:
                continue
            if f.default is not dataclasses.MISSING and f.default is not Ellipsis:
                return f.default
            if f.default_factory is not dataclasses.MISSING:
                return f.default_factory()
    return None if _optional(typ) else ...


def hinted_schema(schema: Any) -> dict[str, Any]:
    """A JSON schema built from ``schema``'s type hints alone (no pydantic)."""
    try:
        hints = get_type_hints(schema, include_extras=True)
    except Exception:
        hints = getattr(schema, "__annotations__", {}) or {}
    if dataclasses.is_dataclass(schema):
        required = _dataclass_required(schema, hints)
    else:
        required = sorted(getattr(schema, "__required_keys__", ()))
    out: dict[str, Any] = {
        "title": getattr(schema, "__name__", "State"),
        "type": "object",
        "properties": {k: {"title": k.replace("_", " ").title(), **type_schema(v)} for k, v in hints.items()},
    }
    if required:
        out["required"] = required
    return out


def _optional(tp: Any) -> bool:
    if getattr(tp, "__metadata__", None):
        tp = tp.__origin__
    return get_origin(tp) in (Union, types.UnionType) and type(None) in get_args(tp)


def _dataclass_required(schema: Any, hints: dict[str, Any]) -> list[str]:
    """Dataclass fields a caller must give: no default (``...`` counts as none) and not
    ``Optional`` (an optional field without a default defaults to ``None``)."""
    out = []
    for f in dataclasses.fields(schema):
        has_default = f.default is not dataclasses.MISSING and f.default is not Ellipsis
        if has_default or f.default_factory is not dataclasses.MISSING:
            continue
        if f.default is dataclasses.MISSING and _optional(hints.get(f.name)):
            continue
        out.append(f.name)
    return out

"""Node outputs -> ``(key, value)`` updates: dicts, annotated objects, ``Command.update``."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any


def object_to_dict(obj: Any) -> dict[str, Any]:
    """Fields of a pydantic model or dataclass that were set or differ from their defaults."""
    fields = getattr(type(obj), "model_fields", None)
    if fields is not None:
        fields_set: set[str] = getattr(obj, "model_fields_set", set())
        out = {}
        for name, info in fields.items():
            value = getattr(obj, name)
            if name in fields_set or value is not None:
                out[name] = value
            elif info.is_required():
                out[name] = value
        return out
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    raise TypeError(f"Cannot read updates from {type(obj).__name__}")


def is_update_object(obj: Any) -> bool:
    return (hasattr(type(obj), "model_fields") and not isinstance(obj, type)) or (
        dataclasses.is_dataclass(obj) and not isinstance(obj, type)
    )


def update_as_tuples(update: Any) -> Sequence[tuple[str, Any]]:
    """``Command.update`` in any accepted form as a list of pairs."""
    if update is None:
        return []
    if isinstance(update, dict):
        return list(update.items())
    if isinstance(update, (list, tuple)) and all(
        isinstance(t, tuple) and len(t) == 2 and isinstance(t[0], str) for t in update
    ):
        return list(update)
    if is_update_object(update):
        return list(object_to_dict(update).items())
    return [("__root__", update)]

"""JSON encoding of graph values for the wire and for the server's own records.

Payloads become plain JSON: tuples and sets become lists, pydantic models (and LangChain
messages) their ``model_dump()``, dataclasses their fields. An ``Interrupt`` is
``{"value", "id", "response_schema"}`` in stream events and ``{"id", "value"}`` in thread
state, as the real server does. Uses orjson when installed, else the stdlib; a value orjson
cannot nest (it stops at 254 levels, while checkpoints hold up to 255 and responses wrap
them in a few more) is written by the stdlib encoder instead.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
import json
from collections.abc import Callable
from enum import Enum
from typing import Any

try:  # optional speed-up
    import orjson
except ImportError:  # pragma: no cover - exercised only without orjson
    orjson = None  # type: ignore[assignment]

__all__ = ["dumps", "jsonable", "loads"]


def _interrupt_fields(obj: Any, stream: bool) -> dict[str, Any] | None:
    if type(obj).__name__ != "Interrupt" or not hasattr(obj, "value") or not hasattr(obj, "id"):
        return None
    if stream:
        return {"value": obj.value, "id": obj.id, "response_schema": getattr(obj, "response_schema", None)}
    return {"id": obj.id, "value": obj.value}


def _make_default(stream: bool) -> Callable[[Any], Any]:
    def default(obj: Any) -> Any:
        if isinstance(obj, (datetime.datetime, datetime.date, datetime.time)):
            return obj.isoformat()  # orjson writes these itself; the stdlib fallback needs this
        found = _interrupt_fields(obj, stream)
        if found is not None:
            return found
        dump = getattr(obj, "model_dump", None)
        if callable(dump) and not isinstance(obj, type):
            return dump()
        if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
            return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
        if isinstance(obj, tuple):
            if hasattr(obj, "_asdict"):
                return obj._asdict()
            return list(obj)
        if isinstance(obj, (set, frozenset)):
            return list(obj)
        if isinstance(obj, Enum):
            return obj.value
        if isinstance(obj, (bytes, bytearray)):
            try:
                return obj.decode()
            except UnicodeDecodeError:
                return base64.b64encode(obj).decode()
        name = type(obj).__name__
        if name == "Send" and hasattr(obj, "node"):
            return {"node": obj.node, "input": getattr(obj, "arg", None)}
        if name == "Command":
            return {k: getattr(obj, k, None) for k in ("graph", "update", "resume", "goto")}
        for attr in ("to_dict", "dict"):
            fn = getattr(obj, attr, None)
            if callable(fn):
                try:
                    return fn()
                except Exception:  # noqa: BLE001 - fall through to str()
                    break
        return str(obj)

    return default


_STREAM_DEFAULT = _make_default(True)
_STATE_DEFAULT = _make_default(False)


def dumps(obj: Any, *, stream: bool = True) -> bytes:
    """Compact one-line JSON of ``obj`` (UTF-8 bytes).

    ``stream=False`` writes interrupts in the thread-state shape ``{"id", "value"}``.
    """
    default = _STREAM_DEFAULT if stream else _STATE_DEFAULT
    if orjson is not None:
        try:
            return orjson.dumps(
                obj,
                default=default,
                option=orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATACLASS,
            )
        except orjson.JSONEncodeError as exc:
            if "Recursion limit" not in str(exc):
                raise
    return json.dumps(obj, default=default, ensure_ascii=False, separators=(",", ":")).encode()


def loads(data: bytes | str) -> Any:
    """Parse JSON text."""
    if orjson is not None:
        return orjson.loads(data)
    return json.loads(data)


def jsonable(obj: Any, *, stream: bool = False) -> Any:
    """``obj`` as plain JSON data (dicts, lists, str, numbers, bool, None)."""
    return loads(dumps(obj, stream=stream))

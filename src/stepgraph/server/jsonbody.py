"""Decoding request JSON within limits: nesting depth, number range, valid UTF-8.

The checks run on the raw bytes before anything is built (a body nested 10 000 levels deep
costs a scan of its brackets, not a recursion), so no later step (validation, the JSON and
msgpack encoders, storage) ever meets a value it cannot handle:

* depth: string contents are blanked out, then the brackets are counted; the whole body,
  top-level object included, may nest ``max_depth`` levels;
* integers outside 64 bits are refused (orjson would silently turn them into floats, and
  neither the JSON nor the msgpack encoder can write them back);
* ``NaN``/``Infinity`` literals, floats that overflow to infinity, invalid UTF-8 and lone
  surrogate escapes are not JSON and are refused as such.
"""

from __future__ import annotations

import json
import re
from typing import Any

from stepgraph.server.codes import INVALID_JSON, JSON_TOO_DEEP, NUMBER_RANGE, coded
from stepgraph.server.errors import ApiError
from stepgraph.server.request_limits import DEFAULT_JSON_DEPTH, JSON_DEPTH_ENV

try:  # the server's encoder uses orjson when installed; decode the same way
    import orjson
except ImportError:  # pragma: no cover - exercised only without orjson
    orjson = None  # type: ignore[assignment]

__all__ = ["decode_json", "json_depth"]

_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+"', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_SQUARE = bytes.maketrans(b"{}", b"[]")
_LONG_INT = re.compile(rb"(?<![\w.+-])(?:-\d{19,}|\d{20,})(?![\w.])")
_DIGITS_TO_0 = bytes.maketrans(b"123456789", b"000000000")
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]", re.I)
_INT_MIN, _UINT_MAX = -(2**63), 2**64 - 1
_JSON_HINT = "Send one JSON document encoded as UTF-8 (NaN and Infinity are not JSON)."


def _bad_json(reason: str) -> ApiError:
    return ApiError(422, coded(INVALID_JSON, f"Request body is not valid JSON: {reason}.", _JSON_HINT))


def json_depth(skeleton: bytes, stop_at: int) -> int:
    """The bracket nesting of ``skeleton`` (JSON with strings blanked), up to ``stop_at + 1``.

    Each round deletes every innermost ``[]``/``{}`` pair (one C-speed pass), so a body
    nested ``d`` deep empties in ``d`` rounds; the rounds stop after ``stop_at + 1``.
    Unbalanced brackets (not JSON: the parser refuses them) count as deep as the rounds got.
    """
    brackets = skeleton.translate(_SQUARE, _NOT_BRACKETS)
    depth = 0
    while brackets:
        shorter = brackets.replace(b"[]", b"")
        if len(shorter) == len(brackets):
            return depth
        brackets = shorter
        depth += 1
        if depth > stop_at and brackets:
            return stop_at + 1
    return depth


def _check_numbers(skeleton: bytes) -> None:
    if skeleton.translate(_DIGITS_TO_0).find(b"0" * 19) < 0:  # the common case: none that long
        return
    for match in _LONG_INT.finditer(skeleton):
        value = int(match.group())
        if not _INT_MIN <= value <= _UINT_MAX:
            shown = match.group().decode()
            shown = shown if len(shown) <= 40 else f"{shown[:20]}...({len(shown)} digits)"
            raise ApiError(422, coded(
                NUMBER_RANGE, f"Request body holds the integer {shown}, outside the 64-bit range "
                              f"[{_INT_MIN}, {_UINT_MAX}].",
                "Send such numbers as strings, or as floats if precision does not matter."))


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"number {text} is infinity when parsed as a double")
    return value


def _stdlib_loads(raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _bad_json(f"invalid UTF-8 at byte {exc.start}") from None
    try:
        value = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    except ValueError as exc:
        raise _bad_json(str(exc)) from None
    if _SURROGATE.search(raw):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise _bad_json("a string holds a lone UTF-16 surrogate escape") from None
    return value


def decode_json(raw: bytes, *, max_depth: int = DEFAULT_JSON_DEPTH) -> Any:
    """Parse ``raw`` as JSON within the limits (``ApiError`` 422 with a coded detail otherwise)."""
    skeleton = _STRING.sub(b'""', raw)
    depth = json_depth(skeleton, max_depth)
    if depth > max_depth:
        raise ApiError(422, coded(
            JSON_TOO_DEEP, f"Request body nests more than {max_depth} levels deep (objects and arrays).",
            f"Flatten the data (send deep structures as a JSON string), or raise the limit with {JSON_DEPTH_ENV}."))
    _check_numbers(skeleton)
    if orjson is None:
        return _stdlib_loads(raw)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise _bad_json(str(exc).split(": line ")[0]) from None

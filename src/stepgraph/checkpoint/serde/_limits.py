"""Decode limits: what a blob may cost to read, and the bookkeeping that enforces it.

A checkpoint blob may have been written by someone with write access to the database, so the
decoder treats it as hostile input. Reading a blob of ``n`` bytes costs time and memory linear
in ``n``: no type a blob may name expands a few bytes into a large value (there is no
``range``, no repetition, no decompression in the serializer), and every remaining way to make
decoding super-linear is bounded here:

* **Nesting** (``max_depth``, ``max_object_depth``): containers and objects nested inside each
  other. Without a bound a few kilobytes of nested extension objects overflow the C stack of
  the msgpack library and kill the process.
* **Numbers** (``max_number_digits``, ``max_int_bits``, ``max_decimal_exponent``): converting a
  decimal string of ``d`` digits to an int costs ``O(d**2)``, ``Fraction("1e10000000")``
  computes a ten-million-digit power, and a ``Decimal`` with a huge exponent makes later
  arithmetic explode.
* **Hash collisions** (``max_hash_collisions``): ints, tuples, UUIDs, ``Decimal``... have
  hashes an attacker can compute, so a set or dict of many distinct values with one hash costs
  ``O(n**2)`` to build (112 KB of colliding tuple keys took 0.8 s, 1 MB about a minute).
* **Expansion** (``max_expansion``): where storage multiplies bytes (stored pieces inflated
  from deflate, a piece referenced several times), the result may be at most this many times
  the stored bytes (plus ``expansion_allowance``).

Every refusal is a ``SerializationError`` with code ``SG406`` naming the limit and how to
raise it. The defaults never refuse what stepgraph or LangGraph write for ordinary state.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, fields
from typing import Any

from stepgraph.checkpoint.serde.base import SG_CORRUPT, SG_LIMIT, SerializationError

__all__ = ["DEFAULT_LIMITS", "DecodeLimits", "DecodeState", "limit_error", "limits_of", "state"]


@dataclass(frozen=True, slots=True)
class DecodeLimits:
    """Bounds on what decoding one blob may cost (see the module docstring).

    Pass your own to ``JsonPlusSerializer(limits=DecodeLimits(...))`` to raise a bound for
    data you trust; each field's error message names it.
    """

    max_depth: int = 4096
    """Nested containers and objects in one blob (the msgpack libraries stop at 1024 levels
    inside one object, stepgraph writes at most 255; beyond a few thousand levels, nested
    objects overflow the C stack)."""
    max_object_depth: int = 100
    """Objects (extension types: dataclasses, models, messages...) nested inside each other."""
    max_number_digits: int = 4300
    """Digits of a number written in decimal (an int, a ``Decimal``'s coefficient, each part of
    a ``Fraction``); Python's own limit for ``int(str)`` is the same 4300."""
    max_int_bits: int = 1 << 16
    """Bits of an integer stored in hexadecimal (stepgraph's form for ints beyond 64 bits)."""
    max_decimal_exponent: int = 999_999
    """Largest ``Decimal`` exponent, either sign (the default decimal context's ``Emax``)."""
    max_hash_collisions: int = 64
    """Distinct values in one blob that may share one hash."""
    max_pattern_chars: int = 65536
    """Characters of regular expressions one blob may compile (compiling costs about a
    microsecond per character)."""
    max_expansion: int = 64
    """Stored pieces: inflated or repeated bytes per stored byte."""
    expansion_allowance: int = 1 << 20
    """Bytes any read may expand to regardless of ``max_expansion``."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if type(value) is not int or value < 1:
                raise ValueError(f"DecodeLimits.{f.name} must be a positive int, got {value!r}")


DEFAULT_LIMITS = DecodeLimits()


def limits_of(serde: Any) -> DecodeLimits:
    """The decode limits a serializer declares (``limits``), else the defaults."""
    found = getattr(serde, "limits", None)
    return found if isinstance(found, DecodeLimits) else DEFAULT_LIMITS


def limit_error(what: str, limit: str, value: int) -> SerializationError:
    """The SG406 error for a blob exceeding ``DecodeLimits.<limit>``."""
    return SerializationError(
        f"Refusing to decode a blob: {what} exceeds the decode limit {limit}={value}.",
        code=SG_LIMIT,
        hint=(
            "the blob may be hostile (written into the database by someone else); if it is "
            f"yours, raise the limit: JsonPlusSerializer(limits=DecodeLimits({limit}=...))"
        ),
    )


# Types whose hash is salted per process (str, bytes, datetimes), or identity-based: values
# of these cannot be made to collide on purpose, so they are not tracked.
_UNTRACKED: set[type] = {str, bytes, bool, type(None)}


def _untracked() -> set[type]:
    import datetime

    _UNTRACKED.update((datetime.datetime, datetime.date, datetime.time, datetime.timedelta))
    return _UNTRACKED


class DecodeState:
    """The budget of one top-level decode, shared by the nested decodes of its objects."""

    __slots__ = ("limits", "depth", "objects", "hashes", "collisions", "pattern_chars",
                 "verified", "blob_verified", "frames")

    def __init__(self, limits: DecodeLimits) -> None:
        self.limits = limits
        self.depth = 0
        """Nesting charged by the objects being decoded (each its own payload's depth)."""
        self.objects = 0
        """Extension objects being decoded inside each other."""
        self.hashes: dict[int, Any] = {}
        self.collisions: dict[int, int] = {}
        self.pattern_chars = 0
        self.verified = False
        """Inside an object whose whole nesting was measured (no more charging needed)."""
        self.blob_verified = False
        """The whole blob's nesting was measured: nothing more needs charging."""
        self.frames: list[Any] = []
        """The bytes of the objects being decoded, outermost first."""

    def track(self, obj: Any) -> None:
        """Record a decoded object whose hash an attacker could choose; refuse a flood."""
        cls = type(obj)
        hash_fn = cls.__hash__
        if hash_fn is None or hash_fn is object.__hash__ or cls in _UNTRACKED:
            return
        try:
            h = hash(obj)
        except Exception:  # unhashable contents: cannot be a key either
            return
        first = self.hashes.setdefault(h, obj)
        if first is obj:
            return
        try:
            same = bool(first == obj)
        except Exception:
            same = False
        if same:
            return
        count = self.collisions.get(h, 0) + 1
        self.collisions[h] = count
        if count >= self.limits.max_hash_collisions:
            raise limit_error(
                f"{count + 1} distinct values sharing one hash (a hash-flooding pattern)",
                "max_hash_collisions",
                self.limits.max_hash_collisions,
            )


_untracked()
_local = threading.local()


def state() -> DecodeState | None:
    """The decode in progress on this thread, if any."""
    return getattr(_local, "state", None)


def enter(limits: DecodeLimits) -> tuple[DecodeState, bool]:
    """The state of this thread's decode; ``True`` when the caller started it."""
    current = getattr(_local, "state", None)
    if current is not None:
        return current, False
    current = _local.state = DecodeState(limits)
    return current, True


def leave() -> None:
    """End this thread's top-level decode."""
    _local.state = None


# ------------------------------------------------------------------ number strings

_DECIMAL = re.compile(
    r"[+-]?(?:(?P<int>\d*)(?:\.(?P<frac>\d*))?(?:[eE](?P<exp>[+-]?\d+))?"
    r"|inf(?:inity)?|s?nan\d*)",
    re.IGNORECASE,
)
_FRACTION = re.compile(r"\s*[+-]?(?P<num>\d+)(?:/(?P<den>\d+))?\s*")


def check_decimal(text: Any, limits: DecodeLimits) -> None:
    """Refuse a ``Decimal`` string with too many digits or too large an exponent."""
    if type(text) is not str:
        if type(text) is int:
            check_int(text, limits)
            return
        if type(text) is float:
            return
        raise _bad_arg("decimal.Decimal", text)
    if len(text) > limits.max_number_digits + 64:
        raise limit_error(f"a Decimal of {len(text)} characters", "max_number_digits",
                          limits.max_number_digits)
    match = _DECIMAL.fullmatch(text.strip())
    if match is None:
        raise _bad_arg("decimal.Decimal", text)
    digits = len(match.group("int") or "") + len(match.group("frac") or "")
    if digits > limits.max_number_digits:
        raise limit_error(f"a Decimal of {digits} digits", "max_number_digits",
                          limits.max_number_digits)
    exp = match.group("exp")
    if exp is not None and (
        len(exp.lstrip("+-0")) > 18 or abs(int(exp)) > limits.max_decimal_exponent
    ):
        raise limit_error(f"a Decimal with exponent {_clip(exp or '')}", "max_decimal_exponent",
                          limits.max_decimal_exponent)


def check_fraction(text: Any, limits: DecodeLimits) -> None:
    """Refuse a ``Fraction`` string that is not ``n`` or ``n/d`` of bounded digits."""
    if type(text) is int:
        check_int(text, limits)
        return
    if type(text) is not str:
        raise _bad_arg("fractions.Fraction", text)
    if len(text) > 2 * limits.max_number_digits + 8:
        raise limit_error(f"a Fraction of {len(text)} characters", "max_number_digits",
                          limits.max_number_digits)
    match = _FRACTION.fullmatch(text)
    if match is None:
        raise _bad_arg("fractions.Fraction", text, "expected 'n' or 'n/d' (as str(Fraction))")
    for part in (match.group("num"), match.group("den") or ""):
        if len(part) > limits.max_number_digits:
            raise limit_error(f"a Fraction part of {len(part)} digits", "max_number_digits",
                              limits.max_number_digits)


def check_int_text(text: Any, base: Any, limits: DecodeLimits) -> None:
    """Refuse ``int(text, base)`` arguments that are not a bounded number string."""
    if type(text) is not str or type(base) is not int or not (base == 0 or 2 <= base <= 36):
        raise _bad_arg("builtins.int", [text, base])
    if base in (2, 4, 8, 16, 32):  # linear to convert: bounded by bits
        if len(text) > 4 * limits.max_int_bits + 64:  # (before copying it below)
            raise limit_error(f"an integer of {len(text)} characters", "max_int_bits",
                              limits.max_int_bits)
        digits = text.strip().lstrip("+-")
        if digits[:2].lower() in ("0x", "0o", "0b"):
            digits = digits[2:]
        digits = digits.replace("_", "").lstrip("0")
        per_digit = base.bit_length() - 1
        lead = int(digits[0], base).bit_length() if digits and digits[0].isalnum() else 0
        bits = max(len(digits) - 1, 0) * per_digit + lead
        if bits > limits.max_int_bits:
            raise limit_error(f"an integer of {bits} bits", "max_int_bits", limits.max_int_bits)
    elif len(text) > limits.max_number_digits + 64 or (
        len(text.strip().lstrip("+-").replace("_", "")) > limits.max_number_digits
    ):
        raise limit_error(f"an integer of {len(text)} decimal digits", "max_number_digits",
                          limits.max_number_digits)


def check_int(value: int, limits: DecodeLimits) -> None:
    """Refuse an int wider than ``max_int_bits``."""
    if value.bit_length() > limits.max_int_bits:
        raise limit_error(f"an integer of {value.bit_length()} bits", "max_int_bits",
                          limits.max_int_bits)


def _clip(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[:n] + "..."


def _bad_arg(what: str, arg: Any, hint: str | None = None) -> SerializationError:
    return SerializationError(
        f"Corrupt blob: {what} cannot be rebuilt from {_clip(repr(arg), 120)}.",
        code=SG_CORRUPT,
        hint=hint,
    )

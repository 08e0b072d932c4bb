"""Decoded list elements, kept per saver and handed out as fresh clones.

A chat reads its whole message list at every turn, and decoding a message (the safe decoder,
then pydantic's ``model_construct``) costs far more than copying one. ``DecodedElements``
maps the exact stored bytes of a list element to the value once decoded from them (a private
*master* that is never handed out) and answers every later read of the same bytes with a
``clone`` of it: a new object graph that shares nothing mutable with the master or with any
earlier read, so a user mutating one run's output never changes another load.

Safety:

- **Keyed by content.** The key is the element's bytes themselves (not a row key or a
  version), so an entry can never be stale: whatever another process writes, the same bytes
  decode to the same value. Bytes are only ever decoded by the saver's serializer (the safe
  decoder: exact registered names, size and depth limits); a master is what it returned.
- **Only what can be cloned exactly.** ``clone`` knows plain containers, immutable atoms and
  pydantic v2 models without a custom ``model_post_init`` (copied the way
  ``BaseModel.__copy__`` does, but deeply); any other
  type anywhere in an element makes it ``Uncloneable``, and that element is decoded again at
  every read, as before.
- **Collector.** Copying a long list allocates many acyclic objects; the cyclic garbage
  collector is paused meanwhile (``PAUSE_FROM``) and left as it was found.
- **Bounded.** A byte budget (``_lru.SHARES["decoded"]``); an entry costs a multiple of
  its bytes (``COST_FACTOR``), an estimate of the decoded objects' size.
"""

from __future__ import annotations

import datetime
import decimal
import enum
import fractions
import re
import threading
import types
import uuid
from collections.abc import Callable
from typing import Any

from stepgraph._collector import pause, resume
from stepgraph.checkpoint._lru import ENTRY_OVERHEAD

__all__ = [
    "COST_FACTOR",
    "DecodedElements",
    "Maker",
    "Uncloneable",
    "array_header",
    "array_size",
    "clone",
    "maker",
]

COST_FACTOR = 8
"""Bytes a cached element is counted for, per byte of its encoding (its key included)."""
MIN_CACHED = 24
"""Smaller elements are decoded at every read (with the others, in one call): cheap enough."""


class Uncloneable(Exception):
    """The value holds a type ``clone`` does not copy exactly."""


_ATOMS: set[type] = {
    str, int, float, bool, type(None), bytes, complex,
    datetime.datetime, datetime.date, datetime.time, datetime.timedelta, datetime.timezone,
    uuid.UUID, decimal.Decimal, fractions.Fraction, re.Pattern,
}  # fmt: skip
"""Immutable types: a clone shares them (as equal decodes of them are interchangeable)."""
_MODELS: dict[type, bool] = {}
"""Pydantic model classes, by whether ``clone`` copies them (plain ``__dict__`` layout)."""


def _model_class(cls: type) -> bool:
    found = _MODELS.get(cls)
    if found is None:
        found = False
        try:
            from pydantic import BaseModel
        except ImportError:  # pragma: no cover - pydantic is a dependency
            BaseModel = None  # type: ignore[assignment,misc]  # noqa: N806
        if BaseModel is not None and issubclass(cls, BaseModel):
            base = set(BaseModel.__mro__)
            found = all(c.__dict__.get("__slots__", ()) == () for c in cls.__mro__ if c not in base)
            # (``model_construct`` runs a custom ``model_post_init``; a copy would not)
            found = found and getattr(cls, "__pydantic_post_init__", None) is None
        _MODELS[cls] = found
    return found


def _key(value: Any) -> None:
    """A dict key or set element must be immutable: an atom or a tuple of them."""
    t = type(value)
    if t in _ATOMS or isinstance(value, enum.Enum):
        return
    if t is tuple:
        for item in value:
            _key(item)
        return
    raise Uncloneable(t.__name__)


Maker = Callable[[], Any]
"""Returns a new copy of one master value at each call."""


def _const(value: Any) -> Maker:
    return lambda: value


def maker(value: Any) -> Maker:
    """A function returning a new deep copy of ``value`` at each call, sharing no mutable
    object with ``value`` or with other copies (``value`` itself must never be handed out:
    the maker may hold parts of it). Raises ``Uncloneable`` for a type it cannot copy
    exactly (see the module docstring).

    The copying is planned once: a list or dict of atoms is copied by its own ``copy``; a
    dict only re-makes its values that are not atoms; a pydantic model is rebuilt the way
    ``BaseModel.__copy__`` does it, with its field dict made by a maker."""
    t = type(value)
    if t in _ATOMS:
        return _const(value)
    if t is list:
        if all(type(v) in _ATOMS for v in value):
            return value.copy
        subs = [maker(v) for v in value]
        return lambda: [s() for s in subs]
    if t is dict:
        return _dict_maker(value)
    if t is tuple:
        subs = [maker(v) for v in value]
        if all(type(v) in _ATOMS for v in value):
            return _const(value)
        return lambda: tuple([s() for s in subs])
    if t is set or t is frozenset:
        for v in value:
            _key(v)
        return value.copy if t is set else _const(value)
    if _model_class(t):
        return _model_maker(value, t)
    if isinstance(value, enum.Enum):  # members are singletons: decoding returns the same one
        return _const(value)
    raise Uncloneable(t.__name__)


def _remade(value: dict[Any, Any]) -> list[tuple[Any, Maker]]:
    """The makers of a dict's values that are not atoms (its keys checked)."""
    for k in value:
        if type(k) not in _ATOMS:
            _key(k)
    return [(k, maker(v)) for k, v in value.items() if type(v) not in _ATOMS]


def _dict_maker(value: dict[Any, Any]) -> Maker:
    remake = _remade(value)
    if not remake:
        return value.copy

    def make() -> dict[Any, Any]:
        out = value.copy()
        for k, sub in remake:
            out[k] = sub()
        return out

    return make


_setattr = object.__setattr__
_SLOT_DESCRIPTORS = (types.MemberDescriptorType, types.GetSetDescriptorType)


def _slot_setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """``setter(obj, value)``: what ``object.__setattr__(obj, name, value)`` does for a slot
    (or ``__dict__``) of ``cls``, minus the name's lookup at every call: a copy of a message
    sets four of them."""
    for klass in cls.__mro__:
        found = klass.__dict__.get(name)
        if found is not None:
            if type(found) in _SLOT_DESCRIPTORS:
                return found.__set__  # type: ignore[no-any-return]
            break
    return lambda obj, value: _setattr(obj, name, value)  # pragma: no cover - not pydantic's


_Setters = tuple[Callable[[Any, Any], None], ...]
_SETTERS: dict[type, _Setters] = {}
"""Per model class: the setters of ``__dict__``, ``__pydantic_extra__``,
``__pydantic_fields_set__`` and ``__pydantic_private__`` (found once, not per master)."""


def _setters(cls: type) -> _Setters:
    found = _SETTERS.get(cls)
    if found is None:
        names = ("__dict__", "__pydantic_extra__", "__pydantic_fields_set__", "__pydantic_private__")
        found = _SETTERS[cls] = tuple(_slot_setter(cls, name) for name in names)
    return found


def _model_maker(value: Any, cls: type) -> Maker:
    extra = value.__pydantic_extra__
    private = getattr(value, "__pydantic_private__", None)
    fields_set = frozenset(value.__pydantic_fields_set__)
    new = cls.__new__
    set_dict, set_extra, set_fields_set, set_private = _setters(cls)
    if (extra is None or not _remade(extra)) and (private is None or not _remade(private)):
        # The usual model (a message: atoms or plain containers in its fields, an empty
        # ``extra``): made in one call, its field dict included.
        copy_fields = value.__dict__.copy
        remake = _remade(value.__dict__)
        copy_extra = None if extra is None else extra.copy
        copy_private = None if private is None else private.copy

        def make_plain() -> Any:
            obj = new(cls)
            out = copy_fields()
            for k, sub in remake:
                out[k] = sub()
            set_dict(obj, out)
            set_extra(obj, None if copy_extra is None else copy_extra())
            set_fields_set(obj, set(fields_set))
            set_private(obj, None if copy_private is None else copy_private())
            return obj

        return make_plain
    fields = _dict_maker(value.__dict__)
    extra_maker = None if extra is None else _dict_maker(extra)
    private_maker = None if private is None else _dict_maker(private)

    def make() -> Any:
        obj = new(cls)
        set_dict(obj, fields())
        set_extra(obj, None if extra_maker is None else extra_maker())
        set_fields_set(obj, set(fields_set))
        set_private(obj, None if private_maker is None else private_maker())
        return obj

    return make


def clone(value: Any) -> Any:
    """A deep copy of a decoded value that shares no mutable object with it (``maker``)."""
    return maker(value)()


def array_header(count: int) -> bytes:
    """The msgpack header of an array of ``count`` elements."""
    if count < 16:
        return bytes((0x90 | count,))
    if count < 0x10000:
        return b"\xdc" + count.to_bytes(2, "big")
    return b"\xdd" + count.to_bytes(4, "big")


def array_size(elements: list[bytes]) -> int:
    """Bytes of the msgpack array of the encoded ``elements``."""
    return len(array_header(len(elements))) + sum(map(len, elements))


PAUSE_FROM = 256
"""Lists of at least this many elements are made with the cyclic garbage collector paused
(``stepgraph._collector``): a copy of a message history allocates several container objects
per message, none in a cycle and all alive until the list is dropped, so every collection
they trigger finds nothing (on a chat of 1,000 messages, a third of a read)."""
_UNCLONEABLE = object()
"""Cached for bytes whose value ``clone`` cannot copy: decode them at every read."""


class DecodedElements:
    """List elements decoded before, by their exact bytes (see the module docstring).

    Reads take no lock (one ``dict.get``); inserts do, and drop the oldest entries while the
    cost of all is over ``budget`` (first in, first out: a chat reads all of its elements at
    every turn, so recency would not tell them apart)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.spent = 0
        self._map: dict[bytes, tuple[Any, int]] = {}
        self._uncloneable = 0
        """Entries whose value is ``_UNCLONEABLE`` (none: a read skips looking for them)."""
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._map)

    def _put(self, key: bytes, value: Any, cost: int) -> None:
        if cost > self.budget:
            return
        with self._lock:
            old = self._map.pop(key, None)
            if old is not None:
                self._drop(old)
            self._map[key] = (value, cost)
            self.spent += cost
            self._uncloneable += value is _UNCLONEABLE
            while self.spent > self.budget:
                self._drop(self._map.pop(next(iter(self._map))))

    def _drop(self, entry: tuple[Any, int]) -> None:
        self.spent -= entry[1]
        self._uncloneable -= entry[0] is _UNCLONEABLE

    def load(self, elements: list[bytes], loads_array: Callable[[bytes], Any]) -> list[Any]:
        """The values of the msgpack-encoded ``elements`` of a list, in order.

        Elements seen before are made from their masters; the others are decoded together,
        as one msgpack array, by ``loads_array`` (the serializer), and become masters.
        A long list is made with the cyclic garbage collector paused (``PAUSE_FROM``)."""
        if len(elements) < PAUSE_FROM:
            return self._load(elements, loads_array)
        pause()
        try:
            return self._load(elements, loads_array)
        finally:
            resume()

    def _load(self, elements: list[bytes], loads_array: Callable[[bytes], Any]) -> list[Any]:
        get = self._map.get
        found_all = list(map(get, elements))
        if None not in found_all and (
            not self._uncloneable or all(f[0] is not _UNCLONEABLE for f in found_all)
        ):
            return [f[0]() for f in found_all]  # the usual read: every element seen before
        # (a chat's usual read: all seen before but the last turn's few)
        dropped = _UNCLONEABLE
        out: list[Any] = [None if f is None or f[0] is dropped else f[0]() for f in found_all]
        misses = [i for i, f in enumerate(found_all) if f is None or f[0] is dropped]
        if not misses:
            return out
        body = [elements[i] for i in misses]
        decoded = loads_array(array_header(len(body)) + b"".join(body))
        if type(decoded) is not list or len(decoded) != len(body):
            raise ValueError("a list's elements decoded to something else")
        for i, data, value in zip(misses, body, decoded, strict=True):
            if len(data) < MIN_CACHED:
                out[i] = value
                continue
            try:
                make = maker(value)  # the decoded value is the master: never handed out
            except (Uncloneable, RecursionError):  # (RecursionError: too deep to plan)
                out[i] = value
                self._put(data, _UNCLONEABLE, len(data) + ENTRY_OVERHEAD)
                continue
            out[i] = make()
            self._put(data, make, COST_FACTOR * len(data) + ENTRY_OVERHEAD)
        return out

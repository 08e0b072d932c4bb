"""The allow-list: which classes a checkpoint blob may name, and how a name is resolved.

A msgpack blob names classes as ``(module, qualname)`` pairs. Unlike LangGraph, stepgraph never
imports or calls whatever a blob names: ``TypeRegistry.resolve`` returns the class only when one
of these rules allows it, and raises ``SerializationError`` (code ``SG401``) otherwise.

1. **Built in**: value types of the standard library (tuple, set, frozenset, deque, OrderedDict,
   Counter, datetime/date/time/timedelta/timezone, ZoneInfo, UUID, Decimal, Fraction, complex,
   big ints, pathlib paths, ``re.compile``, ipaddress types), every builtin exception class,
   stepgraph's ``Send``/``Interrupt``/``Overwrite``/``Command`` (also under their ``langgraph.*``
   names, so LangGraph blobs load), and classes under ``langchain_core.messages`` and
   ``langchain_core.documents``.
2. **Registered by the application**: ``serde.register(Cls)``, ``allowed_types=[...]``, or
   ``register_type(Cls)`` for every serializer in the process.
3. **Allowed modules**: ``allowed_modules=["myapp"]`` allows classes (never functions) of
   ``myapp`` and its submodules; ``allowed_msgpack_modules=[("mod", "Name")]`` allows one name.
4. **Seen by this serializer**: dataclasses, pydantic models, NamedTuples and Enums that this
   serializer instance serialized in this process are registered automatically, so a graph that
   saves and then loads its own state needs no configuration. After a restart, register them.
5. ``allowed_msgpack_modules=True`` allows any importable class (unsafe; only for trusted data).
"""

from __future__ import annotations

import builtins
import importlib
from collections.abc import Callable, Iterable
from typing import Any

from stepgraph.checkpoint.serde.base import (
    SG_CORRUPT,
    SG_NOT_ALLOWED,
    SerializationError,
)

__all__ = [
    "EXT_CONSTRUCTOR_KW_ARGS",
    "EXT_CONSTRUCTOR_POS_ARGS",
    "EXT_CONSTRUCTOR_SINGLE_ARG",
    "EXT_METHOD_SINGLE_ARG",
    "EXT_NUMPY_ARRAY",
    "EXT_PYDANTIC_V1",
    "EXT_PYDANTIC_V2",
    "SAFE_METHODS",
    "SerializedException",
    "TRUSTED_MODULES",
    "TypeRegistry",
    "decode_surrogates",
    "register_type",
]

# msgpack extension codes; the payload is a msgpack array ``[module, name, argument, ...]``.
# The layout is LangGraph's, so blobs written by LangGraph's JsonPlusSerializer load here.
EXT_CONSTRUCTOR_SINGLE_ARG = 0  # cls(arg)
EXT_CONSTRUCTOR_POS_ARGS = 1  # cls(*args)
EXT_CONSTRUCTOR_KW_ARGS = 2  # cls(**kwargs); dataclasses also restore init=False fields
EXT_METHOD_SINGLE_ARG = 3  # getattr(cls, method)(arg), method in SAFE_METHODS
EXT_PYDANTIC_V1 = 4  # [module, name, fields, "construct", fields_set]
EXT_PYDANTIC_V2 = 5  # [module, name, fields, "model_construct", fields_set]
EXT_NUMPY_ARRAY = 6  # written by LangGraph; not supported

SAFE_METHODS = frozenset(
    {"fromisoformat", "fromhex", "model_construct", "construct", "model_validate"}
)
"""Class methods a blob may ask to call (only on an allowed class)."""

TRUSTED_MODULES = ("langchain_core.messages", "langchain_core.documents")
"""Module prefixes whose classes are allowed without registration."""

Encoder = Callable[[Any], Any]
Decoder = Callable[[Any], Any]
_Key = tuple[str, str]

_THIS_MODULE = __name__


class SerializedException(Exception):
    """Stands in for a saved exception whose class is neither builtin nor registered.

    ``str(exc)`` is the original ``repr`` (for instance ``"MyError('boom')"``, what LangGraph
    returns as a plain string) and ``type_name`` the original ``module.QualName``. Builtin
    exceptions (``ValueError``, ``ConnectionError``, ...) and registered exception classes come
    back as themselves instead.
    """

    def __init__(self, type_name: str, text: str) -> None:
        super().__init__(type_name, text)
        self.type_name = type_name
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"SerializedException({self.type_name!r}, {self.text!r})"


def decode_surrogates(data: bytes) -> str:
    """Rebuild a string holding lone surrogates (msgpack strings must be valid UTF-8)."""
    return bytes(data).decode("utf-8", "surrogatepass")


def _key_of(cls: Any) -> _Key:
    return cls.__module__, cls.__qualname__


_STDLIB: dict[_Key, Any] | None = None


def _stdlib_table() -> dict[_Key, Any]:
    """Built-in allow-list, built on first use so importing stepgraph stays cheap."""
    global _STDLIB
    if _STDLIB is not None:
        return _STDLIB
    import collections
    import datetime
    import decimal
    import fractions
    import ipaddress
    import pathlib
    import re
    import uuid
    import zoneinfo

    table: dict[_Key, Any] = {}
    for cls in (
        tuple, set, frozenset, int, complex, dict, list,
        collections.deque, collections.OrderedDict, collections.Counter,
        datetime.datetime, datetime.date, datetime.time, datetime.timedelta, datetime.timezone,
        zoneinfo.ZoneInfo, uuid.UUID, decimal.Decimal, fractions.Fraction,
        pathlib.Path, pathlib.PosixPath, pathlib.WindowsPath,
        pathlib.PurePath, pathlib.PurePosixPath, pathlib.PureWindowsPath,
        ipaddress.IPv4Address, ipaddress.IPv4Interface, ipaddress.IPv4Network,
        ipaddress.IPv6Address, ipaddress.IPv6Interface, ipaddress.IPv6Network,
        SerializedException,
    ):  # fmt: skip
        table[_key_of(cls)] = cls
    table[("re", "compile")] = re.compile
    table[(_THIS_MODULE, "decode_surrogates")] = decode_surrogates
    for name, obj in vars(builtins).items():
        if isinstance(obj, type) and issubclass(obj, BaseException):
            table[("builtins", name)] = obj
    _STDLIB = table
    return table


# Names resolved by importing stepgraph's own modules (and LangGraph's names for them).
_LAZY: dict[_Key, _Key] = {}
for _name in ("Send", "Interrupt", "Overwrite", "Command"):
    _LAZY[("stepgraph.types", _name)] = ("stepgraph.types", _name)
    _LAZY[("langgraph.types", _name)] = ("stepgraph.types", _name)
_LAZY[("langgraph.constants", "Send")] = ("stepgraph.types", "Send")
for _name in ("Item", "SearchItem"):
    _LAZY[("stepgraph.store.base", _name)] = ("stepgraph.store.base", _name)
    _LAZY[("langgraph.store.base", _name)] = ("stepgraph.store.base", _name)

_GLOBAL_CLASSES: dict[_Key, Any] = {}
_GLOBAL_CODECS: dict[type, tuple[Encoder | None, Decoder | None]] = {}


def register_type(
    cls: type, *, encoder: Encoder | None = None, decoder: Decoder | None = None
) -> type:
    """Allow ``cls`` in every serializer of this process (usable as a class decorator).

    ``encoder(obj)`` / ``decoder(payload)`` make plain classes serializable; they are not needed
    for dataclasses, pydantic models, NamedTuples, Enums and exceptions.
    """
    for key in _keys_for(cls):
        _GLOBAL_CLASSES[key] = cls
    if encoder is not None or decoder is not None:
        _GLOBAL_CODECS[cls] = (encoder, decoder)
    return cls


def _keys_for(cls: type) -> tuple[_Key, ...]:
    if not isinstance(cls, type):
        raise TypeError(f"expected a class, got {cls!r}")
    if cls.__qualname__ == cls.__name__:
        return ((cls.__module__, cls.__name__),)
    return (cls.__module__, cls.__qualname__), (cls.__module__, cls.__name__)


def _clip(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def not_allowed_error(module: str, name: str) -> SerializationError:
    """The SG401 error for a blob naming ``module.name``."""
    short = _clip(name.rsplit(".", 1)[-1], 80)
    return SerializationError(
        f"Refusing to deserialize {_clip(module)}.{_clip(name)}: the class is not in this "
        "serializer's allow-list, so it was neither imported nor called.",
        code=SG_NOT_ALLOWED,
        hint=(
            f"if you trust this type, allow it with serde.register({short}), "
            f"JsonPlusSerializer(allowed_types=[{short}]) or "
            f"JsonPlusSerializer(allowed_modules=[{_clip(module.split('.')[0], 80)!r}])"
        ),
    )


class TypeRegistry:
    """Which ``(module, qualname)`` names a blob may use, and custom codecs for plain classes."""

    __slots__ = ("_classes", "_codecs", "_modules", "_names", "_cache", "allow_all")

    def __init__(
        self,
        types: Iterable[type] = (),
        *,
        modules: Iterable[str] = (),
        names: Iterable[tuple[str, str]] = (),
        allow_all: bool = False,
    ) -> None:
        self._classes: dict[_Key, Any] = {}
        self._codecs: dict[type, tuple[Encoder | None, Decoder | None]] = {}
        self._modules: tuple[str, ...] = TRUSTED_MODULES
        self._names: set[_Key] = set()
        self._cache: dict[_Key, Any] = {}
        self.allow_all = allow_all
        for cls in types:
            self.register(cls)
        self.allow_modules(*modules)
        self.allow_names(*names)

    def register(
        self, cls: type, *, encoder: Encoder | None = None, decoder: Decoder | None = None
    ) -> type:
        """Allow ``cls``; optionally give a plain class an ``encoder``/``decoder`` pair."""
        for key in _keys_for(cls):
            self._classes[key] = cls
            self._cache.pop(key, None)
        if encoder is not None or decoder is not None:
            self._codecs[cls] = (encoder, decoder)
        return cls

    def allow_modules(self, *prefixes: str) -> None:
        """Allow the classes of these modules and their submodules."""
        for prefix in prefixes:
            if not isinstance(prefix, str) or not prefix:
                raise TypeError(f"module prefix must be a non-empty str, got {prefix!r}")
            if prefix not in self._modules:
                self._modules += (prefix,)

    def allow_names(self, *pairs: tuple[str, str]) -> None:
        """Allow single ``(module, qualname)`` names; they are imported on first use."""
        for pair in pairs:
            if len(pair) != 2 or not all(isinstance(part, str) for part in pair):
                raise TypeError(f"expected a (module, name) pair, got {pair!r}")
            self._names.add((pair[0], pair[1]))

    def knows(self, cls: type) -> bool:
        """Whether ``cls`` was registered here or globally (the built-in list aside)."""
        key = _key_of(cls)
        return self._classes.get(key) is cls or _GLOBAL_CLASSES.get(key) is cls

    @property
    def has_codecs(self) -> bool:
        """Whether any custom codec is registered (here or globally)."""
        return bool(self._codecs) or bool(_GLOBAL_CODECS)

    def codec_for(self, cls: type) -> tuple[Encoder | None, Decoder | None] | None:
        """The custom ``(encoder, decoder)`` registered for exactly ``cls``, if any."""
        codec = self._codecs.get(cls)
        return codec if codec is not None else _GLOBAL_CODECS.get(cls)

    def copy(self) -> TypeRegistry:
        """An independent registry with the same rules and registrations."""
        new = TypeRegistry(allow_all=self.allow_all)
        new._classes = dict(self._classes)
        new._codecs = dict(self._codecs)
        new._modules = self._modules
        new._names = set(self._names)
        return new

    def resolve(self, module: Any, name: Any) -> Any:
        """Return the allowed class (or function) named ``module.name``, else raise SG401."""
        key = (module, name)
        try:
            hit = self._cache.get(key)
        except TypeError:  # unhashable parts: not a name this serializer wrote
            hit = None
        if hit is not None:
            return hit
        if type(module) is not str or type(name) is not str:
            raise SerializationError(
                f"Corrupt blob: expected a (module, name) pair of strings, got "
                f"({_clip(repr(module))}, {_clip(repr(name))}).",
                code=SG_CORRUPT,
            )
        obj = self._classes.get(key)
        if obj is None:
            obj = _GLOBAL_CLASSES.get(key)
        if obj is None:
            obj = _stdlib_table().get(key)
        if obj is None and key in _LAZY:
            obj = _import_class(*_LAZY[key])
        if obj is None and (self.allow_all or key in self._names or self._module_allowed(module)):
            obj = _import_class(module, name)
        if obj is None:
            raise not_allowed_error(module, name)
        self._cache[key] = obj
        return obj

    def _module_allowed(self, module: str) -> bool:
        return any(module == p or module.startswith(p + ".") for p in self._modules)


def _import_class(module: str, name: str) -> type | None:
    """Import ``module`` and return its class ``name`` (dotted qualname); None if not a class."""
    if "<" in name:  # "<locals>": not reachable by import
        return None
    try:
        obj: Any = importlib.import_module(module)
    except ImportError as exc:
        raise SerializationError(
            f"Cannot import module {_clip(module)!r} named in the blob: {exc}",
            code=SG_CORRUPT,
            hint="install the package that defines the saved class",
        ) from exc
    for part in name.split("."):
        obj = getattr(obj, part, None)
    return obj if isinstance(obj, type) else None

"""The allow-list: which classes a checkpoint blob may name, and how a name is resolved.

A msgpack blob names classes as ``(module, qualname)`` pairs. stepgraph never imports, walks
or calls whatever a blob names: ``TypeRegistry.resolve`` looks the *exact* pair up in these
tables and returns a class only when one of them holds it, else raises ``SerializationError``
``SG401`` naming the pair (nothing was imported or called):

1. **Built in** (``_allowlist``): standard-library value types (tuple, set, frozenset, deque,
   OrderedDict, Counter, datetime/date/time/timedelta/timezone, ZoneInfo, UUID, Decimal,
   Fraction, complex, big ints, pathlib paths, ipaddress types, compiled patterns), every
   builtin exception class, stepgraph's ``Send``/``Interrupt``/``Overwrite``/``Command``/
   ``StateSnapshot``/``PregelTask``/``TimeoutPolicy`` and store ``Item``/``SearchItem``/``GetOp``
   (also under their ``langgraph.*`` names, so LangGraph blobs load), and langchain-core's
   message classes and ``Document`` (LangGraph's curated list).
2. **Registered classes**: ``serde.register(Cls)``, ``allowed_types=[...]``,
   ``allowed_msgpack_modules=[Cls]``, or ``register_type(Cls)`` for every serializer in the
   process; each class is allowed under its ``(__module__, __qualname__)`` and
   ``(__module__, __name__)``.
3. **Registered names**: ``allowed_msgpack_modules=[("mod", "Name")]`` (LangGraph's form; also
   ``allowed_json_modules``) allows exactly that name: ``mod`` is imported (it was named by the
   application, not by the blob) and ``Name`` must be a class whose own ``__module__`` and
   ``__qualname__`` are ``mod`` and ``Name``.
4. **Allowed modules**: ``allowed_modules=["myapp"]`` allows classes of ``myapp`` and its
   submodules that are *already imported*: a blob never causes an import here, and the class
   found must be defined in the module the blob names (so a re-exported or imported class,
   a function, a module or anything reached through attributes is refused).
5. **Seen by this serializer**: dataclasses, pydantic models, NamedTuples and Enums that this
   serializer instance serialized in this process are registered automatically, so a graph that
   saves and then loads its own state needs no configuration. After a restart, register them.
6. ``allowed_msgpack_modules=True`` allows any class by exact name, importing its module
   (unsafe: only for data you trust; rule 3's checks still apply).

Names under ``builtins``, ``os``, ``subprocess``, ``sys``, ``importlib``, ``operator``,
``functools``, ``logging``, ``pickle`` and a few other modules are never resolved by rules 3, 4
and 6, whatever the configuration; register the class object itself if you really mean it.
Calling a resolved class is also constrained: method extensions may only call
``fromisoformat`` on datetime types and the construction methods of pydantic models, and the
arguments of built-in types are checked against ``DecodeLimits`` first.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable
from typing import Any

from stepgraph.checkpoint.serde._allowlist import builtin_table, decode_surrogates, fixed_import
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

SAFE_METHODS = frozenset({"fromisoformat", "model_construct", "construct", "model_validate"})
"""Class methods a blob may ask to call: ``fromisoformat`` on ``datetime.datetime``/``date``/
``time`` only, the others on pydantic models only (see ``method_allowed``)."""

_MODEL_METHODS = frozenset({"model_construct", "construct", "model_validate"})

NEVER_MODULES = frozenset({
    "builtins", "os", "posix", "nt", "subprocess", "sys", "importlib", "operator", "functools",
    "itertools", "code", "codeop", "pickle", "_pickle", "copyreg", "marshal", "shelve", "ctypes",
    "shutil", "socket", "runpy", "pty", "types", "inspect", "io", "_io", "logging", "gc",
    "threading", "_thread", "multiprocessing", "signal", "tempfile", "webbrowser", "asyncio",
    "concurrent", "pdb", "bdb", "trace", "cProfile", "profile", "timeit", "zipimport",
    "pkgutil", "site", "sysconfig", "ensurepip", "venv", "http", "urllib", "ftplib", "smtplib",
    "telnetlib", "xmlrpc", "selectors", "select", "mmap", "fcntl", "resource", "platform",
    "getpass", "glob", "fileinput", "zipfile", "tarfile", "sqlite3", "dbm", "weakref", "abc",
    "contextlib", "dataclasses", "typing", "enum", "copy", "stepgraph",
})
"""Top-level packages whose names no string rule (3, 4, 6) ever resolves: the ones whose
classes run code, touch files or processes, or reach other objects when constructed
(stepgraph's own value types have exact built-in entries instead)."""

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


def method_allowed(target: Any, method: Any) -> bool:
    """Whether a blob may call ``target.method``: the fixed pairs stepgraph and LangGraph write."""
    if type(method) is not str:
        return False
    if method == "fromisoformat":
        import datetime

        return target in (datetime.datetime, datetime.date, datetime.time)
    return method in _MODEL_METHODS and is_model_class(target)


def is_model_class(target: Any) -> bool:
    """A pydantic (v2 or v1) model class."""
    return isinstance(target, type) and (
        hasattr(target, "__pydantic_fields__") and hasattr(target, "model_construct")
        or hasattr(target, "__fields_set__") and hasattr(target, "construct")
        or hasattr(target, "__fields__") and hasattr(target, "construct")
    )


def _key_of(cls: Any) -> _Key:
    return cls.__module__, cls.__qualname__


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


def not_allowed_error(module: str, name: str, why: str = "") -> SerializationError:
    """The SG401 error for a blob naming ``module.name``."""
    short = _clip(name.rsplit(".", 1)[-1], 80)
    pair = f"({_clip(module, 120)!r}, {_clip(name, 120)!r})"
    what = f"{_clip(module)}.{_clip(name)}" if "." not in name else \
        f"{_clip(name)} of module {_clip(module)}"
    return SerializationError(
        f"Refusing to deserialize {what}: it is not a class in this "
        f"serializer's allow-list{why}, so nothing was imported or called.",
        code=SG_NOT_ALLOWED,
        hint=(
            f"if you trust this type, allow exactly it: serde.register({short}), "
            f"JsonPlusSerializer(allowed_msgpack_modules=[{short}]) or "
            f"JsonPlusSerializer(allowed_msgpack_modules=[{pair}])"
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
        self._modules: tuple[str, ...] = ()
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
        """Allow classes defined in these (already imported) modules and their submodules."""
        for prefix in prefixes:
            if not isinstance(prefix, str) or not prefix:
                raise TypeError(f"module prefix must be a non-empty str, got {prefix!r}")
            if prefix not in self._modules:
                self._modules += (prefix,)

    def allow_names(self, *pairs: tuple[str, str]) -> None:
        """Allow exact ``(module, qualname)`` class names; ``module`` is imported on first use."""
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
        """The allowed class named exactly ``module``/``name`` (see the module docstring);
        raises SG401 for any other name, SG403 for a name that is not two strings."""
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
            obj = builtin_table().get(key)
        if obj is None:
            obj = fixed_import(key)
        if obj is None and (key in self._names or self.allow_all):
            obj = _exact_class(module, name, importing=True)
        if obj is None and self._module_allowed(module):
            obj = _exact_class(module, name, importing=False)
            if obj is None and module not in sys.modules and _plausible(module, name):
                raise not_allowed_error(
                    module, name, f" (module {_clip(module, 80)!r} is allowed but not imported: "
                    "a blob never causes an import)"
                )
        if obj is None:
            raise not_allowed_error(module, name)
        self._cache[key] = obj
        return obj

    def _module_allowed(self, module: str) -> bool:
        return any(module == p or module.startswith(p + ".") for p in self._modules)


_MAX_NAME = 256


def _plausible(module: str, name: str) -> bool:
    """A dotted name of identifiers, of a sane length, outside ``NEVER_MODULES``."""
    if len(module) > _MAX_NAME or len(name) > _MAX_NAME:
        return False
    if not all(part.isidentifier() for part in module.split(".")):
        return False
    if not all(part.isidentifier() for part in name.split(".")):
        return False
    return module.split(".", 1)[0] not in NEVER_MODULES


def _exact_class(module: str, name: str, *, importing: bool) -> type | None:
    """The class defined in ``module`` under the qualified name ``name``, else ``None``.

    Only ``vars()`` are read (no attribute hooks run), only classes are stepped through
    (``Outer.Inner``), and the result must report ``module``/``name`` as its own
    ``__module__``/``__qualname__``: a re-exported class, a module, a function or a builtin
    never matches. ``importing`` imports ``module`` when it is not loaded yet (only for names
    the application allowed exactly, never for a module prefix).
    """
    if not _plausible(module, name):
        return None
    mod = sys.modules.get(module)
    if mod is None:
        if not importing:
            return None
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            raise SerializationError(
                f"Cannot import module {_clip(module)!r} named in the blob: {exc}",
                code=SG_CORRUPT,
                hint="install the package that defines the saved class",
            ) from exc
    parts = name.split(".")
    obj = vars(mod).get(parts[0]) if hasattr(mod, "__dict__") else None
    for part in parts[1:]:
        if not isinstance(obj, type):
            return None
        obj = vars(obj).get(part)
    if not isinstance(obj, type):
        return None
    if obj.__module__ != module or obj.__qualname__ != name:
        return None
    return obj

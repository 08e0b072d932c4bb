"""``JsonPlusSerializer``: the default checkpoint serializer (msgpack, allow-listed, no pickle).

Type tags written by ``dumps_typed``:

* ``"null"``: ``None`` (empty bytes);
* ``"bytes"`` / ``"bytearray"``: the raw bytes;
* ``"msgpack"``: everything else, with extension types (see ``_codec``).

``loads_typed`` also reads ``"json"`` blobs written by old LangGraph versions, under the same
allow-list and limits (an ``lc: 2`` constructor names an exact allowed class; an ``lc: 1``
langchain object must be one of langchain-core's message classes or ``Document``).
``"pickle"`` blobs are always refused: stepgraph never unpickles.

stepgraph always behaves as LangGraph does with ``LANGGRAPH_STRICT_MSGPACK=true``: setting the
variable to a false value does not loosen the allow-list (a warning says so); pass
``allowed_msgpack_modules=True`` to trust every class of your own data.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable
from typing import Any, Literal

from stepgraph.checkpoint.serde import _limits
from stepgraph.checkpoint.serde._allowlist import LANGCHAIN_CLASSES, check_args, fixed_import
from stepgraph.checkpoint.serde._codec import MsgpackCodec
from stepgraph.checkpoint.serde._limits import DecodeLimits, check_int_text, limit_error
from stepgraph.checkpoint.serde.base import (
    SG_CONFIG,
    SG_CORRUPT,
    SG_NOT_ALLOWED,
    SerializationError,
)
from stepgraph.checkpoint.serde.types import (
    Decoder,
    Encoder,
    SerializedException,
    TypeRegistry,
    method_allowed,
    not_allowed_error,
)

__all__ = ["JsonPlusSerializer"]

AllowList = Iterable["type | tuple[str, ...] | str"]
_EMPTY = b""
logger = logging.getLogger("stepgraph.checkpoint.serde")
_warned_strict_env = False


def _warn_strict_env() -> None:
    """Say once that ``LANGGRAPH_STRICT_MSGPACK=false`` does not loosen stepgraph."""
    global _warned_strict_env
    value = os.environ.get("LANGGRAPH_STRICT_MSGPACK")
    if _warned_strict_env or value is None or value.strip().lower() in ("1", "true", "yes"):
        return
    _warned_strict_env = True
    logger.warning(
        "LANGGRAPH_STRICT_MSGPACK=%r is ignored: stepgraph's serializer is always strict (only "
        "allow-listed classes are rebuilt). Trust more classes with "
        "JsonPlusSerializer(allowed_msgpack_modules=[...]) or, for trusted data only, "
        "allowed_msgpack_modules=True.",
        value,
    )


class JsonPlusSerializer:
    """msgpack serializer that only rebuilds allow-listed classes.

    Args:
        allowed_types: classes a blob may name, besides the built-in list.
        allowed_modules: module prefixes whose classes a blob may name (``"myapp"`` covers
            ``myapp.models``); functions are never allowed this way.
        allowed_msgpack_modules: LangGraph's spelling; entries may be classes, ``(module,
            name)`` pairs or module prefixes. ``True`` allows *any* importable class: only
            for data you trust.
        allowed_json_modules: the same for legacy ``"json"`` blobs (one allow-list serves both).
        auto_register: allow dataclasses, pydantic models, NamedTuples and Enums once this
            instance has serialized one of them (default True).
        pickle_fallback: accepted for LangGraph compatibility; ``True`` is refused (SG400).
        registry: use this ``TypeRegistry`` instead of a new one.
        backend: ``"ormsgpack"`` or ``"msgpack"``; default: ormsgpack when installed.
        limits: what decoding one blob may cost (``DecodeLimits``); refusals raise SG406.
    """

    def __init__(
        self,
        *,
        allowed_types: Iterable[type] = (),
        allowed_modules: Iterable[str] = (),
        allowed_msgpack_modules: AllowList | Literal[True] | None = None,
        allowed_json_modules: AllowList | Literal[True] | None = None,
        auto_register: bool = True,
        pickle_fallback: bool = False,
        registry: TypeRegistry | None = None,
        backend: str | None = None,
        limits: DecodeLimits | None = None,
    ) -> None:
        _warn_strict_env()
        if pickle_fallback:
            raise SerializationError(
                "pickle_fallback=True is not supported: stepgraph never pickles or unpickles.",
                code=SG_CONFIG,
                hint="register the classes you store (serde.register(Cls)) or give them a "
                "codec: serde.register(Cls, encoder=..., decoder=...)",
            )
        self._registry = registry if registry is not None else TypeRegistry()
        for cls in allowed_types:
            self._registry.register(cls)
        self._registry.allow_modules(*allowed_modules)
        for extra in (allowed_msgpack_modules, allowed_json_modules):
            _apply_allowlist(self._registry, extra)
        if limits is not None and not isinstance(limits, DecodeLimits):
            raise SerializationError(
                f"limits must be a DecodeLimits, got {type(limits).__name__}.", code=SG_CONFIG
            )
        self._codec = MsgpackCodec(
            self._registry, auto_register=auto_register, backend=backend, limits=limits
        )
        self._backend_name = backend

    @property
    def limits(self) -> DecodeLimits:
        """The decode limits of this serializer."""
        return self._codec.limits

    @property
    def registry(self) -> TypeRegistry:
        """The allow-list this serializer resolves class names with."""
        return self._registry

    def register(
        self, *types: type, encoder: Encoder | None = None, decoder: Decoder | None = None
    ) -> None:
        """Allow ``types`` in blobs; ``encoder``/``decoder`` make a plain class serializable.

        ``encoder(obj)`` returns any serializable value and ``decoder(value)`` rebuilds the
        object; without them ``Cls(value)`` is called on the way back.
        """
        for cls in types:
            self._registry.register(cls, encoder=encoder, decoder=decoder)
            self._codec.forget(cls)

    def allow_modules(self, *prefixes: str) -> None:
        """Allow the classes of these modules (and their submodules) in blobs."""
        self._registry.allow_modules(*prefixes)

    def with_msgpack_allowlist(self, extra: AllowList | Literal[True]) -> JsonPlusSerializer:
        """A new serializer with this one's allow-list plus ``extra`` (LangGraph's API)."""
        registry = self._registry.copy()
        _apply_allowlist(registry, extra)
        return JsonPlusSerializer(
            registry=registry,
            auto_register=self._codec.auto_register,
            backend=self._backend_name,
            limits=self._codec.limits,
        )

    # ------------------------------------------------------------------ typed API

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serialize ``obj`` to ``(type_tag, data)``."""
        if obj is None:
            return "null", _EMPTY
        cls = type(obj)
        if cls is bytes:
            return "bytes", obj
        if cls is bytearray:
            return "bytearray", bytes(obj)
        return "msgpack", self._codec.pack(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Rebuild the value of a typed blob; raises ``SerializationError`` if not allowed."""
        type_, payload = data
        if type_ == "msgpack":
            return self._codec.loads(payload)
        if type_ == "null":
            return None
        if type_ == "bytes":
            return bytes(payload)
        if type_ == "bytearray":
            return bytearray(payload)
        if type_ == "json":
            return self.loads(payload)
        if type_ == "pickle":
            raise SerializationError(
                "Refusing to load a 'pickle' blob: stepgraph never unpickles.",
                code=SG_NOT_ALLOWED,
                hint="re-save the value with a serializer that writes msgpack",
            )
        raise SerializationError(
            f"Unknown serialization type {type_!r}.",
            code=SG_CORRUPT,
            hint="the blob was written by another serializer; load it with that one",
        )

    # ------------------------------------------------------------------ legacy JSON

    def loads(self, data: bytes | str) -> Any:
        """Read a legacy ``"json"`` blob (LangGraph's ``lc`` constructor format)."""
        limits = self._codec.limits
        current, top = _limits.enter(limits)
        try:
            return json.loads(data, object_hook=self._revive, parse_int=self._parse_int)
        except json.JSONDecodeError as exc:
            raise SerializationError(f"Corrupt JSON blob: {exc}", code=SG_CORRUPT) from exc
        except RecursionError:
            raise limit_error(
                "JSON nested deeper than Python's recursion limit", "max_depth", limits.max_depth
            ) from None
        except (UnicodeDecodeError, TypeError) as exc:
            raise SerializationError(f"Corrupt JSON blob: {exc}", code=SG_CORRUPT) from exc
        finally:
            if top:
                _limits.leave()

    def _parse_int(self, text: str) -> int:
        check_int_text(text, 10, self._codec.limits)
        try:
            return int(text)
        except ValueError as exc:  # Python's own digit limit, when set lower than ours
            raise limit_error(
                f"an integer of {len(text)} digits ({exc})",
                "max_number_digits",
                self._codec.limits.max_number_digits,
            ) from None

    def _revive(self, value: dict[str, Any]) -> Any:
        lc = value.get("lc")
        if value.get("type") != "constructor" or not value.get("id"):
            return value
        if lc == 2:
            obj = self._revive_constructor(value)
        elif lc == 1:
            obj = _revive_langchain(value)
        else:
            return value
        current = _limits.state()
        if current is not None:
            current.track(obj)
        return obj

    def _revive_constructor(self, value: dict[str, Any]) -> Any:
        ident = value["id"]
        if (
            not isinstance(ident, list)
            or len(ident) < 2
            or not all(isinstance(p, str) for p in ident)
        ):
            raise SerializationError(
                f"Corrupt JSON constructor id {str(ident)[:200]!r}.", code=SG_CORRUPT
            )
        module, name = ".".join(ident[:-1]), ident[-1]
        args = value.get("args") or []
        kwargs = value.get("kwargs") or {}
        if type(args) is not list or type(kwargs) is not dict:
            raise SerializationError(
                f"Corrupt JSON constructor {module}.{name}: args must be a list, kwargs an object.",
                code=SG_CORRUPT,
            )
        method = value.get("method")
        if module == "builtins" and name in ("bytes", "bytearray") and method == "fromhex":
            if len(args) != 1 or type(args[0]) is not str:
                raise SerializationError("Corrupt JSON bytes constructor.", code=SG_CORRUPT)
            try:
                raw = bytes.fromhex(args[0])
            except ValueError as exc:
                raise SerializationError(f"Corrupt JSON bytes: {exc}", code=SG_CORRUPT) from None
            return raw if name == "bytes" else bytearray(raw)
        target = self._registry.resolve(module, name)
        limits = self._codec.limits
        if kwargs:  # no built-in type with checked arguments takes keywords
            check_args(target, 2, kwargs, limits)
        elif len(args) == 1:
            check_args(target, 0, args[0], limits)
        else:
            check_args(target, 1, args, limits)
        methods = method if isinstance(method, list) else [method]
        last: Exception | None = None
        for step in methods:
            if step is not None and not method_allowed(target, step):
                raise SerializationError(
                    f"Refusing to call method {str(step)[:80]!r} named in the blob.",
                    code=SG_NOT_ALLOWED,
                    hint="a blob may only call fromisoformat on datetime types and the "
                    "construction methods of allowed pydantic models",
                )
            func = target if step is None else getattr(target, step)
            try:
                return func(*args, **kwargs)
            except SerializationError:
                raise
            except Exception as exc:
                last = exc
        if isinstance(target, type) and issubclass(target, BaseException):
            return SerializedException(f"{module}.{name}", f"{name}{tuple(args)!r}")
        raise SerializationError(
            f"Could not rebuild {module}.{name} from the JSON blob: {last!r}", code=SG_CORRUPT
        )


_LANGCHAIN_BY_NAME = {name: key for key in LANGCHAIN_CLASSES for name in (key[1],)}
_LEGACY_NAMESPACES = (("langchain", "schema", "messages"), ("langchain_core", "messages"),
                      ("langchain", "schema", "document"), ("langchain_core", "documents"))  # fmt: skip


def _langchain_class(ident: list[Any]) -> Any:
    """The allowed langchain-core class an ``lc: 1`` id names (``None``: not allowed)."""
    if not all(type(p) is str for p in ident) or len(ident) < 2:
        return None
    key = (".".join(ident[:-1]), ident[-1])
    if key not in LANGCHAIN_CLASSES:  # a legacy or re-exported id: ["langchain", "schema", ...]
        known = _LANGCHAIN_BY_NAME.get(ident[-1])
        if known is None or tuple(ident[:-1]) not in _LEGACY_NAMESPACES:
            return None
        key = known
    return fixed_import(key)


def _revive_langchain(value: dict[str, Any]) -> Any:
    """Rebuild an ``lc: 1`` langchain-core object: only its message classes and ``Document``
    (the ids langchain-core itself maps to them), validated by their own constructor."""
    ident = value["id"]
    cls = _langchain_class(ident) if isinstance(ident, list) else None
    if cls is None:
        parts = [str(p) for p in ident] if isinstance(ident, list) else [str(ident)]
        raise not_allowed_error(".".join(parts[:-1]), parts[-1])
    kwargs = value.get("kwargs") or {}
    if type(kwargs) is not dict or not all(type(k) is str for k in kwargs):
        raise SerializationError(
            f"Corrupt lc object {cls.__qualname__}: bad kwargs.", code=SG_CORRUPT
        )
    try:
        return cls(**kwargs)
    except Exception as exc:
        raise SerializationError(
            f"Could not rebuild {cls.__qualname__} from the JSON blob: {exc!r}", code=SG_CORRUPT
        ) from exc


def _apply_allowlist(registry: TypeRegistry, extra: AllowList | Literal[True] | None) -> None:
    if extra is None:
        return
    if extra is True:
        registry.allow_all = True
        return
    if isinstance(extra, (str, bytes)) or not isinstance(extra, Iterable):
        raise SerializationError(
            f"Expected an iterable of classes, (module, name) pairs or module names, got "
            f"{extra!r}.",
            code=SG_CONFIG,
        )
    for item in extra:
        if isinstance(item, type):
            registry.register(item)
        elif isinstance(item, str):
            registry.allow_modules(item)
        elif (
            isinstance(item, (tuple, list))
            and len(item) >= 2
            and all(isinstance(part, str) for part in item)
        ):  # ("pkg.module", "Class") or LangGraph's ("pkg", "module", "Class")
            registry.allow_names((".".join(item[:-1]), item[-1]))
        else:
            raise SerializationError(
                f"Cannot allow {item!r}: expected a class, a (module, name) pair or a module name.",
                code=SG_CONFIG,
            )

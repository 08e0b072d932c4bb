"""``JsonPlusSerializer``: the default checkpoint serializer (msgpack, allow-listed, no pickle).

Type tags written by ``dumps_typed``:

* ``"null"``: ``None`` (empty bytes);
* ``"bytes"`` / ``"bytearray"``: the raw bytes;
* ``"msgpack"``: everything else, with extension types (see ``_codec``).

``loads_typed`` also reads ``"json"`` blobs written by old LangGraph versions, under the same
allow-list. ``"pickle"`` blobs are always refused: stepgraph never unpickles.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from stepgraph.checkpoint.serde._codec import MsgpackCodec
from stepgraph.checkpoint.serde.base import (
    SG_CONFIG,
    SG_CORRUPT,
    SG_NOT_ALLOWED,
    SerializationError,
)
from stepgraph.checkpoint.serde.types import (
    SAFE_METHODS,
    Decoder,
    Encoder,
    SerializedException,
    TypeRegistry,
    not_allowed_error,
)

__all__ = ["JsonPlusSerializer"]

AllowList = Iterable["type | tuple[str, ...] | str"]
_EMPTY = b""


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
    ) -> None:
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
        self._codec = MsgpackCodec(self._registry, auto_register=auto_register, backend=backend)
        self._backend_name = backend

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
        return "msgpack", self._codec.dumps(obj)

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
        try:
            return json.loads(data, object_hook=self._revive)
        except json.JSONDecodeError as exc:
            raise SerializationError(f"Corrupt JSON blob: {exc}", code=SG_CORRUPT) from exc

    def _revive(self, value: dict[str, Any]) -> Any:
        lc = value.get("lc")
        if lc == 2 and value.get("type") == "constructor" and value.get("id"):
            return self._revive_constructor(value)
        if lc == 1 and value.get("type") == "constructor" and value.get("id"):
            return _revive_langchain(value)
        return value

    def _revive_constructor(self, value: dict[str, Any]) -> Any:
        ident = value["id"]
        if not isinstance(ident, list) or not all(isinstance(p, str) for p in ident):
            raise SerializationError(f"Corrupt JSON constructor id {ident!r}.", code=SG_CORRUPT)
        module, name = ".".join(ident[:-1]), ident[-1]
        args = value.get("args") or ()
        kwargs = value.get("kwargs") or {}
        method = value.get("method")
        if module == "builtins" and name in ("bytes", "bytearray") and method == "fromhex":
            raw = bytes.fromhex(args[0])
            return raw if name == "bytes" else bytearray(raw)
        target = self._registry.resolve(module, name)
        methods = method if isinstance(method, list) else [method]
        last: Exception | None = None
        for step in methods:
            if step is not None and step not in SAFE_METHODS:
                raise SerializationError(
                    f"Refusing to call method {step!r} named in the blob.", code=SG_NOT_ALLOWED
                )
            func = target if step is None else getattr(target, step, None)
            if func is None:
                continue
            try:
                return func(*args, **kwargs)
            except Exception as exc:
                last = exc
        if isinstance(target, type) and issubclass(target, BaseException):
            return SerializedException(f"{module}.{name}", f"{name}{tuple(args)!r}")
        raise SerializationError(
            f"Could not rebuild {module}.{name} from the JSON blob: {last!r}", code=SG_CORRUPT
        )


def _revive_langchain(value: dict[str, Any]) -> Any:
    """Rebuild a langchain-core object (``lc: 1``); only langchain-core's own classes."""
    ident = value["id"]
    try:
        from langchain_core.load.load import Reviver
    except ImportError:
        raise not_allowed_error(".".join(map(str, ident[:-1])), str(ident[-1])) from None
    try:
        reviver = Reviver(allowed_objects="core")
    except TypeError:  # older langchain-core: restricted to its namespaces anyway
        reviver = Reviver()
    try:
        return reviver(value)
    except Exception as exc:
        err = not_allowed_error(".".join(map(str, ident[:-1])), str(ident[-1]))
        raise err from exc


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

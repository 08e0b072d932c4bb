"""Input, output and context schemas of a graph as pydantic models and JSON schemas.

``Pregel.input_schema`` is a pydantic model of what ``invoke`` takes: a root model of the
input channel's update type when the graph has one input channel, else a model with one
optional field per input channel (``output_schema`` likewise with value types). The
JSON schemas are those models' (``get_input_jsonschema``...). pydantic is imported only
when a schema is asked for; without it the JSON schemas come from type hints alone.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Union, get_args, get_origin, get_type_hints

from stepgraph.channels.base import BaseChannel
from stepgraph.config import RunnableConfig
from stepgraph.warnings import LangGraphDeprecatedSinceV10, deprecated_since

if TYPE_CHECKING:
    from stepgraph.pregel.main import Pregel

__all__ = ["SchemaAPI", "fields_model", "root_model", "type_jsonschema"]


def _pydantic() -> Any:
    try:
        import pydantic
    except ImportError as exc:  # pragma: no cover - pydantic is an optional dependency
        raise ImportError(
            "graph schemas as pydantic models need pydantic: pip install 'stepgraph[pydantic]'"
        ) from exc
    return pydantic


def has_pydantic() -> bool:
    try:
        import pydantic  # noqa: F401
    except ImportError:  # pragma: no cover
        return False
    return True


def root_model(name: str, type_: Any) -> Any:
    """A pydantic ``RootModel`` of ``type_`` whose JSON schema is titled ``name``."""
    return _root_model(name, type_)


@functools.lru_cache(maxsize=256)
def _root_model(name: str, type_: Any) -> Any:
    pydantic = _pydantic()

    def model_json_schema(cls: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        out = super(cls, cls).model_json_schema(*args, **kwargs)
        out["title"] = name
        return out

    namespace = {
        "__annotations__": {"root": type_},
        "model_config": pydantic.ConfigDict(arbitrary_types_allowed=True),
        "model_json_schema": classmethod(model_json_schema),
        "__module__": __name__,
    }
    return type(name, (pydantic.RootModel,), namespace)


def fields_model(name: str, fields: dict[str, tuple[Any, Any]]) -> Any:
    """A pydantic model named ``name`` with ``{field: (type, default)}`` (``...``: required).

    Names pydantic reserves (``_private``, ``schema``, ``json``...) become aliased fields,
    so the JSON schema still shows the graph's own key.
    """
    pydantic = _pydantic()
    reserved = {k for k in dir(pydantic.BaseModel) if not k.startswith("_")}
    defs: dict[str, Any] = {}
    for key, (typ, default) in fields.items():
        if key.startswith("_") or key in reserved:
            field = pydantic.Field(default, alias=key)
            defs[f"field_{key.lstrip('_')}_"] = (typ, field)
        else:
            defs[key] = (typ, default)
    config = pydantic.ConfigDict(arbitrary_types_allowed=True, protected_namespaces=(),
                                 populate_by_name=True)
    return pydantic.create_model(name, __config__=config, **defs)


def type_jsonschema(typ: Any) -> dict[str, Any]:
    """The JSON schema pydantic gives a type (a model, a ``TypedDict``, a dataclass...)."""
    if hasattr(typ, "model_json_schema"):
        return typ.model_json_schema()
    return _pydantic().TypeAdapter(typ).json_schema()


def _field_specs(pregel: Pregel, keys: Sequence[str], attr: str) -> dict[str, tuple[Any, Any]]:
    out: dict[str, tuple[Any, Any]] = {}
    for key in keys:
        channel = pregel.channels.get(key)
        if isinstance(channel, BaseChannel):
            out[key] = (getattr(channel, attr), None)
    return out


def _channel_type(pregel: Pregel, key: str, attr: str) -> Any:
    channel = pregel.channels.get(key)
    return getattr(channel, attr) if isinstance(channel, BaseChannel) else Any


def _fallback_jsonschema(name: str, typ: Any) -> dict[str, Any]:
    return {"title": name, **type_schema(typ)}


class SchemaAPI:
    """Mixin of ``Pregel``: its input/output/context schemas."""

    def get_name(self: Pregel, suffix: str | None = None, *, name: str | None = None) -> str:  # type: ignore[misc]
        """The graph's name, with ``suffix`` appended as langchain names runnables."""
        base = name or self.name or type(self).__name__
        if not suffix:
            return base
        if base[:1].isupper():
            return base + suffix.title()
        return f"{base}_{suffix.lower()}"

    @property
    def InputType(self: Pregel) -> Any:  # type: ignore[misc]  # noqa: N802 - LangGraph name
        if isinstance(self.input_channels, str):
            return _channel_type(self, self.input_channels, "UpdateType")
        return dict

    @property
    def OutputType(self: Pregel) -> Any:  # type: ignore[misc]  # noqa: N802 - LangGraph name
        if isinstance(self.output_channels, str):
            return _channel_type(self, self.output_channels, "ValueType")
        return dict

    def get_input_schema(self: Pregel, config: Any = None) -> Any:  # type: ignore[misc]
        """A pydantic model of the graph's input."""
        name = self.get_name("Input")
        if isinstance(self.input_channels, str):
            return root_model(name, self.InputType)
        keys = self.input_channels or list(self.channels)
        return fields_model(name, _field_specs(self, keys, "UpdateType"))

    def get_output_schema(self: Pregel, config: Any = None) -> Any:  # type: ignore[misc]
        """A pydantic model of the graph's output."""
        name = self.get_name("Output")
        if isinstance(self.output_channels, str):
            return root_model(name, self.OutputType)
        return fields_model(name, _field_specs(self, self.output_channels, "ValueType"))

    @property
    def input_schema(self) -> Any:
        return self.get_input_schema()

    @property
    def output_schema(self) -> Any:
        return self.get_output_schema()

    def get_input_jsonschema(self: Pregel, config: Any = None) -> dict[str, Any]:  # type: ignore[misc]
        """The JSON schema of the graph's input."""
        if not has_pydantic():  # pragma: no cover
            return _fallback_jsonschema(self.get_name("Input"), self.InputType)
        return self.get_input_schema(config).model_json_schema()

    def get_output_jsonschema(self: Pregel, config: Any = None) -> dict[str, Any]:  # type: ignore[misc]
        """The JSON schema of the graph's output."""
        if not has_pydantic():  # pragma: no cover
            return _fallback_jsonschema(self.get_name("Output"), self.OutputType)
        return self.get_output_schema(config).model_json_schema()

    def get_context_jsonschema(self: Pregel) -> dict[str, Any] | None:  # type: ignore[misc]
        """The JSON schema of the run ``context`` (``None`` without a ``context_schema``)."""
        return None if self.context_schema is None else schema_json(self.context_schema)

    def config_schema(self: Pregel, *, include: Sequence[str] | None = None) -> Any:  # type: ignore[misc]
        """Deprecated: a pydantic model with the ``context_schema`` as ``configurable``."""
        deprecated_since(LangGraphDeprecatedSinceV10, "`config_schema` is deprecated. Use "
                         "`get_context_jsonschema` for the relevant schema instead.")
        return self._config_model(include)

    def _config_model(self: Pregel, include: Sequence[str] | None) -> Any:  # type: ignore[misc]
        fields: dict[str, tuple[Any, Any]] = {}
        if self.context_schema is not None:
            fields["configurable"] = (self.context_schema, None)
        wanted = [k for k in include or () if k != "configurable"]
        for key, typ in get_type_hints(RunnableConfig).items():
            if key in wanted:
                fields[key] = (typ, None)
        return fields_model(self.get_name("Config"), fields)

    def get_config_jsonschema(self: Pregel, *, include: Sequence[str] | None = None) -> dict[str, Any]:  # type: ignore[misc]
        """Deprecated: the JSON schema of ``config_schema()``."""
        deprecated_since(LangGraphDeprecatedSinceV10, "`get_config_jsonschema` is deprecated. "
                         "Use `get_context_jsonschema` instead.")
        return self._config_model(include).model_json_schema()


# -- schemas from type hints alone (no pydantic) ----------------------------------------

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

    if has_pydantic():
        try:
            return type_jsonschema(schema)
        except Exception:  # a type pydantic cannot describe: fall back to the hints
            pass
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

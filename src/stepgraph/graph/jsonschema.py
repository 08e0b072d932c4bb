"""JSON schemas of a ``StateGraph``'s input and output schemas (for servers and tools).

With pydantic installed they are pydantic's (a model's own, a ``TypedDict``'s through a
``TypeAdapter``, a dataclass or plain class as a model of its keys' channel types, so
LangGraph programs see the same schemas); without it they are built from type hints
(``stepgraph.pregel.schemas.schema_json``).
"""

from __future__ import annotations

from typing import Any

from stepgraph.channels.base import BaseChannel
from stepgraph.constants import ROOT
from stepgraph.graph.state_schema import schema_kind
from stepgraph.pregel.schemas import (
    field_default,
    fields_model,
    has_pydantic,
    hinted_schema,
    root_model,
    schema_json,
)


def state_jsonschema(schema: Any, keys: Any, channels: dict[str, Any], name: str) -> dict[str, Any]:
    """The JSON schema of a graph's input or output ``schema`` whose keys are ``keys``.

    A pydantic model or ``TypedDict`` gives its own schema; any other schema (a dataclass,
    a plain class, a root type) is described by its keys' channel update types, with the
    defaults a caller may leave out.
    """
    kind = schema_kind(schema)
    if kind in ("pydantic", "typeddict") or not has_pydantic():
        return schema_json(schema)
    keys = list(keys)
    try:
        if keys == [ROOT]:
            return root_model(name, channels[ROOT].UpdateType).model_json_schema()
        fields = {
            k: (channels[k].UpdateType, field_default(k, channels[k].UpdateType, schema))
            for k in keys
            if isinstance(channels.get(k), BaseChannel)
        }
        return fields_model(name, fields).model_json_schema()
    except Exception:  # a type pydantic cannot describe: fall back to the hints
        return hinted_schema(schema)

"""``version="v2"`` parts typed as the graph's schema: a graph whose state (or output) schema
is a pydantic model or a dataclass streams its root ``values`` as instances of its output
schema, and the ``values`` of its root ``checkpoints``/``debug`` checkpoint payloads as
instances of its state schema (``invoke(..., version="v2")`` returns the typed value too).
A ``TypedDict`` state stays a dict; subgraph parts are left as they are.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from stepgraph.constants import ROOT, START

Mapper = Callable[[dict[str, Any]], Any]


def _mapper(schema: Any) -> Mapper | None:
    if not isinstance(schema, type):
        return None
    if dataclasses.is_dataclass(schema) or hasattr(schema, "model_fields"):
        return lambda values: schema(**values)
    return None


def mappers(graph: Any) -> tuple[Mapper | None, Mapper | None]:
    """(output mapper, state mapper) of a compiled ``StateGraph`` (``None``: untyped)."""
    builder = getattr(graph, "builder", None)
    if builder is None or tuple(getattr(graph, "state_keys", ())) == (ROOT,):
        return None, None
    return _mapper(getattr(builder, "output_schema", None)), _mapper(getattr(builder, "state_schema", None))


def _typed_checkpoint(payload: Any, mapper: Mapper) -> Any:
    """A checkpoint payload (or a debug ``checkpoint`` event) with typed ``values``; the first
    checkpoint (next is ``__start__``, the state not filled yet) is left as it is."""
    if not isinstance(payload, dict):
        return payload
    if payload.get("type") == "checkpoint" and isinstance(payload.get("payload"), dict):
        inner = _typed_checkpoint(payload["payload"], mapper)
        return payload if inner is payload["payload"] else {**payload, "payload": inner}
    values = payload.get("values")
    if isinstance(values, dict) and START not in payload.get("next", ()):
        return {**payload, "values": mapper(values)}
    return payload


def typed(mode: str, payload: Any, maps: tuple[Mapper | None, Mapper | None]) -> Any:
    """``payload`` of a root part of ``mode``, typed."""
    output_map, state_map = maps
    if mode == "values" and output_map is not None and isinstance(payload, dict):
        return output_map(payload)
    if mode in ("checkpoints", "debug") and state_map is not None:
        return _typed_checkpoint(payload, state_map)
    return payload

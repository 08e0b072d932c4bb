"""Shaping stream parts for the caller: a single mode, several modes, subgraphs, or v2 dicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stepgraph.constants import INTERRUPT

ALL_MODES = (
    "values", "updates", "checkpoints", "tasks", "debug", "messages", "custom", "tools", "events",
)


def normalize_modes(stream_mode: str | Sequence[str] | None, default: str) -> tuple[list[str], bool]:
    """(modes, single): ``single`` when the caller asked for one mode as a string."""
    if stream_mode is None:
        stream_mode = default
    if isinstance(stream_mode, str):
        modes, single = [stream_mode], True
    else:
        modes, single = list(dict.fromkeys(stream_mode)), False
    for mode in modes:
        if mode not in ALL_MODES:
            raise ValueError(f"Unknown stream mode {mode!r}; expected one of {ALL_MODES}")
    return modes, single


def shape(part: tuple[tuple[str, ...], str, Any], single: bool, subgraphs: bool, version: str,
          maps: Any = None) -> Any:
    """``maps``: the graph's v2 mappers (``stream/typed_v2.py``) typing its root parts."""
    ns, mode, payload = part
    if version == "v2":
        out: dict[str, Any] = {"type": mode, "ns": ns, "data": payload}
        interrupts: tuple[Any, ...] = ()
        if mode == "values" and isinstance(payload, dict) and INTERRUPT in payload:
            out["data"] = {k: v for k, v in payload.items() if k != INTERRUPT}
            interrupts = tuple(payload[INTERRUPT])
        if maps is not None and not ns:
            # lazy: keeps `import stepgraph.graph` lean
            from stepgraph.stream.typed_v2 import typed

            out["data"] = typed(mode, out["data"], maps)
        if mode == "values":
            out["interrupts"] = interrupts
        return out
    if subgraphs:
        return (ns, payload) if single else (ns, mode, payload)
    return payload if single else (mode, payload)

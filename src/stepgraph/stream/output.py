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


def shape(part: tuple[tuple[str, ...], str, Any], single: bool, subgraphs: bool, version: str) -> Any:
    ns, mode, payload = part
    if version == "v2":
        out: dict[str, Any] = {"type": mode, "ns": ns, "data": payload}
        if mode == "values":
            if isinstance(payload, dict) and INTERRUPT in payload:
                data = {k: v for k, v in payload.items() if k != INTERRUPT}
                out["data"] = data
                out["interrupts"] = tuple(payload[INTERRUPT])
            else:
                out["interrupts"] = ()
        return out
    if subgraphs:
        return (ns, payload) if single else (ns, mode, payload)
    return payload if single else (mode, payload)

"""A v2 stream part (``{"type", "ns", "data", "interrupts"?}``) as a ``ProtocolEvent``."""

from __future__ import annotations

import time
from typing import Any

from stepgraph.stream._types import ProtocolEvent


def now_ms() -> int:
    return int(time.time() * 1000)


def make_event(method: str, namespace: list[str], data: Any) -> ProtocolEvent:
    return {"type": "event", "method": method,
            "params": {"namespace": namespace, "timestamp": now_ms(), "data": data}}


def convert_to_protocol_event(part: Any) -> ProtocolEvent:
    event = make_event(part["type"], list(part["ns"]), part["data"])
    if "interrupts" in part:
        event["params"]["interrupts"] = part["interrupts"]
    return event

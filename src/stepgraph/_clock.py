"""The current UTC time as ``datetime.now(UTC).isoformat()`` writes it, made cheaply.

Every checkpoint carries such a timestamp. Formatting a ``datetime`` costs more than the
rest of the string: here the part up to the second is formatted once per second and the
microseconds are appended (``.ffffff``, left out when zero, as ``isoformat`` does).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

__all__ = ["iso_of_micros", "utc_now_iso"]

_last: tuple[int, str, str] = (-1, "", "")
"""``(whole second since the epoch, its text up to the seconds, that text + ".")`` of the
last time formatted (replaced whole, so threads read a consistent entry)."""
_time_ns = time.time_ns


def utc_now_iso() -> str:
    """``datetime.now(UTC).isoformat()``: ``YYYY-MM-DDTHH:MM:SS[.ffffff]+00:00``."""
    return iso_of_micros(_time_ns() // 1000)


def iso_of_micros(micros: int) -> str:
    """The ISO text of ``micros`` microseconds after the epoch, in UTC (as ``isoformat``)."""
    global _last
    second = micros // 1_000_000
    last = _last
    if last[0] != second:
        text = datetime.fromtimestamp(second, UTC).isoformat()[:-6]
        _last = last = (second, text, text + ".")
    fraction = micros - second * 1_000_000
    if fraction:
        return "%s%06d+00:00" % (last[2], fraction)  # noqa: UP031 - the cheapest format
    return last[1] + "+00:00"

"""Cron expressions and time zones: validation and the next firing time (``croniter``).

A schedule is read as ``croniter`` reads it (five fields, optionally a sixth for seconds, and
the ``@hourly``-style aliases); it is evaluated in the cron's IANA ``timezone`` (UTC when none,
as on LangGraph), so ``0 9 * * *`` in ``Europe/Paris`` fires at 09:00 Paris time across daylight
saving changes. Times are stored in UTC, ISO 8601 with ``+00:00`` and whole seconds, so their
text sorts as the times do.
"""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from stepgraph.server.errors import ApiError

__all__ = ["check_schedule", "check_timezone", "next_run", "parse_time", "utc_text"]


def _croniter() -> type:
    try:
        from croniter import croniter
    except ImportError:  # pragma: no cover - a dependency of the server extra
        raise ApiError(501, "Crons need the croniter package: pip install 'stepgraph[server]'") from None
    return croniter


def check_schedule(schedule: str) -> str:
    """``schedule`` when ``croniter`` can read it; 422 otherwise."""
    text = schedule.strip()
    if not text or not _croniter().is_valid(text):
        raise ApiError(422, f"Invalid cron schedule {schedule!r}: expected a cron expression such as "
                            "'*/5 * * * *' (minute hour day-of-month month day-of-week).")
    return text


def check_timezone(name: str | None) -> ZoneInfo | None:
    """The time zone named ``name`` (``None``: UTC); 422 for an unknown name."""
    if name is None:
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ApiError(422, f"Invalid timezone {name!r}: expected an IANA time zone name such as "
                            "'America/New_York'.") from None


def next_run(schedule: str, timezone: str | None, after: datetime, end_time: datetime | None = None,
             ) -> datetime | None:
    """The first firing of ``schedule`` strictly after ``after`` (UTC), or ``None`` when it would
    come after ``end_time``."""
    zone = check_timezone(timezone) or UTC
    start = after.astimezone(zone)
    found = _croniter()(schedule, start).get_next(datetime)
    if found.tzinfo is None:  # pragma: no cover - croniter keeps the start's zone
        found = found.replace(tzinfo=zone)
    found = found.astimezone(UTC).replace(microsecond=0)
    if end_time is not None and found > end_time:
        return None
    return found


def parse_time(value: object) -> datetime | None:
    """An ISO 8601 time (naive: UTC), or ``None``."""
    if isinstance(value, datetime):
        parsed = value
    elif isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return None
    else:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def utc_text(value: datetime | None) -> str | None:
    """``value`` in UTC as stored (whole seconds when it has none)."""
    if value is None:
        return None
    value = value.astimezone(UTC)
    return value.isoformat(timespec="seconds" if value.microsecond == 0 else "microseconds")

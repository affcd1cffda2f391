"""Schedules as Hermes Agent 0.19 parses and stores them: durations (``30m``: once, that long from now), intervals
(``every 2h``), cron expressions (five fields, or six with seconds, read by croniter) and ISO timestamps (once).

A parsed schedule is Hermes Agent's dict (``kind`` ``once``/``interval``/``cron`` with ``run_at``, ``minutes`` or
``expr``, and ``display``), the form ``jobs.json`` keeps. croniter is imported only for cron expressions.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from .clock import Clock, ensure_aware, parse_time

__all__ = ["ONESHOT_GRACE_SECONDS", "ScheduleError", "compute_next_run", "parse_duration", "parse_schedule"]

#: How late a one-shot may still start (Hermes Agent's grace for a job created a few seconds after its minute).
ONESHOT_GRACE_SECONDS = 120

_DURATION = re.compile(r"^(\d+)\s*(m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days)$")
_CRON_FIELD = re.compile(r"^[\d\*\-,/]+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")
_MINUTES = {"m": 1, "h": 60, "d": 1440}


class ScheduleError(ValueError):
    """A schedule Hermes Agent would not accept; the message says which forms are."""


def parse_duration(text: str) -> int:
    """``30m``, ``2h``, ``1d`` (and their long spellings) as minutes."""
    text = text.strip().lower()
    match = _DURATION.match(text)
    if not match:
        raise ScheduleError(f"Invalid duration: '{text}'. Use format like '30m', '2h', or '1d'")
    return int(match.group(1)) * _MINUTES[match.group(2)[0]]


def parse_schedule(schedule: str, clock: Clock) -> dict[str, Any]:
    """The stored form of ``schedule``; raises :class:`ScheduleError` with Hermes Agent's messages."""
    if not isinstance(schedule, str):
        raise ScheduleError(f"schedule must be text such as '30m', 'every 2h' or '0 9 * * *', not "
                            f"{type(schedule).__name__}")
    original = schedule = schedule.strip()
    if schedule.lower().startswith("every "):
        minutes = parse_duration(schedule[6:].strip())
        return {"kind": "interval", "minutes": minutes, "display": f"every {minutes}m"}
    parts = schedule.split()
    if len(parts) >= 5 and all(_CRON_FIELD.match(part) for part in parts[:5]):
        _cron_iterator(schedule, clock.now())  # raises for an expression croniter rejects
        return {"kind": "cron", "expr": schedule, "display": schedule}
    if "T" in schedule or _DATE.match(schedule):
        try:
            moment = parse_time(schedule)
        except ValueError as exc:
            raise ScheduleError(f"Invalid timestamp '{schedule}': {exc}") from None
        if moment.tzinfo is None:  # the wall clock of the configured zone, as the due check reads it
            moment = moment.replace(tzinfo=clock.now().tzinfo)
        return {"kind": "once", "run_at": moment.isoformat(), "display": f"once at {moment.strftime('%Y-%m-%d %H:%M')}"}
    try:
        minutes = parse_duration(schedule)
    except ScheduleError:
        pass
    else:
        run_at = clock.now() + timedelta(minutes=minutes)
        return {"kind": "once", "run_at": run_at.isoformat(), "display": f"once in {original}"}
    raise ScheduleError(
        f"Invalid schedule '{original}'. Use:\n"
        "  - Duration: '30m', '2h', '1d' (one-shot)\n"
        "  - Interval: 'every 30m', 'every 2h' (recurring)\n"
        "  - Cron: '0 9 * * *' (cron expression)\n"
        "  - Timestamp: '2026-02-03T14:00:00' (one-shot at time)")


def compute_next_run(schedule: Any, clock: Clock, last_run_at: str | None = None,
                     now: datetime | None = None) -> str | None:
    """The next run after ``last_run_at`` (or after now), as Hermes Agent stores it; None when none is left."""
    now = now or clock.now()
    if not isinstance(schedule, dict):
        return None
    kind = schedule.get("kind")
    if kind == "once":
        return _oneshot_run_at(schedule, clock, now, last_run_at)
    base = now
    if last_run_at:
        try:
            base = ensure_aware(parse_time(last_run_at), clock)
        except ValueError:
            base = now
    if kind == "interval":
        minutes = schedule.get("minutes")
        if not isinstance(minutes, int | float) or isinstance(minutes, bool):
            return None
        return (base + timedelta(minutes=minutes)).isoformat()
    if kind == "cron" and isinstance(schedule.get("expr"), str) and schedule["expr"]:
        try:
            following: datetime = _cron_iterator(schedule["expr"], base).get_next(datetime)
        except ScheduleError:
            return None
        return following.isoformat()
    return None


def _oneshot_run_at(schedule: dict[str, Any], clock: Clock, now: datetime, last_run_at: str | None) -> str | None:
    """A one-shot's ``run_at`` while it may still start (never again once it ran)."""
    run_at = schedule.get("run_at")
    if last_run_at or not isinstance(run_at, str):
        return None
    try:
        moment = ensure_aware(parse_time(run_at), clock)
    except ValueError:
        return None
    return run_at if moment >= now - timedelta(seconds=ONESHOT_GRACE_SECONDS) else None


def _cron_iterator(expr: str, base: datetime) -> Any:
    try:
        from croniter import croniter
    except ImportError:  # a broken install: croniter is the pack's dependency
        raise ScheduleError("Cron expressions require 'croniter', a dependency of hermes-tools-cron: "
                            "pip install --force-reinstall hermes-tools-cron") from None
    try:
        return croniter(expr, base)
    except Exception as exc:  # croniter raises several types for a bad expression
        raise ScheduleError(f"Invalid cron expression '{expr}': {exc}") from None

"""The scheduler's clock: now, in the zone Hermes Agent's scheduler uses (``HERMES_TIMEZONE``, else config.yaml's
``timezone``, else the machine's), so a home's ``next_run_at`` times mean the same under both.

``HERMES_CRON_TEST_CLOCK`` names a file holding an ISO time that stands in for now (tests step it to drive many
processes through scheduled minutes in seconds); it is read on every call, and nothing else sets it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path

__all__ = ["TEST_CLOCK_ENV", "Clock", "ensure_aware", "parse_time"]

TEST_CLOCK_ENV = "HERMES_CRON_TEST_CLOCK"

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Clock:
    """Now in the configured zone (``zone`` None: the machine's local zone)."""

    zone: tzinfo | None = None
    #: A file holding the time to use instead of the real one (``HERMES_CRON_TEST_CLOCK``).
    fixed: Path | None = None

    @classmethod
    def configured(cls, environ: Mapping[str, str], timezone_setting: object) -> Clock:
        """The clock Hermes Agent's ``hermes_time.now()`` would use with this environment and config value."""
        name = (environ.get("HERMES_TIMEZONE") or "").strip()
        if not name and isinstance(timezone_setting, str):
            name = timezone_setting.strip()
        fixed = environ.get(TEST_CLOCK_ENV)
        return cls(_zone(name), Path(fixed) if fixed else None)

    def now(self) -> datetime:
        if self.fixed is not None:
            return ensure_aware(parse_time(self.fixed.read_text(encoding="utf-8").strip()), self)
        return datetime.now(self.zone) if self.zone is not None else datetime.now().astimezone()

    def local(self, moment: datetime) -> datetime:
        """``moment`` in this clock's zone."""
        return moment.astimezone(self.zone) if self.zone is not None else moment.astimezone()


def _zone(name: str) -> tzinfo | None:
    if not name:
        return None
    from zoneinfo import ZoneInfo

    try:
        return ZoneInfo(name)
    except (KeyError, ValueError, OSError) as exc:  # as Hermes Agent: a bad name falls back to local time
        log.warning("invalid timezone %r (%s); using the machine's local time", name, exc)
        return None


def parse_time(text: str) -> datetime:
    """An ISO 8601 time as Hermes Agent writes and reads them (``Z`` accepted); ``ValueError`` otherwise."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def ensure_aware(moment: datetime, clock: Clock) -> datetime:
    """``moment`` in the clock's zone; a naive one is taken as the machine's local time (Hermes Agent's rule for
    timestamps written before it stored offsets)."""
    if moment.tzinfo is None:
        moment = moment.astimezone()
    return clock.local(moment)

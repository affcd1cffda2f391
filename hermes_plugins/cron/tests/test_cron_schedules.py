"""Every schedule form Hermes Agent 0.19 parses, stored as it stores them, with its refusals (its own parser is
compared in tests/test_cron.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from hermes_plugin_cron.clock import Clock
from hermes_plugin_cron.schedules import ScheduleError, compute_next_run, parse_duration, parse_schedule

NOW = datetime(2026, 3, 2, 9, 0, 30, tzinfo=UTC)


class Fixed(Clock):
    def now(self) -> datetime:
        return NOW.astimezone(self.zone) if self.zone else NOW


UTC = Fixed(ZoneInfo("UTC"))


@pytest.mark.parametrize(("text", "minutes"), [
    ("30m", 30), ("1 min", 1), ("5mins", 5), ("2 minutes", 2), ("2h", 120), ("3 hr", 180), ("1hrs", 60),
    ("4 hours", 240), ("1d", 1440), ("2 days", 2880), (" 10M ", 10)])
def test_durations_in_every_spelling(text, minutes):
    assert parse_duration(text) == minutes


@pytest.mark.parametrize(("text", "stored"), [
    ("30m", {"kind": "once", "run_at": "2026-03-02T09:30:30+00:00", "display": "once in 30m"}),
    ("2h", {"kind": "once", "run_at": "2026-03-02T11:00:30+00:00", "display": "once in 2h"}),
    ("every 30m", {"kind": "interval", "minutes": 30, "display": "every 30m"}),
    ("Every 2h", {"kind": "interval", "minutes": 120, "display": "every 120m"}),
    ("every 1 day", {"kind": "interval", "minutes": 1440, "display": "every 1440m"}),
    ("0 9 * * *", {"kind": "cron", "expr": "0 9 * * *", "display": "0 9 * * *"}),
    ("*/15 8-18 * * 1-5", {"kind": "cron", "expr": "*/15 8-18 * * 1-5", "display": "*/15 8-18 * * 1-5"}),
    ("* * * * * */10", {"kind": "cron", "expr": "* * * * * */10", "display": "* * * * * */10"}),
    ("2026-06-01T09:00:00", {"kind": "once", "run_at": "2026-06-01T09:00:00+00:00",
                             "display": "once at 2026-06-01 09:00"}),
    ("2026-06-01T09:00:00Z", {"kind": "once", "run_at": "2026-06-01T09:00:00+00:00",
                              "display": "once at 2026-06-01 09:00"}),
    ("2026-06-01T09:00:00+05:30", {"kind": "once", "run_at": "2026-06-01T09:00:00+05:30",
                                   "display": "once at 2026-06-01 09:00"}),
    ("2026-06-01", {"kind": "once", "run_at": "2026-06-01T00:00:00+00:00", "display": "once at 2026-06-01 00:00"}),
])
def test_each_form_is_stored_as_hermes_agent_stores_it(text, stored):
    assert parse_schedule(text, UTC) == stored


def test_a_naive_timestamp_is_the_wall_clock_of_the_configured_zone():
    parsed = parse_schedule("2026-06-01T09:00", Fixed(ZoneInfo("Asia/Kolkata")))
    assert parsed["run_at"] == "2026-06-01T09:00:00+05:30"


@pytest.mark.parametrize(("text", "message"), [
    ("every fortnight", "Invalid duration: 'fortnight'. Use format like '30m', '2h', or '1d'"),
    ("0 9 * * MON", "Invalid schedule '0 9 * * MON'"),
    ("61 * * * *", "Invalid cron expression '61 * * * *'"),
    ("2026-13-01T09:00", "Invalid timestamp '2026-13-01T09:00'"),
    ("Tuesday", "Invalid timestamp 'Tuesday'"),
    ("soon", "Invalid schedule 'soon'. Use:\n  - Duration: '30m', '2h', '1d' (one-shot)"),
])
def test_what_hermes_agent_refuses_is_refused_with_its_message(text, message):
    with pytest.raises(ScheduleError) as caught:
        parse_schedule(text, UTC)
    assert str(caught.value).startswith(message)


def test_next_runs_follow_the_last_run_or_now():
    interval = {"kind": "interval", "minutes": 90}
    assert compute_next_run(interval, UTC) == "2026-03-02T10:30:30+00:00"
    assert compute_next_run(interval, UTC, "2026-03-01T00:00:00+00:00") == "2026-03-01T01:30:00+00:00"
    daily = {"kind": "cron", "expr": "0 9 * * *"}
    assert compute_next_run(daily, UTC) == "2026-03-03T09:00:00+00:00"
    assert compute_next_run(daily, Fixed(ZoneInfo("America/New_York"))) == "2026-03-02T09:00:00-05:00"  # 04:00 there


def test_a_one_shot_may_start_up_to_two_minutes_late_and_never_after_it_ran():
    assert compute_next_run({"kind": "once", "run_at": "2026-03-02T08:59:00+00:00"}, UTC) == \
        "2026-03-02T08:59:00+00:00"
    assert compute_next_run({"kind": "once", "run_at": "2026-03-02T08:57:00+00:00"}, UTC) is None
    assert compute_next_run({"kind": "once", "run_at": "2026-03-02T10:00:00+00:00"}, UTC,
                            "2026-03-02T08:00:00+00:00") is None


@pytest.mark.parametrize("schedule", [None, "every 2h", {}, {"kind": "interval"}, {"kind": "cron", "expr": "bad"},
                                      {"kind": "interval", "minutes": True}])
def test_a_malformed_stored_schedule_has_no_next_run(schedule):
    assert compute_next_run(schedule, UTC) is None


def test_a_run_after_a_daylight_saving_change_keeps_its_wall_clock_time():
    # Hermes Agent 0.19 (croniter 6.0.0) answers 07:30-04:00 here, an hour early; docs/cron.md says so
    new_york = Fixed(ZoneInfo("America/New_York"))
    assert compute_next_run({"kind": "cron", "expr": "30 8 1 * *"}, new_york) == "2026-04-01T08:30:00-04:00"

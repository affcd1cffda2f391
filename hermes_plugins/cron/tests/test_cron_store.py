"""jobs.json: what Hermes Agent repairs is repaired, what no one can read is refused with the reason and never
replaced, and nothing a write does not understand is dropped."""

from __future__ import annotations

import json
import os
import stat

import pytest

from hermes_core.errors import CronError

JOB = {"id": "aaaaaaaaaaaa", "name": "kept", "prompt": "p", "schedule": {"kind": "interval", "minutes": 60,
                                                                          "display": "every 60m"},
       "schedule_display": "every 60m", "repeat": {"times": None, "completed": 0}, "enabled": True,
       "state": "scheduled", "next_run_at": "2026-03-02T10:00:00+00:00", "deliver": "local"}


@pytest.fixture
def jobs_file(hermes_home):
    (hermes_home / "cron").mkdir()
    return hermes_home / "cron" / "jobs.json"


@pytest.mark.parametrize(("text", "why"), [
    ("{not json", "not valid JSON (Expecting property name enclosed in double quotes at line 1, column 2)"),
    ('"just a string"', "expected {\"jobs\": [...]}, found str"),
    ('{"jobs": {"a": 1}}', "'jobs' is dict, not a list"),
    ('{"tasks": []}', "an object without 'jobs' (keys: tasks)"),
    (b"\xff\xfe{}", "not UTF-8 text"),
])
def test_an_unreadable_jobs_file_is_refused_with_the_reason_and_left_as_it_is(runtime, jobs_file, cronjob, text, why):
    raw = text if isinstance(text, bytes) else text.encode()
    jobs_file.write_bytes(raw)
    answer = cronjob("create", schedule="every 1h", prompt="new")
    assert answer["success"] is False and why in answer["error"]
    assert "Hermes neither reads nor replaces it" in answer["error"]
    with pytest.raises(CronError, match="neither reads nor replaces"):
        runtime.cron.tick()
    assert jobs_file.read_bytes() == raw


def test_control_characters_a_bare_list_and_a_bom_are_repaired_on_the_next_write(runtime, jobs_file, cronjob, stored):
    text = json.dumps([dict(JOB, prompt="line one\u0001")]).replace("\\u0001", "\u0001")
    jobs_file.write_text("\ufeff" + text)
    assert [job["name"] for job in cronjob("list")["jobs"]] == ["kept"]
    assert runtime.cron.problems() == ["control characters in strings escaped",
                                       'a bare list of jobs wrapped as {"jobs": [...]}']
    cronjob("create", schedule="every 1h", prompt="second")
    data = stored()
    assert [job["name"] for job in data["jobs"]] == ["kept", "second"]
    assert data["jobs"][0]["prompt"] == "line one\u0001" and "updated_at" in data
    assert runtime.cron.problems() == []


def test_entries_and_keys_a_write_does_not_understand_are_kept(runtime, jobs_file, cronjob, stored):
    jobs_file.write_text(json.dumps({"jobs": [JOB, "a note someone left", 42], "owner": "ops"}))
    assert runtime.cron.problems() == ["2 entries are not a job object (kept, ignored)"]
    cronjob("create", schedule="every 1h", prompt="second")
    data = stored()
    assert data["jobs"][1:3] == ["a note someone left", 42] and data["owner"] == "ops"


def test_records_without_an_id_or_with_unreadable_times_are_repaired(runtime, jobs_file, cronjob, stored, clock):
    legacy = dict(JOB, next_run_at="tomorrow-ish", last_run_at=17)
    del legacy["id"]
    legacy["job_id"] = "bbbbbbbbbbbb"
    jobs_file.write_text(json.dumps({"jobs": [legacy, dict(JOB, id=None, name="fresh")]}))
    problems = runtime.cron.problems()
    assert "a job without an id got id bbbbbbbbbbbb" in problems
    assert "job bbbbbbbbbbbb: unreadable next_run_at 'tomorrow-ish' dropped" in problems
    runtime.cron.tick()
    jobs = stored()["jobs"]
    assert jobs[0]["id"] == "bbbbbbbbbbbb" and len(jobs[1]["id"]) == 12
    # the recurring job without a next run gets one again (from now), as Hermes Agent recovers it
    assert jobs[0]["next_run_at"] == "2026-03-02T10:00:30+00:00" and "last_run_at" not in jobs[0]


def test_hand_edited_nulls_still_list(runtime, jobs_file, cronjob):
    jobs_file.write_text(json.dumps({"jobs": [dict(JOB, name=None, prompt=None, schedule_display=None, state=None,
                                                   repeat=None)]}))
    [job] = cronjob("list")["jobs"]
    assert (job["name"], job["schedule"], job["state"], job["repeat"]) == ("aaaaaaaaaaaa", "every 60m", "scheduled",
                                                                          "forever")


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
def test_the_jobs_file_and_folders_are_private(runtime, cronjob, hermes_home):
    cronjob("run", job_id=cronjob("create", schedule="every 1h", tool="echo")["job_id"])
    assert stat.S_IMODE((hermes_home / "cron" / "jobs.json").stat().st_mode) == 0o600
    assert stat.S_IMODE((hermes_home / "cron").stat().st_mode) == 0o700
    assert stat.S_IMODE((hermes_home / "cron" / "output").stat().st_mode) == 0o700
    assert not list((hermes_home / "cron").glob(".jobs_*.tmp"))


def test_a_huge_jobs_file_is_refused(runtime, jobs_file, cronjob, monkeypatch):
    monkeypatch.setattr("hermes_plugin_cron.store.MAX_BYTES", 100)
    jobs_file.write_text(json.dumps({"jobs": [JOB]}))
    answer = cronjob("list")
    assert answer["success"] is False and "more than the 100 a jobs file may hold" in answer["error"]

"""The scheduler: what is due runs once per due time, missed runs follow Hermes Agent's catch-up rule, a run whose
scheduler died is recorded as failed and not repeated, and results reach their output file and delivery."""

from __future__ import annotations

import json
import threading
import time

import pytest
from hermes_plugin_cron.store import Lease

from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.errors import CronUnavailable


def test_a_due_job_runs_once_per_due_time(runtime, cronjob, calls, clock, outputs, stored):
    job_id = cronjob("create", schedule="* * * * *", tool="echo", arguments={"text": "tick"})["job_id"]
    assert runtime.cron.tick() == []  # 09:01 is not here yet
    clock.advance(seconds=30)
    [report] = runtime.cron.tick()
    assert report.success and report.job_id == job_id and report.output.endswith("2026-03-02_09-01-00.md")
    assert runtime.cron.tick() == []  # the same minute again: already run
    assert stored()["jobs"][0]["next_run_at"] == "2026-03-02T09:02:00+00:00"
    clock.advance(minutes=1)
    assert [r.success for r in runtime.cron.tick()] == [True]
    assert len(calls) == 2 and len(outputs(job_id)) == 2
    job = stored()["jobs"][0]
    assert job["last_status"] == "ok" and job["repeat"]["completed"] == 2 and job["run_claim"] is None


def test_missed_runs_run_once_then_the_schedule_goes_on_from_now(runtime, cronjob, calls, clock, stored):
    cronjob("create", schedule="every 5m", tool="echo", arguments={})
    clock.advance(hours=3)  # 36 runs missed while nothing ran
    assert len(runtime.cron.tick()) == 1
    assert runtime.cron.tick() == [] and len(calls) == 1
    assert stored()["jobs"][0]["next_run_at"] == "2026-03-02T12:05:30+00:00"


def test_a_one_shot_runs_once_and_is_gone_its_output_kept(runtime, cronjob, clock, outputs, stored):
    job_id = cronjob("create", schedule="10m", tool="echo", arguments={"text": "once"})["job_id"]
    clock.advance(minutes=10)
    assert [r.success for r in runtime.cron.tick()] == [True]
    clock.advance(minutes=10)
    assert runtime.cron.tick() == []
    assert stored()["jobs"] == [] and '{"echo": "once"}' in outputs(job_id)[0]


def test_a_failed_call_is_recorded_and_its_output_says_why(runtime, cronjob, clock, outputs, stored):
    job_id = cronjob("create", schedule="every 1m", tool="fail", arguments={})["job_id"]
    clock.advance(minutes=1)
    [report] = runtime.cron.tick()
    assert not report.success and report.error == "the service said no"
    job = stored()["jobs"][0]
    assert (job["last_status"], job["last_error"]) == ("error", "the service said no")
    document = outputs(job_id)[0]
    assert document.startswith("# Cron Job: fail (FAILED)\n\n**Job ID:** " + job_id)
    assert "## Error\n\n```\nthe service said no\n```" in document


def test_a_run_whose_scheduler_died_is_recorded_as_failed_and_not_repeated(runtime, cronjob, calls, clock, outputs,
                                                                           stored):
    job_id = cronjob("create", schedule="every 1m", tool="echo", arguments={})["job_id"]
    clock.advance(minutes=1)
    store = runtime.cron.store
    [claim] = store.claim_due(8, lambda job, error: None)
    claim.lease.release()  # what the OS does for a process that is killed mid-run
    [report] = runtime.cron.tick()
    assert not report.success and "did not finish: its scheduler stopped" in report.error
    job = stored()["jobs"][0]
    assert job["last_status"] == "error" and job["run_claim"] is None and calls == []
    assert "(FAILED)" in outputs(job_id)[0]
    clock.advance(minutes=1)  # and the next due run happens
    assert [r.success for r in runtime.cron.tick()] == [True] and len(calls) == 1


def test_a_run_in_flight_elsewhere_is_neither_repeated_nor_declared_dead(runtime, cronjob, clock, stored):
    cronjob("create", schedule="every 1m", tool="echo", arguments={})
    clock.advance(minutes=1)
    store = runtime.cron.store
    [claim] = store.claim_due(8, lambda job, error: None)
    clock.advance(minutes=5)  # due again, but its run is still going
    assert runtime.cron.tick() == []
    assert stored()["jobs"][0]["run_claim"] == claim.record
    store.finish(claim, True, None, None)
    assert stored()["jobs"][0]["last_status"] == "ok"


def test_a_manual_run_of_a_job_already_running_is_skipped(runtime, cronjob, clock):
    job_id = cronjob("create", schedule="every 1m", tool="echo", arguments={})["job_id"]
    clock.advance(minutes=1)
    [claim] = runtime.cron.store.claim_due(8, lambda job, error: None)
    answer = cronjob("run", job_id=job_id)["job"]
    assert answer["executed"] is False
    assert answer["execution_skipped"] == "Job is already being fired by the scheduler; not run again."
    claim.lease.release()


def test_a_run_that_outlasts_the_timeout_is_recorded_as_failed(runtime, cronjob, clock, monkeypatch, stored):
    monkeypatch.setenv("HERMES_CRON_TIMEOUT", "0.2")
    cronjob("create", schedule="every 1m", tool="sleepy", arguments={"seconds": 30})
    clock.advance(minutes=1)
    try:
        [report] = runtime.cron.tick()
    finally:
        runtime.release.set()
    assert not report.success and report.error.startswith("timed out after 0.2 s")
    assert stored()["jobs"][0]["run_claim"] is None


def test_two_runs_in_one_second_keep_both_outputs(runtime, cronjob, outputs):
    job_id = cronjob("create", schedule="every 1h", tool="echo", arguments={"text": "x"})["job_id"]
    cronjob("run", job_id=job_id)
    cronjob("run", job_id=job_id)  # the test clock stands still
    assert len(outputs(job_id)) == 2


def test_output_is_pruned_to_the_configured_retention(runtime, cronjob, outputs, config):
    config({"cron": {"output_retention": 2}})
    job_id = cronjob("create", schedule="every 1h", tool="echo", arguments={})["job_id"]
    for _ in range(4):
        cronjob("run", job_id=job_id)
    assert len(outputs(job_id)) == 2


def serve_until_called(runtime, clock, calls, drain_timeout: float = 30.0) -> list[int]:
    """Run ``serve`` in a thread, make a minute pass, stop it once a tool was called; what ``serve`` returned."""
    stop = threading.Event()
    cut: list[int] = []
    thread = threading.Thread(target=lambda: cut.append(runtime.cron.serve(stop, 0.05, drain_timeout)), daemon=True)
    thread.start()
    clock.advance(minutes=1)
    deadline = time.monotonic() + scaled_timeout(10)
    while not calls and time.monotonic() < deadline:
        time.sleep(0.02)
    stop.set()
    thread.join(scaled_timeout(10))
    assert not thread.is_alive()
    return cut


def test_serve_runs_jobs_as_they_fall_due_and_drains_on_stop(runtime, cronjob, clock, calls):
    cronjob("create", schedule="every 1m", tool="echo", arguments={})
    assert serve_until_called(runtime, clock, calls) == [0] and len(calls) == 1


def test_serve_records_runs_cut_off_by_the_drain_timeout(runtime, cronjob, clock, calls, stored):
    cronjob("create", schedule="every 1m", tool="sleepy", arguments={"seconds": 30})
    cut = serve_until_called(runtime, clock, calls, drain_timeout=0.1)
    runtime.release.set()
    job = stored()["jobs"][0]
    assert cut == [1] and job["last_status"] == "error" and job["last_error"].startswith("Interrupted")


def test_a_prompt_job_without_a_model_fails_with_the_reason_in_hermes_agents_layout(runtime, cronjob, clock, outputs):
    job_id = cronjob("create", schedule="every 1m", prompt="What changed today?")["job_id"]
    clock.advance(minutes=1)
    [report] = runtime.cron.tick()
    assert not report.success and "no model endpoint is configured (delegation.base_url)" in report.error
    document = outputs(job_id)[0]
    assert document.startswith("# Cron Job: What changed today? (FAILED)")
    assert "**Schedule:** every 1m\n\n## Prompt\n\n[IMPORTANT: You are running as a scheduled cron job." in document
    assert "What changed today?\n\n## Error" in document


def test_without_the_pack_runtime_cron_says_why(hermes_home):
    runtime = Runtime(home=hermes_home, entry_points=())
    with pytest.raises(CronUnavailable, match="`hermes plugins install cron` installs it"):
        runtime.cron  # noqa: B018


def test_with_the_pack_switched_off_runtime_cron_says_how_to_switch_it_on(hermes_home, config):
    from importlib.metadata import EntryPoint

    config({"plugins": {"disabled": ["cron"]}})
    pack = EntryPoint(name="cron", value="hermes_plugin_cron", group="hermes_agent.plugins")
    runtime = Runtime(home=hermes_home, entry_points=[pack])
    with pytest.raises(CronUnavailable, match=r"is disabled: .*`hermes plugins enable cron` switches it on"):
        runtime.cron  # noqa: B018


# -- delivery -------------------------------------------------------------------------------------------------


def test_a_result_is_delivered_to_a_file_in_the_workspace(runtime, cronjob, hermes_workspace):
    job_id = cronjob("create", schedule="every 1h", tool="echo", arguments={"text": "report"},
                     deliver="file:reports/latest.md")["job_id"]
    cronjob("run", job_id=job_id)
    assert (hermes_workspace / "reports" / "latest.md").read_text() == '{"echo": "report"}'


def test_a_delivery_file_behind_a_link_out_of_the_workspace_is_refused(runtime, cronjob, hermes_workspace, tmp_path,
                                                                       stored):
    (hermes_workspace / "out").symlink_to(tmp_path)
    job_id = cronjob("create", schedule="every 1h", tool="echo", arguments={}, deliver="file:out/x.md")["job_id"]
    cronjob("run", job_id=job_id)
    assert "leads out of the workspace" in stored()["jobs"][0]["last_delivery_error"]
    assert not (tmp_path / "x.md").exists()


def test_a_webhook_gets_the_result_through_the_address_guard(runtime, cronjob, webhook, config):
    config({"web": {"allow_private_networks": True}})
    job_id = cronjob("create", schedule="every 1h", tool="echo", arguments={"text": "hooked"},
                     deliver=webhook.url)["job_id"]
    assert cronjob("run", job_id=job_id)["job"]["last_delivery_error"] is None
    [payload] = webhook.received
    assert payload["job_id"] == job_id and payload["success"] is True
    assert payload["content"] == '{"echo": "hooked"}' and payload["output_file"].endswith(".md")


def test_a_loopback_webhook_is_refused_unless_private_networks_are_allowed(runtime, cronjob, webhook):
    answer = cronjob("create", schedule="every 1h", tool="echo", deliver=webhook.url)
    assert answer["success"] is False and "127.0.0.1 is not a public address (loopback)" in answer["error"]
    assert "web.allow_private_networks" in answer["error"] and webhook.received == []


def test_the_metadata_address_is_refused_whatever_the_configuration(runtime, cronjob, config, hermes_home, stored):
    config({"web": {"allow_private_networks": True}})
    answer = cronjob("create", schedule="every 1h", tool="echo", deliver="http://169.254.169.254/latest/meta-data")
    assert answer["success"] is False and "never reachable" in answer["error"]
    # a job that names it anyway (written by hand) runs, and its delivery is refused
    job_id = cronjob("create", schedule="every 1h", tool="echo", arguments={})["job_id"]
    data = stored()
    data["jobs"][0]["deliver"] = "http://169.254.169.254/latest/meta-data"
    (hermes_home / "cron" / "jobs.json").write_text(json.dumps(data))
    job = cronjob("run", job_id=job_id)["job"]
    assert job["execution_success"] is True and "169.254.169.254" in job["last_delivery_error"]
    assert "never reachable" in job["last_delivery_error"]


def test_a_hermes_agent_job_for_a_messaging_platform_runs_and_its_delivery_is_refused(runtime, cronjob, stored,
                                                                                    hermes_home):
    job_id = cronjob("create", schedule="every 1h", tool="echo", arguments={})["job_id"]
    data = stored()
    data["jobs"][0].update(deliver="origin", origin={"platform": "telegram", "chat_id": "-100"})
    (hermes_home / "cron" / "jobs.json").write_text(json.dumps(data))
    job = cronjob("run", job_id=job_id)["job"]
    assert job["execution_success"] is True
    assert job["last_delivery_error"].startswith("'origin' is the telegram chat this job came from; Hermes runs no "
                                                 "messaging gateway")


def test_a_lease_is_exclusive_across_threads(tmp_path):
    first = Lease.take(tmp_path / "x.lock")
    assert first is not None and Lease.take(tmp_path / "x.lock") is None
    first.release()
    again = Lease.take(tmp_path / "x.lock")
    assert again is not None
    again.release()


def test_a_run_whose_end_cannot_be_recorded_is_recorded_failed_by_the_next_tick(runtime, cronjob, clock, hermes_home,
                                                                              stored):
    from hermes_core.plugin import exclusive_lock

    cronjob("create", schedule="every 1m", tool="echo", arguments={})
    clock.advance(minutes=1)
    scheduler = runtime.cron
    scheduler.store.lock_timeout = 0.2
    [claim] = scheduler.store.claim_due(8, lambda job, error: None)
    with exclusive_lock(hermes_home / "cron" / ".jobs.lock"):  # another process holds the jobs file meanwhile
        report = scheduler.runner.run(claim)
    assert not report.success and report.error.startswith("the end of the run could not be recorded")
    [recorded] = runtime.cron.tick()
    assert "did not finish" in recorded.error and stored()["jobs"][0]["run_claim"] is None


def test_no_run_is_claimed_while_hermes_agents_ticker_holds_its_tick_lock(runtime, cronjob, clock, hermes_home):
    from hermes_core.plugin import exclusive_lock

    cronjob("create", schedule="every 1m", tool="echo", arguments={})
    clock.advance(minutes=1)
    with exclusive_lock(hermes_home / "cron" / ".tick.lock"):  # between its due scan and moving next runs on
        assert runtime.cron.tick() == []
    assert [report.success for report in runtime.cron.tick()] == [True]

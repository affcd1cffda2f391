"""``hermes cron``: the commands over an installed hermes-tools-cron (real venv, real processes), exactly-once
with several schedulers on one home, a scheduler killed mid-run; and without the pack, a one-line reason.

The schedulers read the time from a file (``HERMES_CRON_TEST_CLOCK``) the test steps a minute at a time, so a
scheduled minute passes as soon as its runs are done, however loaded the machine is.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from hermes_core.authoring.testing import scaled_timeout
from hermes_core.cli import cli

START = datetime(2026, 3, 2, 9, 0, 30, tzinfo=UTC)
JOB_TOOLS = """\
name: jobtools
version: "1.0"
tools:
  - name: mark
    toolset: jobtools
    description: Answer with the label and the process that ran it
    parameters: {type: object, properties: {label: {type: string}}}
    handler: .tools:mark
    annotations: {read_only: true}
  - name: block
    toolset: jobtools
    description: Say it started, then wait until released
    parameters: {type: object, properties: {started: {type: string}, release: {type: string}}}
    handler: .tools:block
    annotations: {read_only: true}
"""
JOB_TOOLS_CODE = """\
import json, os, time

def mark(args, **kwargs):
    return json.dumps({"label": args.get("label"), "pid": os.getpid()})

def block(args, **kwargs):
    if not os.path.exists(args["release"]):
        with open(args["started"], "w") as handle:
            handle.write(str(os.getpid()))
    deadline = time.monotonic() + 300
    while not os.path.exists(args["release"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    return json.dumps({"released": True})
"""
ASKER = """\
def register(ctx):
    def ask(tool_name, args, **kwargs):
        if tool_name == "mark" and args.get("label") == "ask":
            return {"action": "approve", "message": "mark ask needs a person", "rule_key": "mark-ask"}
    ctx.register_hook("pre_tool_call", ask)
"""


def test_without_the_pack_hermes_cron_says_what_to_install(isolated_home):
    result = CliRunner().invoke(cli, ["cron", "list"], standalone_mode=False)
    assert "scheduled jobs need the cron pack, which is not installed: pip install hermes-tools-cron" in \
        str(result.exception)


class Home:
    """A home with the job tools plugin and a test clock, and the venv whose ``hermes`` runs on it."""

    def __init__(self, venv: Any, root: Path) -> None:
        self.venv = venv
        self.root = root
        self.home = root / "home"
        plugin = self.home / "plugins" / "jobtools"
        plugin.mkdir(parents=True)
        (plugin / "plugin.yaml").write_text(JOB_TOOLS)
        (plugin / "tools.py").write_text(JOB_TOOLS_CODE)
        asker = self.home / "plugins" / "asker"
        asker.mkdir()
        (asker / "__init__.py").write_text(ASKER)
        (self.home / "config.yaml").write_text(yaml.safe_dump({"cron": {"output_retention": 0}}))
        self.clock = root / "clock"
        self.set_time(START)
        self.env = {"HERMES_HOME": str(self.home), "HERMES_CRON_TEST_CLOCK": str(self.clock),
                    "HERMES_TIMEZONE": "UTC", "HERMES_WORKSPACE": str(root)}

    def set_time(self, moment: datetime) -> None:
        temporary = self.clock.with_suffix(".tmp")
        temporary.write_text(moment.isoformat())
        os.replace(temporary, self.clock)

    def hermes(self, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
        result = self.venv.hermes_cli(*args, env=self.env, cwd=self.root)
        if ok:
            assert result.returncode == 0, result.stdout + result.stderr
        return result

    def json(self, *args: str) -> Any:
        return json.loads(self.hermes(*args, "--json").stdout)

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen([self.venv.hermes, *args], env={**os.environ, **self.env}, cwd=self.root,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def finished(self, moment: datetime) -> bool:
        """Every job has recorded a run at ``moment`` and none is running."""
        try:
            jobs = json.loads((self.home / "cron" / "jobs.json").read_text())["jobs"]
        except (OSError, ValueError):
            return False
        return all(job["last_run_at"] == moment.isoformat() and not job.get("run_claim") for job in jobs)

    def run_times(self, job_id: str) -> list[str]:
        """The Run Time of each output file of a job."""
        folder = self.home / "cron" / "output" / job_id
        return [line.split("**Run Time:** ", 1)[1] for path in sorted(folder.glob("*.md")) if folder.exists()
                for line in path.read_text().splitlines() if line.startswith("**Run Time:** ")]


@pytest.fixture(scope="module")
def cron_venv(make_venv: Any) -> Any:
    venv = make_venv("cron")
    venv.install("hermes-tools-cron", extra=("--no-deps",))
    return venv


@pytest.fixture
def home(cron_venv: Any, tmp_path: Path) -> Home:
    return Home(cron_venv, tmp_path)


def wait_until(predicate: Any, seconds: float, what: str) -> None:
    deadline = time.monotonic() + scaled_timeout(seconds)
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_the_commands_list_add_show_pause_resume_run_and_remove(home):
    added = home.json("cron", "add", "every 2h", "--tool", "mark", "--arguments", '{"label": "one"}',
                      "--name", "marker")
    assert added["schedule_display"] == "every 120m" and added["next_run_at"] == "2026-03-02T11:00:30+00:00"
    job_id = added["id"]
    [listed] = home.json("cron", "list")
    assert (listed["id"], listed["name"], listed["next_run_at"]) == (job_id, "marker", added["next_run_at"])
    table = home.hermes("cron", "list").stdout
    assert "marker" in table and "every 120m" in table and "2026-03-02T11:00:30+00:00" in table
    assert "tool:" in home.hermes("cron", "show", "marker").stdout
    assert "Paused job" in home.hermes("cron", "pause", job_id).stdout
    assert home.json("cron", "list") == [] and home.json("cron", "list", "--all")[0]["state"] == "paused"
    assert "next run 2026-03-02T11:00:30+00:00" in home.hermes("cron", "resume", job_id).stdout
    [report] = home.json("cron", "run", job_id)
    assert report["success"] is True and Path(report["output"]).is_file()
    assert home.hermes("cron", "tick").stdout.strip() == "No jobs due."
    home.hermes("cron", "remove", "marker")
    assert home.json("cron", "list", "--all") == []
    missing = home.hermes("cron", "show", "marker", ok=False)
    assert missing.returncode == 1 and "no job with id or name 'marker'" in missing.stderr
    refused = home.hermes("cron", "add", "every 1h", "--tool", "mark", "--deliver", "slack:#ops", ok=False)
    assert refused.returncode == 1 and "Hermes runs no messaging gateway" in refused.stderr


def test_a_scheduled_call_that_needs_approval_is_refused_and_the_refusal_is_in_the_output(home):
    job_id = home.json("cron", "add", "every 1h", "--tool", "mark", "--arguments", '{"label": "ask"}')["id"]
    home.set_time(START + timedelta(hours=1))
    [report] = home.json("cron", "tick")
    assert report["success"] is False and "not approved: mark ask needs a person" in report["error"]
    assert "not approved" in (home.home / "cron" / "output" / job_id).glob("*.md").__next__().read_text()


@pytest.mark.slow
def test_two_serve_processes_and_a_tick_loop_run_every_due_run_exactly_once(home):
    jobs = [home.json("cron", "add", "* * * * *", "--tool", "mark", "--arguments", json.dumps({"label": f"job-{i}"}),
                      "--name", f"job-{i}")["id"] for i in range(20)]
    servers = [home.popen("cron", "serve", "--interval", "0.2") for _ in range(2)]
    stop = threading.Event()
    ticks: list[int] = []

    def tick_loop() -> None:
        while not stop.is_set():
            ticks.append(home.hermes("cron", "tick").returncode)

    ticker = threading.Thread(target=tick_loop, daemon=True)
    ticker.start()
    minutes: list[str] = []
    began = time.monotonic()
    try:
        while time.monotonic() - began < 60 or len(minutes) < 3:
            moment = START.replace(second=0) + timedelta(minutes=len(minutes) + 1)
            stamp = moment.strftime("%Y-%m-%d %H:%M:%S")
            home.set_time(moment)
            minutes.append(stamp)
            # a run records its end after writing its output: the next minute starts once every end is recorded
            wait_until(lambda moment=moment: home.finished(moment), 60, f"the 20 runs of {stamp}")
    finally:
        stop.set()
        ticker.join(scaled_timeout(60))
        for server in servers:
            server.send_signal(signal.SIGTERM)
        codes = [server.wait(scaled_timeout(60)) for server in servers]
    assert codes == [0, 0], [server.stderr.read() for server in servers if server.stderr]
    assert ticks and set(ticks) == {0}
    for job in jobs:
        counted = Counter(home.run_times(job))
        assert counted == Counter(minutes), (job, counted)
    final = {job["id"]: job for job in home.json("cron", "list")}
    assert all(final[job]["repeat"]["completed"] == len(minutes) and final[job]["last_status"] == "ok"
               for job in jobs)


@pytest.mark.slow
def test_a_scheduler_killed_mid_run_leaves_a_failed_run_and_the_next_one_happens(home):
    started, release = home.root / "started", home.root / "release"
    job_id = home.json("cron", "add", "* * * * *", "--tool", "block", "--arguments",
                       json.dumps({"started": str(started), "release": str(release)}))["id"]
    server = home.popen("cron", "serve", "--interval", "0.1")
    try:
        home.set_time(START.replace(second=0) + timedelta(minutes=1))
        wait_until(started.exists, 60, "the run to start")
    finally:
        server.send_signal(signal.SIGKILL)
        server.wait(scaled_timeout(30))
    assert home.json("cron", "list")[0]["run_claim"]["by"].endswith(f":{server.pid}")
    [crashed] = home.json("cron", "tick")
    assert crashed["success"] is False and "did not finish: its scheduler stopped" in crashed["error"]
    [job] = home.json("cron", "list")
    assert job["last_status"] == "error" and job["run_claim"] is None
    assert job["next_run_at"] == "2026-03-02T09:02:00+00:00"
    release.touch()
    home.set_time(START.replace(second=0) + timedelta(minutes=2))
    [next_run] = home.json("cron", "tick")
    assert next_run["success"] is True
    assert home.run_times(job_id) == ["2026-03-02 09:01:00", "2026-03-02 09:02:00"]


@pytest.fixture
def sigterm_server(home: Home) -> Iterator[subprocess.Popen[str]]:
    server = home.popen("cron", "serve", "--interval", "0.1", "--drain-timeout", "0.5")
    yield server
    if server.poll() is None:
        server.kill()
        server.wait(scaled_timeout(30))


@pytest.mark.slow
def test_sigterm_drains_and_a_run_cut_off_is_recorded_as_failed(home, sigterm_server):
    started, release = home.root / "started", home.root / "release"
    home.json("cron", "add", "* * * * *", "--tool", "block", "--arguments",
              json.dumps({"started": str(started), "release": str(release)}))
    home.set_time(START.replace(second=0) + timedelta(minutes=1))
    wait_until(started.exists, 60, "the run to start")
    sigterm_server.send_signal(signal.SIGTERM)
    assert sigterm_server.wait(scaled_timeout(60)) == 0
    assert "draining" in (sigterm_server.stderr.read() if sigterm_server.stderr else "")
    [job] = home.json("cron", "list")
    assert job["last_status"] == "error" and job["last_error"].startswith("Interrupted")
    release.touch()

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
import sys
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

fakes = sys.modules["hermes_fake_provider"]  # loaded by conftest.py

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
    assert "scheduled jobs need the cron pack (hermes-tools-cron), which is not installed: `hermes plugins install " \
        "cron` installs it" in str(result.exception)  # from a clone too: pip install hermes-tools-cron would not


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


def test_a_prompt_job_runs_on_tick_its_model_calls_tools_and_an_approval_is_refused_in_the_output(home):
    with fakes.fake_provider([("mark", {"label": "hello"}), ("mark", {"label": "ask"})]) as fake:
        config = {"cron": {"output_retention": 0},
                  "delegation": {"base_url": f"{fake.url}/v1", "model": "default-model"}}
        (home.home / "config.yaml").write_text(yaml.safe_dump(config))
        job_id = home.json("cron", "add", "every 1h", "Mark the day", "--toolsets", "jobtools",
                           "--model", "job-model", "--deliver", "file:delivered.md")["id"]
        home.set_time(START + timedelta(hours=1))
        [report] = home.json("cron", "tick")
    assert report["success"] is True and report["delivery_error"] is None, report
    [first, second] = fake.bodies("/chat/completions")
    assert first["model"] == "job-model"  # the job's model, not delegation.model
    assert {tool["function"]["name"] for tool in first["tools"]} == {"mark", "block"}  # its toolsets only
    assert "You are running as a scheduled cron job" in first["messages"][1]["content"]
    results = [message["content"] for message in second["messages"] if message["role"] == "tool"]
    assert '"label": "hello"' in results[0]
    assert "not approved: mark ask needs a person" in results[1]
    document = Path(report["output"]).read_text()
    assert document.startswith("# Cron Job: Mark the day\n") and f"**Job ID:** {job_id}" in document
    assert "## Prompt\n\n[IMPORTANT: You are running as a scheduled cron job." in document
    response = document.split("## Response\n\n", 1)[1].split("\n## Refused Calls", 1)[0].strip()
    assert response.startswith("Tool results:") and '"label": "hello"' in response
    assert "## Refused Calls" in document and "- mark: mark ask needs a person" in document
    assert (home.root / "delivered.md").read_text().strip() == response  # delivered as a tool job's result is


def test_a_silent_prompt_job_saves_its_output_and_delivers_nothing(home):
    with fakes.fake_provider([], text="[SILENT]") as fake:
        config = {"delegation": {"base_url": f"{fake.url}/v1", "model": "default-model"}}
        (home.home / "config.yaml").write_text(yaml.safe_dump(config))
        home.json("cron", "add", "every 1h", "Anything new?", "--deliver", "file:delivered.md")
        home.set_time(START + timedelta(hours=1))
        [report] = home.json("cron", "tick")
    assert report["success"] is True and "[SILENT]" in Path(report["output"]).read_text()
    assert fake.bodies("/chat/completions")[0]["model"] == "default-model"  # delegation.model when the job has none
    assert not (home.root / "delivered.md").exists()


def test_a_prompt_job_whose_endpoint_fails_is_recorded_failed_with_the_reason(home):
    config = {"delegation": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "model_timeout": 30}}
    (home.home / "config.yaml").write_text(yaml.safe_dump(config))
    home.json("cron", "add", "every 1h", "Anything new?")
    home.set_time(START + timedelta(hours=1))
    [report] = home.json("cron", "tick")
    assert report["success"] is False, report
    assert "asking the model failed" in report["error"] or "the model did not answer" in report["error"]
    assert "## Error" in Path(report["output"]).read_text()


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


# -- beside Hermes Agent 0.19 (its own venv, its own cron module) ------------------------------------------------

#: Runs in Hermes Agent's venv: its cron.jobs module at a fixed time; argv: [now, action, json argument].
HERMES_AGENT_CRON = """\
import json, sys
from datetime import datetime
import cron.jobs as jobs
now = datetime.fromisoformat(sys.argv[1])
jobs._hermes_now = lambda: now.astimezone(jobs._hermes_now_real().tzinfo)
action, argument = sys.argv[2], json.loads(sys.argv[3])
if action == "create":
    print(json.dumps([jobs.create_job(prompt=f"say {s}", schedule=s, name=s)["id"] for s in argument]))
elif action == "read":
    job = jobs.get_job(argument)
    print(json.dumps({"job": job, "due": [j["id"] for j in jobs.get_due_jobs()]}))
else:
    out = {}
    for text in argument:
        try:
            parsed = jobs.parse_schedule(text)
            out[text] = [parsed, jobs.compute_next_run(parsed), jobs.compute_next_run(parsed, "2026-06-14T23:59:00")]
        except ValueError as exc:
            out[text] = ["error", str(exc).splitlines()[0]]
    print(json.dumps(out))
"""


def hermes_agent_cron(python: str, home: Path, now: datetime, action: str, argument: Any,
                      zone: str = "UTC") -> Any:
    code = HERMES_AGENT_CRON.replace("import cron.jobs as jobs",
                                     "import cron.jobs as jobs\njobs._hermes_now_real = jobs._hermes_now")
    result = subprocess.run([python, "-c", code, now.isoformat(), action, json.dumps(argument)], capture_output=True,
                            text=True, timeout=scaled_timeout(120), cwd=home,
                            env={**os.environ, "HERMES_HOME": str(home), "HERMES_TIMEZONE": zone})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


FORMS = ["30m", "45 min", "2h", "3 hours", "1d", "2 days", "every 30m", "every 2h", "every 90 minutes", "every 1d",
         "0 9 * * *", "*/15 * * * *", "0 9 * * 1-5", "30 8 1 * *", "0 0,12 * * 0,6", "5 4 * * 0", "* * * * * */10",
         "2026-09-01T09:00:00", "2026-09-01T09:00", "2026-09-01T09:00:00Z", "2026-09-01T09:00:00+05:30",
         "2026-09-01", "2026-06-15T06:29:00", "2026-06-01T09:00:00",
         "0 9 * * MON", "every fortnight", "soon", "61 * * * *", "2026-13-01T09:00", "Tuesday"]


@pytest.mark.parametrize("zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_every_schedule_form_gives_hermes_agents_next_run(hermes_agent, tmp_path, zone):
    from zoneinfo import ZoneInfo

    from hermes_plugin_cron.clock import Clock
    from hermes_plugin_cron.schedules import ScheduleError, compute_next_run, parse_schedule

    # no daylight-saving change between now and the next runs: across one, Hermes Agent 0.19's croniter 6.0.0 puts
    # a run an hour off the wall clock (docs/cron.md), and Hermes (croniter 7) does not
    now = datetime(2026, 6, 15, 6, 30, tzinfo=UTC)
    theirs = hermes_agent_cron(hermes_agent.python, tmp_path, now, "parse", FORMS, zone)

    class Fixed(Clock):
        def now(self) -> datetime:
            return now.astimezone(self.zone)

    clock = Fixed(ZoneInfo(zone))
    ours: dict[str, Any] = {}
    for text in FORMS:
        try:
            parsed = parse_schedule(text, clock)
            anchored = compute_next_run(parsed, clock, "2026-06-14T23:59:00")
            ours[text] = [parsed, compute_next_run(parsed, clock), anchored]
        except ScheduleError as exc:
            ours[text] = ["error", str(exc).splitlines()[0]]
    assert ours == theirs


def test_a_jobs_file_hermes_agent_wrote_is_listed_with_its_schedules_and_next_runs(hermes_agent, home):
    schedules = ["30m", "every 2h", "0 9 * * *", "*/10 * * * * */30", "2026-06-01T09:00:00"]
    ids = hermes_agent_cron(hermes_agent.python, home.home, START, "create", schedules)
    written = {job["id"]: job for job in json.loads((home.home / "cron" / "jobs.json").read_text())["jobs"]}
    listed = {job["id"]: job for job in home.json("cron", "list", "--all")}
    assert sorted(listed) == sorted(ids)
    for job_id in ids:
        assert {key: listed[job_id][key] for key in ("name", "schedule", "schedule_display", "next_run_at", "repeat")} \
            == {key: written[job_id][key] for key in ("name", "schedule", "schedule_display", "next_run_at", "repeat")}
    table = home.hermes("cron", "list").stdout
    assert all(written[job_id]["next_run_at"] in table for job_id in ids)


def test_a_prompt_job_hermes_agent_wrote_runs_here_through_the_configured_endpoint(hermes_agent, home):
    [job_id] = hermes_agent_cron(hermes_agent.python, home.home, START, "create", ["every 2h"])
    with fakes.fake_provider([], text="Nothing to report but this.") as fake:
        config = {"delegation": {"base_url": f"{fake.url}/v1", "model": "default-model"}}
        (home.home / "config.yaml").write_text(yaml.safe_dump(config))
        home.set_time(START + timedelta(hours=2))
        [report] = home.json("cron", "tick")
    assert report["job_id"] == job_id and report["success"] is True, report
    assert fake.bodies("/chat/completions")[0]["messages"][1]["content"].endswith("say every 2h")
    document = Path(report["output"]).read_text()
    assert document.startswith("# Cron Job: every 2h\n") and "## Response\n\nNothing to report but this." in document
    read = hermes_agent_cron(hermes_agent.python, home.home, START + timedelta(hours=2), "read", job_id)
    assert read["job"]["last_status"] == "ok"  # Hermes Agent reads the run recorded here


def test_a_job_made_with_the_cronjob_tool_is_read_and_run_by_hermes_agent(hermes_agent, home):
    answer = json.loads(home.hermes("tools", "call", "cronjob", json.dumps({
        "action": "create", "schedule": "0 9 * * *", "tool": "mark", "arguments": {"label": "both"},
        "name": "shared"})).stdout)
    job_id = answer["job_id"]
    read = hermes_agent_cron(hermes_agent.python, home.home, datetime(2026, 3, 3, 9, 0, 10, tzinfo=UTC), "read", job_id)
    job = read["job"]
    assert (job["name"], job["schedule"], job["next_run_at"]) == \
        ("shared", {"kind": "cron", "expr": "0 9 * * *", "display": "0 9 * * *"}, "2026-03-03T09:00:00+00:00")
    assert job["prompt"].startswith("Call the tool `mark`") and read["due"] == [job_id]


def test_the_deployment_page_shows_the_cron_manifest():
    root = Path(__file__).resolve().parent.parent
    manifest = (root / "deploy" / "kubernetes" / "hermes-cron.yaml").read_text()
    assert manifest in (root / "docs" / "deploy.md").read_text()
    job = yaml.safe_load(manifest)
    container = job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["args"] == ["hermes", "cron", "tick"] and job["spec"]["concurrencyPolicy"] == "Forbid"

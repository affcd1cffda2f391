"""``hermes cron list|show|add|pause|resume|remove|run|tick|serve``: the home's scheduled jobs, through the cron
pack's scheduler (``Runtime.cron``); nothing of the pack is imported until one of these runs."""

from __future__ import annotations

import json
import signal
import threading
from types import FrameType
from typing import TYPE_CHECKING, Any

import click

from ._common import echo_json, runtime
from .safetext import printable
from .table import Column, echo_table, state_colour

if TYPE_CHECKING:
    from ..cron import CronScheduler

__all__ = ["cron"]


@click.group()
def cron() -> None:
    """Scheduled jobs: list and change them, run what is due (tick) or keep running (serve)."""


def _scheduler(unattended: bool = False) -> CronScheduler:
    rt = runtime()
    if unattended:  # a scheduled run has nobody to ask: a call that needs approval is refused
        rt.set_approval_callback(lambda request: "deny")
    return rt.cron


def _row(job: dict[str, Any]) -> list[str]:
    last = job.get("last_status") or ""
    if last and job.get("last_run_at"):
        last = f"{last} {job['last_run_at']}"
    return [job["id"], job["name"], job["schedule_display"], job.get("next_run_at") or "-", last, job["state"]]


@cron.command("list")
@click.option("--all", "show_all", is_flag=True, help="Include paused and completed jobs.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def list_jobs(show_all: bool, as_json: bool) -> None:
    """List the scheduled jobs of $HERMES_HOME/cron/jobs.json with their schedules and next runs."""
    scheduler = _scheduler()
    jobs = scheduler.jobs(include_disabled=show_all)
    for problem in scheduler.problems():
        click.echo(printable(f"warning: jobs.json: {problem} (repaired on the next write)", lines=False), err=True)
    if as_json:
        echo_json(jobs)
        return
    if not jobs:
        click.echo("No scheduled jobs. Create one with `hermes cron add` or the cronjob tool.")
        return
    echo_table([Column("ID"), Column("NAME", shrink=True), Column("SCHEDULE"), Column("NEXT RUN"),
                Column("LAST RUN", shrink=True), Column("STATE", colour=state_colour)], [_row(job) for job in jobs])


@cron.command("show")
@click.argument("job_id")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def show(job_id: str, as_json: bool) -> None:
    """Show one job (by id or name) as stored."""
    job = _scheduler().job(job_id)
    if as_json:
        echo_json(job)
        return
    for key in ("id", "name", "schedule_display", "state", "next_run_at", "last_run_at", "last_status", "last_error",
                "last_delivery_error", "deliver", "tool", "arguments", "prompt", "skills", "repeat"):
        value = job.get(key)
        if value not in (None, "", [], {}):
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            click.echo(printable(f"{key + ':':<20} {text}", lines=key == "prompt"))


@cron.command("add")
@click.argument("schedule")
@click.argument("prompt", required=False)
@click.option("--tool", help="Call this tool on schedule (no model), e.g. web_extract.")
@click.option("--arguments", default=None, metavar="JSON", help="The tool's arguments, a JSON object.")
@click.option("--name", help="A name for the job.")
@click.option("--repeat", type=int, help="How many runs (default: once for a one-shot, forever otherwise).")
@click.option("--deliver", help="local (default), file:<path in the workspace>, or an http(s) webhook URL.")
@click.option("--skill", "skills", multiple=True, help="A skill to load before the prompt (repeatable).")
@click.option("--toolsets", help="A prompt job's toolsets, comma-separated.")
@click.option("--model", help="The model a prompt job asks (default: delegation.model).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def add(schedule: str, prompt: str | None, tool: str | None, arguments: str | None, name: str | None,
        repeat: int | None, deliver: str | None, skills: tuple[str, ...], toolsets: str | None, model: str | None,
        as_json: bool) -> None:
    """Schedule a job: SCHEDULE is '30m' (once), 'every 2h', a cron expression ('0 9 * * *') or an ISO time; the job
    runs PROMPT for a model, or calls --tool with --arguments."""
    job = _scheduler().create(schedule, prompt=prompt, tool=tool, arguments=arguments, name=name, repeat=repeat,
                              deliver=deliver, skills=list(skills) or None, model=model,
                              enabled_toolsets=toolsets.split(",") if toolsets else None)
    if as_json:
        echo_json(job)
        return
    click.echo(printable(f"Created job {job['id']} ({job['name']}): {job['schedule_display']}, next run "
                         f"{job['next_run_at']}", lines=False))


def _change(verb: str, job: dict[str, Any]) -> None:
    click.echo(printable(f"{verb} job {job['id']} ({job['name']})", lines=False)
               + (f"; next run {job['next_run_at']}" if verb == "Resumed" and job.get("next_run_at") else ""))


@cron.command("pause")
@click.argument("job_id")
@click.option("--reason", help="Recorded on the job.")
def pause(job_id: str, reason: str | None) -> None:
    """Pause a job (it keeps its settings; resume schedules it again)."""
    _change("Paused", _scheduler().pause(job_id, reason))


@cron.command("resume")
@click.argument("job_id")
def resume(job_id: str) -> None:
    """Resume a paused job; its next run is computed from now."""
    _change("Resumed", _scheduler().resume(job_id))


@cron.command("remove")
@click.argument("job_id")
def remove(job_id: str) -> None:
    """Remove a job and its output files."""
    _change("Removed", _scheduler().remove(job_id))


def _reports(reports: list[Any], as_json: bool, empty: str) -> None:
    if as_json:
        echo_json([report.as_dict() for report in reports])
        return
    if not reports:
        click.echo(empty)
    for report in reports:
        outcome = "ok" if report.success else f"failed: {report.error}"
        delivery = f" (delivery failed: {report.delivery_error})" if report.delivery_error else ""
        click.echo(printable(f"{report.job_id} {report.name}: {outcome}{delivery}", lines=False))


@cron.command("run")
@click.argument("job_id")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def run(job_id: str, as_json: bool) -> None:
    """Run a job now, due or not (no other scheduler runs it meanwhile)."""
    report = _scheduler(unattended=True).run(job_id)
    _reports([report], as_json, "")
    if not report.success:
        raise click.exceptions.Exit(1)


@cron.command("tick")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def tick(as_json: bool) -> None:
    """Run every due job once and exit (for systemd timers, Kubernetes CronJobs and cron)."""
    _reports(_scheduler(unattended=True).tick(), as_json, "No jobs due.")


@cron.command("serve")
@click.option("--interval", type=click.FloatRange(0.05), default=1.0, show_default=True, metavar="SECONDS",
              help="How often to look for due jobs.")
@click.option("--drain-timeout", type=click.FloatRange(0), default=30.0, show_default=True, metavar="SECONDS",
              help="After SIGTERM, how long runs in flight may take; those still running are recorded as failed.")
def serve(interval: float, drain_timeout: float) -> None:
    """Run jobs as they fall due until SIGTERM or Ctrl-C, then drain: no new run starts, the runs in flight get
    --drain-timeout seconds, and the process exits 0."""
    scheduler = _scheduler(unattended=True)
    stop = threading.Event()

    def stopping(sig: int, frame: FrameType | None) -> None:
        if not stop.is_set():
            click.echo(f"{signal.Signals(sig).name}: draining (up to {drain_timeout:g} s for the runs in flight)",
                       err=True)
        stop.set()

    previous = {sig: signal.signal(sig, stopping) for sig in (signal.SIGINT, signal.SIGTERM)}
    click.echo(f"Hermes cron scheduler running (looking every {interval:g} s); SIGTERM drains and stops it", err=True)
    try:
        cut = scheduler.serve(stop, interval=interval, drain_timeout=drain_timeout)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if cut:
        click.echo(f"{cut} run(s) did not finish within the drain timeout: recorded as failed", err=True)


"""``cronjob``: Hermes Agent 0.19's single tool for scheduled jobs — create, list, update, pause, resume, remove
and run — with its answers and refusals, plus tool jobs (``tool`` + ``arguments``)."""

from __future__ import annotations

from typing import Any

from hermes_core.errors import CronError
from hermes_core.plugin import tool_context, tool_error

from .records import format_job, repeat_display
from .scheduler import JobNotFound, Scheduler
from .store import AmbiguousJob

__all__ = ["cronjob"]

_FIELDS = ("prompt", "tool", "arguments", "name", "repeat", "deliver", "skills", "model", "enabled_toolsets",
           "context_from", "script", "no_agent", "workdir", "base_url", "attach_to_session")
LOCAL_NOTICE = ("This is a local-only cron job: its output is saved under cron/output (see cronjob(action='list')) but "
                "not delivered anywhere else. To have each run's result delivered, update the job with deliver set to "
                "'file:<path in the workspace>' or an http(s) webhook URL.")


def cronjob(args: dict[str, Any], **kwargs: Any) -> dict[str, Any] | str:
    """Manage scheduled jobs with one tool, as Hermes Agent's ``cronjob``."""
    scheduler = Scheduler(tool_context())  # per call: config edits apply at once
    action = str(args.get("action") or "").strip().lower()
    try:
        return _act(scheduler, action, args)
    except AmbiguousJob as exc:
        return {"success": False, "error": str(exc),
                "matches": [{"id": job["id"], "name": job.get("name"), "schedule": job.get("schedule_display"),
                             "next_run_at": job.get("next_run_at")} for job in exc.matches]}
    except JobNotFound as exc:
        return {"success": False, "error": f"Job with ID or name '{exc.ref}' not found. Use cronjob(action='list') to "
                                           "inspect jobs."}
    except CronError as exc:
        return tool_error(str(exc), success=False)


def _act(scheduler: Scheduler, action: str, args: dict[str, Any]) -> dict[str, Any] | str:
    fields = {key: args.get(key) for key in _FIELDS}
    if action == "create":
        if skill := args.get("skill"):  # Hermes Agent's single-skill spelling
            fields["skills"] = [skill, *(fields["skills"] or [])]
        job = scheduler.create(args.get("schedule"), **fields)
        summary = format_job(job)
        message = f"Cron job '{job['name']}' created."
        if job.get("deliver", "local") == "local" and (args.get("deliver") or "").strip().lower() != "local":
            message = f"{message} {LOCAL_NOTICE}"
        return {"success": True, "job_id": job["id"], "name": job["name"], "skill": job.get("skill"),
                "skills": job.get("skills", []), "schedule": job["schedule_display"], "repeat": repeat_display(job),
                "deliver": job.get("deliver", "local"), "next_run_at": job["next_run_at"], "job": summary,
                "message": message}
    if action == "list":
        jobs = [format_job(job) for job in scheduler.jobs(include_disabled=args.get("include_disabled", True)
                                                          is not False)]
        return {"success": True, "count": len(jobs), "jobs": jobs}
    if action not in {"update", "pause", "resume", "remove", "run", "run_now", "trigger"}:
        if not action:
            return tool_error("action is required: one of create, list, update, pause, resume, remove, run",
                              success=False)
        return tool_error(f"Unknown cron action '{action}'", success=False)
    ref = str(args.get("job_id") or "").strip()
    if not ref:
        return tool_error(f"job_id is required for action '{action}'", success=False)
    job = scheduler.job(ref)
    if action == "remove":
        scheduler.remove(job["id"])
        return {"success": True, "message": f"Cron job '{job['name']}' removed.",
                "removed_job": {"id": job["id"], "name": job["name"], "schedule": job.get("schedule_display")}}
    if action == "pause":
        return {"success": True, "job": format_job(scheduler.pause(job["id"], args.get("reason")))}
    if action == "resume":
        return {"success": True, "job": format_job(scheduler.resume(job["id"]))}
    if action == "update":
        changes = {key: value for key, value in {**fields, "schedule": args.get("schedule")}.items()
                   if value is not None}
        return {"success": True, "job": format_job(scheduler.update(job["id"], **changes))}
    return _run(scheduler, job)


def _run(scheduler: Scheduler, job: dict[str, Any]) -> dict[str, Any]:
    """Run now (Hermes Agent's answer: the job after the run, with executed / execution_success)."""
    try:
        report = scheduler.run(job["id"])
    except JobNotFound:
        raise
    except CronError as exc:  # not runnable now: paused, or already running
        summary = format_job(job)
        summary.update(executed=False, execution_success=False, execution_skipped=str(exc))
        return {"success": True, "job": summary}
    try:
        summary = format_job(scheduler.job(job["id"]))
    except JobNotFound:  # a one-shot is gone once its runs are used up
        summary = format_job(job)
    summary.update(executed=True, execution_success=report.success)
    if report.error:
        summary["execution_error"] = report.error
    return {"success": True, "job": summary}

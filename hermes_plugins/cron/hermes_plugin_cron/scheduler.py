"""The scheduler of one home: its jobs (create, change, pause, resume, remove), ``tick`` (run what is due, once)
and ``serve`` (keep ticking until stopped, then drain). ``Runtime.cron`` and the ``cronjob`` tool both use it."""

from __future__ import annotations

import concurrent.futures
import contextlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_core.errors import CronError

from .clock import Clock
from .delivery import DeliveryRefused, check_targets, normalize_deliver
from .output import failed_outcome, save_output
from .prompts import BLOCKED_TOOLS
from .records import canonical_skills, is_safe_id, new_id, new_job, normalized, tool_prompt
from .runner import SCRIPT_JOBS, Host, Runner, RunReport
from .scan import prompt_refusal
from .schedules import ONESHOT_GRACE_SECONDS, ScheduleError, compute_next_run, parse_schedule
from .store import Claim, JobStore, Loaded

if TYPE_CHECKING:
    from hermes_core import Runtime
    from hermes_core.plugin import ToolContext

__all__ = ["JobNotFound", "Scheduler", "scheduler_for"]

log = logging.getLogger(__name__)

DEFAULT_PARALLEL = 8
DEFAULT_TIMEOUT = 600.0
#: Hermes Agent's fields a job made here cannot use, and why.
UNSUPPORTED = {
    "script": SCRIPT_JOBS, "no_agent": SCRIPT_JOBS,
    "workdir": "workdir is Hermes Agent's; here a job's tools work in the scheduler's workspace (HERMES_WORKSPACE)",
    "base_url": "a per-job base_url is not accepted (it could send a provider's key elsewhere)",
    "attach_to_session": "attach_to_session needs Hermes Agent's messaging gateway, which Hermes does not run",
}


class JobNotFound(CronError):
    """No job has that id or name."""

    def __init__(self, ref: str) -> None:
        self.ref = ref
        super().__init__(f"no job with id or name {ref!r}")


@dataclass(frozen=True)
class Settings:
    """``cron:`` of config.yaml and Hermes Agent's variables."""

    max_parallel: int = DEFAULT_PARALLEL  #: ``HERMES_CRON_MAX_PARALLEL``, else ``cron.max_parallel_jobs``
    keep: int = 50  #: ``cron.output_retention``: output files kept per job (0 keeps all)
    timeout: float | None = DEFAULT_TIMEOUT  #: ``HERMES_CRON_TIMEOUT`` seconds a run may take (0: no limit)


class Scheduler:
    """The jobs of the home of ``context`` (a tool context of the ``cron`` plugin), run on its runtime."""

    def __init__(self, context: ToolContext, environ: Mapping[str, str] | None = None) -> None:
        self.context = context
        self.environ = os.environ if environ is None else environ
        self.clock = Clock.configured(self.environ, context.home.config_data().get("timezone"))
        self.store = JobStore(context.home.root / "cron", self.clock)
        self.settings = _settings(context.section("cron"), self.environ)
        host = Host(context.dispatch, context.delegate_batch, context.skills, context.workspace, self._allow_private,
                    self._max_turns)
        self.runner = Runner(self.store, self.clock, host, self.settings.keep, self.settings.timeout)

    def _allow_private(self) -> bool:
        return bool(self.context.section("web").get("allow_private_networks"))

    def _max_turns(self) -> int | None:
        turns = self.context.section("agent").get("max_turns")
        return turns if isinstance(turns, int) and not isinstance(turns, bool) and turns > 0 else None

    # -- jobs ---------------------------------------------------------------------------------------------------

    def jobs(self, include_disabled: bool = True) -> list[dict[str, Any]]:
        """Every job (read-safe records), paused ones unless ``include_disabled`` is False."""
        return [job for job in self.store.jobs() if include_disabled or job.get("enabled", True)]

    def problems(self) -> list[str]:
        """What the jobs file needs repaired (the next write repairs it)."""
        return self.store.read().repairs

    def job(self, ref: str) -> dict[str, Any]:
        """The job with id (or name) ``ref``; :class:`JobNotFound` otherwise."""
        job = self.store.resolve(self.store.read(), ref)
        if job is None:
            raise JobNotFound(ref)
        return normalized(job)

    def create(self, schedule: str | None, *, prompt: str | None = None, tool: str | None = None,
               arguments: Any = None, name: str | None = None, repeat: int | None = None, deliver: Any = None,
               skills: Any = None, model: Any = None, enabled_toolsets: Any = None, context_from: Any = None,
               **others: Any) -> dict[str, Any]:
        """A new job (Hermes Agent's ``create_job``, with its refusals); ``tool`` + ``arguments`` make a tool job."""
        if not schedule:
            raise CronError("schedule is required for create")
        _refuse_unsupported(others)
        names = canonical_skills(None, skills)
        call = self._tool_call(tool, arguments) if tool is not None else None
        if call is None and not prompt and not names:
            raise CronError("create requires either prompt or at least one skill (or a tool to call)")
        self._check_prompt(prompt)
        parsed = self._schedule(schedule)
        if repeat is not None and repeat <= 0:
            repeat = None
        if parsed["kind"] == "once" and repeat is None:
            repeat = 1
        target = self._deliver(deliver)
        next_run = compute_next_run(parsed, self.clock)
        if parsed["kind"] == "once" and next_run is None:
            raise CronError(f"Requested one-shot time {parsed.get('run_at')} is more than {ONESHOT_GRACE_SECONDS}s "
                            "in the past and cannot be scheduled.")
        model_name = _model(model)
        job = new_job(job_id=new_id(), now=self.clock.now().isoformat(), name=name,
                      prompt=prompt or (tool_prompt(*call) if call else ""), schedule=parsed, next_run_at=next_run,
                      repeat=repeat, deliver=target or "local", skills=names, model=model_name,
                      enabled_toolsets=_names(enabled_toolsets), context_from=None, tool=call[0] if call else None,
                      arguments=call[1] if call else None)
        with self.store.edit() as loaded:
            job["context_from"] = self._context_from(loaded, context_from)
            loaded.entries.append(job)
            loaded.changed = True
        return normalized(job)

    def update(self, ref: str, **changes: Any) -> dict[str, Any]:
        """Change a job (Hermes Agent's ``update_job``): only the fields given; a new schedule is due anew."""
        _refuse_unsupported(changes)
        with self.store.edit() as loaded:
            job = self._find(loaded, ref)
            updates: dict[str, Any] = {}
            if changes.get("prompt") is not None:
                self._check_prompt(changes["prompt"])
                updates["prompt"] = changes["prompt"]
            if changes.get("name") is not None:
                updates["name"] = changes["name"]
            if changes.get("deliver") is not None:
                updates["deliver"] = self._deliver(changes["deliver"]) or "local"
            if changes.get("skills") is not None:
                names = canonical_skills(None, changes["skills"])
                updates["skills"], updates["skill"] = names, names[0] if names else None
            if changes.get("model") is not None:
                updates["model"] = _model(changes["model"])
            if changes.get("enabled_toolsets") is not None:
                updates["enabled_toolsets"] = _names(changes["enabled_toolsets"])
            if changes.get("context_from") is not None:
                updates["context_from"] = self._context_from(loaded, changes["context_from"])
            if changes.get("tool") is not None or changes.get("arguments") is not None:
                tool = changes.get("tool") if changes.get("tool") is not None else job.get("tool")
                arguments = changes.get("arguments") if changes.get("arguments") is not None else job.get("arguments")
                updates["tool"], updates["arguments"] = self._tool_call(tool, arguments)
            if changes.get("repeat") is not None:
                repeat = changes["repeat"]
                state = dict(job.get("repeat") or {})
                state["times"] = None if repeat <= 0 else repeat
                updates["repeat"] = state
            if changes.get("schedule") is not None:
                parsed = self._schedule(changes["schedule"])
                updates["schedule"], updates["schedule_display"] = parsed, parsed.get("display", changes["schedule"])
                if job.get("state") != "paused":
                    next_run = compute_next_run(parsed, self.clock)
                    if next_run is None and parsed["kind"] == "once":
                        raise CronError(f"Requested one-shot time {parsed.get('run_at')} is more than "
                                        f"{ONESHOT_GRACE_SECONDS}s in the past and cannot be scheduled.")
                    updates.update(next_run_at=next_run, state="scheduled", enabled=True)
            if not updates:
                raise CronError("No updates provided.")
            job.update(updates)
            loaded.changed = True
            return normalized(job)

    def pause(self, ref: str, reason: str | None = None) -> dict[str, Any]:
        with self.store.edit() as loaded:
            job = self._find(loaded, ref)
            job.update(enabled=False, state="paused", paused_at=self.clock.now().isoformat(), paused_reason=reason)
            loaded.changed = True
            return normalized(job)

    def resume(self, ref: str) -> dict[str, Any]:
        """Schedule a paused job again, its next run computed from now."""
        with self.store.edit() as loaded:
            job = self._find(loaded, ref)
            next_run = compute_next_run(job.get("schedule"), self.clock)
            if next_run is None and (job.get("schedule") or {}).get("kind") == "once":
                raise CronError(f"Cannot resume: one-shot time {job['schedule'].get('run_at', 'unknown')} is in the "
                                f"past (grace window: {ONESHOT_GRACE_SECONDS}s) and will never fire.")
            job.update(enabled=True, state="scheduled", paused_at=None, paused_reason=None, next_run_at=next_run)
            loaded.changed = True
            return normalized(job)

    def remove(self, ref: str) -> dict[str, Any]:
        """Delete a job and its output folder."""
        with self.store.edit() as loaded:
            job = self._find(loaded, ref)
            loaded.remove(job)
        if is_safe_id(job["id"]):
            shutil.rmtree(self.store.output_dir / str(job["id"]), ignore_errors=True)
        return normalized(job)

    def _find(self, loaded: Loaded, ref: str) -> dict[str, Any]:
        job = self.store.resolve(loaded, ref)
        if job is None:
            raise JobNotFound(ref)
        return job

    # -- what a job may be --------------------------------------------------------------------------------------

    def _schedule(self, schedule: Any) -> dict[str, Any]:
        try:
            return parse_schedule(schedule, self.clock)
        except ScheduleError as exc:
            raise CronError(str(exc)) from None

    def _check_prompt(self, prompt: Any) -> None:
        if prompt is not None and not isinstance(prompt, str):
            raise CronError(f"prompt must be text, not {type(prompt).__name__}")
        refusal = prompt_refusal(prompt) if prompt else None
        if refusal:
            raise CronError(refusal)

    def _deliver(self, deliver: Any) -> str | None:
        target = normalize_deliver(deliver)
        try:
            check_targets(target, self._allow_private())
        except DeliveryRefused as exc:
            raise CronError(f"deliver {target!r} refused: {exc}") from None
        return target

    def _tool_call(self, tool: Any, arguments: Any) -> tuple[str, dict[str, Any]]:
        """A tool job's call, checked: a tool offered here (not the scheduler itself nor one that needs a user) and an
        object of arguments (JSON text accepted)."""
        if not isinstance(tool, str) or not tool.strip():
            raise CronError("tool must be the name of a tool, e.g. 'web_extract'")
        tool = tool.strip()
        if tool in BLOCKED_TOOLS:
            raise CronError(f"a job may not call {tool!r}: jobs run with no user and do not schedule jobs")
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError as exc:
                raise CronError(f"arguments is not valid JSON: {exc}") from None
        arguments = {} if arguments is None else arguments
        if not isinstance(arguments, dict):
            raise CronError(f"arguments must be an object of the tool's arguments, not {type(arguments).__name__}")
        if tool not in self.context.available_tools():
            raise CronError(f"the tool {tool!r} is not available here (hermes tools list shows the tools); a job "
                            "may call only a tool this runtime offers")
        return tool, arguments

    def _context_from(self, loaded: Loaded, refs: Any) -> list[str] | None:
        names = [refs.strip()] if isinstance(refs, str) else [str(r).strip() for r in refs or ()]
        names = [name for name in names if name]
        for ref in names:
            if loaded.find(ref) is None:
                raise CronError(f"context_from job '{ref}' not found. Use cronjob(action='list') to see available "
                                "jobs.")
        return names or None

    # -- running ------------------------------------------------------------------------------------------------

    def run(self, ref: str) -> RunReport:
        """Run a job now, due or not (claimed like a scheduled run, so no other scheduler runs it meanwhile)."""
        return self.runner.run(self.store.claim_now(self.job(ref)["id"]))

    def tick(self) -> list[RunReport]:
        """Run every due job once (at most ``max_parallel`` at a time) and return how each went; runs whose
        scheduler died are reported as failed."""
        reports: list[RunReport] = []
        claimed: set[str] = set()
        with concurrent.futures.ThreadPoolExecutor(self.settings.max_parallel, "cron-tick") as pool:
            while True:
                claims = self.store.claim_due(self.settings.max_parallel, self._crashed(reports), exclude=claimed)
                if not claims:
                    return reports
                claimed.update(claim.job["id"] for claim in claims)
                reports.extend(pool.map(self.runner.run, claims))

    def serve(self, stop: threading.Event, interval: float = 1.0, drain_timeout: float = 30.0) -> int:
        """Run jobs as they fall due until ``stop`` is set, then give the runs in flight ``drain_timeout`` seconds;
        those still running are recorded as failed (interrupted). Returns how many were."""
        running: dict[threading.Thread, Claim] = {}
        problem = None
        while not stop.is_set():
            running = {thread: claim for thread, claim in running.items() if thread.is_alive()}
            free = self.settings.max_parallel - len(running)
            try:
                claims = self.store.claim_due(free, self._crashed([])) if free > 0 else []
                problem = None
            except Exception as exc:  # a corrupt jobs.json, a lock held too long...: said once, tried again
                if str(exc) != problem:
                    log.error("cannot look for due jobs: %s", exc, exc_info=not isinstance(exc, CronError))
                problem, claims = str(exc), []
            for claim in claims:
                thread = threading.Thread(target=self.runner.run, args=(claim,), daemon=True,
                                          name=f"cron-run-{claim.job['id']}")
                thread.start()
                running[thread] = claim
            stop.wait(interval)
        deadline = time.monotonic() + drain_timeout
        for thread in running:
            thread.join(max(0.0, deadline - time.monotonic()))
        interrupted = [claim for thread, claim in running.items() if thread.is_alive()]
        for claim in interrupted:
            self._interrupt(claim, drain_timeout)
        return len(interrupted)

    def _crashed(self, reports: list[RunReport]) -> Any:
        def record(job: dict[str, Any], error: str) -> None:
            with contextlib.suppress(OSError):
                reports.append(self.runner.record_crash(job, error))

        return record

    def _interrupt(self, claim: Claim, drain_timeout: float) -> None:
        error = (f"Interrupted: the scheduler was stopped and the run had not finished {drain_timeout:g} s later "
                 "(--drain-timeout); it is recorded as failed and not run again.")
        job = normalized(claim.job)
        with contextlib.suppress(OSError):
            now = self.clock.now()
            save_output(self.store.output_dir, job["id"], failed_outcome(job, now, error).document, now,
                        self.settings.keep)
        self.store.finish(claim, False, error, None)


def scheduler_for(runtime: Runtime) -> Scheduler:
    """The scheduler of ``runtime``'s home (what ``Runtime.cron`` returns)."""
    return Scheduler(runtime.tool_context("cron"), runtime.environ)


def _settings(section: Mapping[str, Any], environ: Mapping[str, str]) -> Settings:
    def number(raw: Any, name: str) -> float:
        try:
            return float(raw)
        except (TypeError, ValueError):
            raise CronError(f"{name} must be a number, not {raw!r}") from None

    parallel = environ.get("HERMES_CRON_MAX_PARALLEL", "").strip() or section.get("max_parallel_jobs")
    timeout = environ.get("HERMES_CRON_TIMEOUT", "").strip() or DEFAULT_TIMEOUT
    seconds = number(timeout, "HERMES_CRON_TIMEOUT")
    return Settings(max_parallel=max(1, int(number(parallel, "max_parallel_jobs"))) if parallel else DEFAULT_PARALLEL,
                    keep=int(number(section.get("output_retention", 50), "cron.output_retention")),
                    timeout=seconds if seconds > 0 else None)


def _refuse_unsupported(fields: Mapping[str, Any]) -> None:
    for key, value in fields.items():
        if key in UNSUPPORTED and value not in (None, "", False, []):
            raise CronError(UNSUPPORTED[key])


def _names(value: Any) -> list[str] | None:
    items = [value] if isinstance(value, str) else value if isinstance(value, list | tuple) else []
    return [str(item).strip() for item in items if str(item).strip()] or None


def _model(value: Any) -> str | None:
    """A model override: a name, or Hermes Agent's ``{"model": ..., "provider": ...}`` (the model name is kept)."""
    if isinstance(value, dict):
        value = value.get("model")
    return str(value).strip() or None if value is not None else None


"""One claimed run, end to end as in Hermes Agent: execute (a tool call, or a prompt for a model), save the output
file, deliver, then record the result on the job (which lets its claim go)."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from hermes_core.errors import CronError

from .clock import Clock
from .delivery import DeliveryRefused, deliver, targets
from .output import Outcome, failed_outcome, prompt_outcome, save_output, tool_outcome
from .prompts import BLOCKED_TOOLS, NO_USER, Delegate, PromptTask, PromptUnavailable, answer, build_prompt
from .records import normalized
from .store import Claim, JobStore

__all__ = ["SCRIPT_JOBS", "RunReport", "Runner"]

log = logging.getLogger(__name__)

SCRIPT_JOBS = ("script jobs (script, no_agent) are Hermes Agent's: Hermes does not run scripts from the home; give "
               "the job a tool call instead, e.g. tool 'terminal' with arguments {\"command\": ...}")
_SILENCE = frozenset({"[SILENT]", "SILENT", "NO_REPLY", "NO REPLY"})


@dataclass(frozen=True)
class RunReport:
    """How one run went."""

    job_id: str
    name: str
    success: bool
    error: str | None
    delivery_error: str | None
    output: str | None  #: the output file written

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Host:
    """What runs need of the runtime: its tools, sub-agents, skills and workspace, and the settings of the moment."""

    dispatch: Callable[..., str]
    delegate: Delegate
    skills: Callable[[], Any]
    workspace: Path
    allow_private: Callable[[], bool]
    #: ``agent.max_turns``: the most model turns a prompt job takes (None: ``delegation.max_iterations``).
    max_turns: Callable[[], int | None]


class Runner:
    """Runs claimed jobs of one store on one host."""

    def __init__(self, store: JobStore, clock: Clock, host: Host, keep: int, timeout: float | None) -> None:
        self.store, self.clock, self.host, self.keep, self.timeout = store, clock, host, keep, timeout

    def run(self, claim: Claim) -> RunReport:
        """Execute ``claim``, write its output, deliver it and record it; never raises for the job's own faults."""
        job = normalized(claim.job)
        started = self.clock.now()
        outcome = self._bounded(job, started)
        output: str | None = None
        delivery_error = None
        try:
            output = str(save_output(self.store.output_dir, job["id"], outcome.document, started, self.keep))
        except OSError as exc:
            log.error("job %s: cannot save its output: %s", job["id"], exc)
            outcome = Outcome(False, outcome.document, outcome.response, f"cannot save the output: {exc}")
        if outcome.success and job.get("tool") is None and not outcome.response.strip():
            outcome = Outcome(False, outcome.document, "", "Agent completed but produced empty response")
        if not (outcome.success and _silent(outcome.response)):
            delivery_error = self._deliver(job, outcome, started, output)
        error = outcome.error
        try:
            self.store.finish(claim, outcome.success, error, delivery_error)
        except CronError as exc:  # the claim stays: the next scheduler records the run as failed, never runs it again
            log.error("job %s: the end of its run could not be recorded: %s", job["id"], exc)
            return RunReport(job["id"], job["name"], False, f"the end of the run could not be recorded: {exc}",
                             delivery_error, output)
        return RunReport(job["id"], job["name"], outcome.success, error, delivery_error, output)

    def record_crash(self, job: dict[str, Any], error: str) -> RunReport:
        """The output file of a run whose scheduler died (the store has recorded it as failed)."""
        job = normalized(job)
        when = self.clock.now()
        output = str(save_output(self.store.output_dir, job["id"], failed_outcome(job, when, error).document, when,
                                 self.keep))
        log.warning("job %s: %s", job["id"], error)
        return RunReport(job["id"], job["name"], False, error, None, output)

    def _bounded(self, job: dict[str, Any], started: datetime) -> Outcome:
        """The run's outcome, or a failure when it takes longer than the timeout (its thread is left behind)."""
        done: list[Outcome] = []
        worker = threading.Thread(target=lambda: done.append(self._outcome(job, started)), daemon=True,
                                  name=f"cron-{job['id']}")
        worker.start()
        worker.join(self.timeout)
        if done:
            return done[0]
        if worker.is_alive():
            return failed_outcome(job, started, f"timed out after {self.timeout:g} s (HERMES_CRON_TIMEOUT); the run "
                                                "was abandoned")
        return failed_outcome(job, started, "the run ended without a result")

    def _outcome(self, job: dict[str, Any], started: datetime) -> Outcome:
        from hermes_core import caller_callbacks

        try:
            with caller_callbacks(user=NO_USER, approval=NO_USER):  # nobody waits for an answer
                return self._run(job, started)
        except Exception as exc:  # containment: a job's fault is its run's failure, never the scheduler's
            log.exception("job %s failed", job["id"])
            return failed_outcome(job, started, f"{type(exc).__name__}: {exc}")

    def _run(self, job: dict[str, Any], started: datetime) -> Outcome:
        if job.get("tool"):
            return self._tool(job, started)
        if job.get("script") or job.get("no_agent"):
            return failed_outcome(job, started, SCRIPT_JOBS)
        return self._prompt(job, started)

    def _tool(self, job: dict[str, Any], started: datetime) -> Outcome:
        tool = str(job["tool"])
        arguments = job.get("arguments")
        if tool in BLOCKED_TOOLS:
            return tool_outcome(job, started, "", f"a job may not call {tool!r}")
        if not isinstance(arguments, dict):
            return tool_outcome(job, started, "", f"the job's arguments are {type(arguments).__name__}, not an object")
        session = _session_id(job, started)
        result = self.host.dispatch(tool, arguments, task_id=session, session_id=session)
        return tool_outcome(job, started, result, _tool_error(result))

    def _prompt(self, job: dict[str, Any], started: datetime) -> Outcome:
        prompt = build_prompt(job, self.store.output_dir, self.host.skills())
        toolsets = job.get("enabled_toolsets")
        model = job.get("model")
        task = PromptTask(prompt, list(toolsets) if isinstance(toolsets, list) else None,
                          model if isinstance(model, str) and model.strip() else None, _session_id(job, started),
                          self.host.max_turns())
        try:
            reply = answer(task, self.host.delegate)
        except PromptUnavailable as exc:
            return prompt_outcome(job, started, prompt, None, str(exc), exc.refused)
        return prompt_outcome(job, started, prompt, reply.text, None, reply.refused)

    def _deliver(self, job: dict[str, Any], outcome: Outcome, started: datetime, output: str | None) -> str | None:
        try:
            found = targets(job.get("deliver"), job.get("origin"))
        except DeliveryRefused as exc:
            return str(exc)
        content = outcome.response if outcome.success else _failure_notice(job, outcome.error)
        payload = {"job_id": job["id"], "name": job["name"], "success": outcome.success,
                   "run_time": started.isoformat(), "content": content, "error": outcome.error, "output_file": output}
        problems = []
        for target in found:
            try:
                deliver(target, payload, content, self.host.workspace, self.host.allow_private())
            except (DeliveryRefused, OSError) as exc:
                problems.append(f"{target}: {exc}")
        return "; ".join(problems) or None


def _session_id(job: dict[str, Any], started: datetime) -> str:
    return f"cron_{job['id']}_{started.strftime('%Y%m%d_%H%M%S')}"


def _tool_error(result: str) -> str | None:
    """The error a tool's result reports (Hermes' and Hermes Agent's ``{"error": ...}``), else None."""
    try:
        data = json.loads(result)
    except (TypeError, ValueError):
        return None
    if isinstance(data, dict) and data.get("error") and data.get("success") is not True:
        return str(data["error"])
    return None


def _silent(response: str) -> bool:
    """Hermes Agent's silence rule: ``[SILENT]`` (or SILENT, NO_REPLY) alone, on its own first or last line, or as
    the bracketed prefix."""
    text = response.strip()
    if not text:
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    return any(" ".join(line.upper().split()) in _SILENCE for line in (text, lines[0], lines[-1])) \
        or text.upper().startswith("[SILENT]")


def _failure_notice(job: dict[str, Any], error: str | None) -> str:
    text = " ".join((error or "unknown error").split())
    return f"⚠️ Cron '{job['name']}' failed: {text[:177] + '...' if len(text) > 180 else text}"

"""Prompt jobs: the prompt Hermes Agent assembles for a run (the cron guidance, the latest output of the jobs in
``context_from``, the job's skills, then its prompt), and the seam through which a model answers it.

The model is reached through Hermes' sub-agent runner (``ToolContext.delegate_batch``: the host's ``ask_model``,
else the endpoint of ``delegation.base_url``), on a filtered view of the job's toolsets, with nobody to ask: a
question to the user fails, a call that needs approval is refused and the refusal is kept for the output.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_core.errors import DelegationError, NoAnswer, SkillError

from .records import canonical_skills, is_safe_id

if TYPE_CHECKING:
    from hermes_core import SubAgentResult

__all__ = ["CRON_HINT", "NO_USER", "PromptAnswer", "PromptTask", "PromptUnavailable", "answer", "build_prompt"]

log = logging.getLogger(__name__)

CRON_HINT = ("[IMPORTANT: You are running as a scheduled cron job. DELIVERY: Your final response will be "
             "automatically delivered to the user — do NOT use send_message or try to deliver the output yourself. "
             "Just produce your report/output as your final response and the system handles the rest. SILENT: If "
             "there is genuinely nothing new to report, respond with exactly \"[SILENT]\" (nothing else) to suppress "
             "delivery. Never combine [SILENT] with content — either report your findings normally, or say [SILENT] "
             "and nothing more.]\n\n")
#: How much of an upstream job's latest output goes into the prompt.
MAX_CONTEXT_CHARS = 8000
#: Tools a job's model is never offered: it has no user, and a job does not schedule jobs.
BLOCKED_TOOLS = frozenset({"cronjob", "clarify", "send_message", "delegate_task"})
#: What a job's tools hear when they ask the user (and why an approval is refused).
NO_USER = "a cron job has no user to ask"

#: Runs sub-agents (``ToolContext.delegate_batch``).
Delegate = Callable[..., "list[SubAgentResult]"]


class PromptUnavailable(RuntimeError):
    """The model gave no answer to a prompt job; the message says why, ``refused`` the calls refused meanwhile."""

    def __init__(self, message: str, refused: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.refused = refused


@dataclass(frozen=True)
class PromptTask:
    """One run of a prompt job, for the sub-agent runner."""

    prompt: str
    toolsets: list[str] | None
    model: str | None
    session_id: str
    #: The most model turns it may take (``agent.max_turns``; ``delegation.max_iterations`` caps it).
    max_iterations: int | None = None


@dataclass(frozen=True)
class PromptAnswer:
    """The model's final answer, and the calls refused on the way (each: what needed approving)."""

    text: str
    refused: tuple[str, ...] = ()


def build_prompt(job: dict[str, Any], output_dir: Path, skills: Any) -> str:
    """The prompt a run of ``job`` sends (``skills``: the runtime's skill catalogue, or None)."""
    prompt = str(job.get("prompt") or "")
    sources = job.get("context_from")
    for source in [sources] if isinstance(sources, str) else sources if isinstance(sources, list) else []:
        latest = _latest_output(output_dir, str(source))
        if latest:
            prompt = (f"## Output from job '{source}'\nThe following is the most recent output from a preceding cron "
                      f"job. Use it as context for your analysis.\n\n```\n{latest}\n```\n\n{prompt}")
    prompt = CRON_HINT + prompt
    names = canonical_skills(job.get("skill"), job.get("skills"))
    if not names:
        return prompt
    parts: list[str] = []
    skipped: list[str] = []
    for name in names:
        content = _skill_content(skills, name)
        if content is None:
            skipped.append(name)
            continue
        parts.extend([*([""] if parts else []), f'[IMPORTANT: The user has invoked the "{name}" skill, indicating they '
                      "want you to follow its instructions. The full skill content is loaded below.]", "", content])
    if skipped:
        listed = ", ".join(skipped)
        parts.insert(0, f"[IMPORTANT: The following skill(s) were listed for this job but could not be found and "
                        f"were skipped: {listed}. Start your response with a brief notice so the user is aware, "
                        f"e.g.: '⚠️ Skill(s) not found and skipped: {listed}']")
    parts.extend(["", f"The user has provided the following instruction alongside the skill invocation: {prompt}"])
    return "\n".join(parts)


def answer(task: PromptTask, delegate: Delegate) -> PromptAnswer:
    """The model's final answer to ``task``: one sub-agent run by ``delegate`` with nobody to ask (questions fail,
    approvals are refused and recorded); :class:`PromptUnavailable` when it gives none."""
    from hermes_core import SubAgentTask, caller_callbacks

    refused: list[str] = []

    def refuse(request: Any) -> str:
        refused.append(f"{request.tool_name or 'a call'}: {request.message}")
        return "deny"

    subtask = SubAgentTask(task.prompt, toolsets=None if task.toolsets is None else tuple(task.toolsets),
                           model=task.model)
    with caller_callbacks(user=NO_USER, approval=refuse):
        try:
            [result] = delegate([subtask], max_iterations=task.max_iterations, task_id=task.session_id)
        except (DelegationError, NoAnswer) as exc:
            raise PromptUnavailable(str(exc)) from exc
    if result.status != "completed" or result.summary is None:
        raise PromptUnavailable(result.error or f"the model's run ended with {result.exit_reason}", tuple(refused))
    return PromptAnswer(result.summary, tuple(refused))


def _latest_output(output_dir: Path, job_id: str) -> str:
    if not is_safe_id(job_id):
        return ""
    try:
        files = sorted((output_dir / job_id).glob("*.md"), key=lambda f: f.name, reverse=True)
        text = files[0].read_text(encoding="utf-8").strip() if files else ""
    except OSError as exc:
        log.warning("context_from: cannot read the output of job %r: %s", job_id, exc)
        return ""
    return text[:MAX_CONTEXT_CHARS] + "\n\n[... output truncated ...]" if len(text) > MAX_CONTEXT_CHARS else text


def _skill_content(catalog: Any, name: str) -> str | None:
    if catalog is None:
        return None
    from hermes_core.skills.view import view_skill

    try:
        return str(view_skill(catalog, name.lstrip("/")).get("content") or "").strip()
    except SkillError as exc:
        log.warning("skill %r of a cron job cannot be loaded: %s", name, exc)
        return None

"""Job records in Hermes Agent's ``jobs.json`` shape: a new job, the read-safe view of a stored one (older or
hand-edited records have nulls), and the summary the ``cronjob`` tool answers with.

A job runs a prompt (Hermes Agent's jobs), or, new here, one tool call: ``tool`` and ``arguments`` beside the
prompt, which is then written as an instruction an agent can follow, so the job also runs under Hermes Agent.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

__all__ = ["canonical_skills", "format_job", "is_safe_id", "new_id", "new_job", "normalized", "repeat_display",
           "tool_prompt"]


def new_id() -> str:
    return uuid.uuid4().hex[:12]


def is_safe_id(job_id: object) -> bool:
    """``job_id`` can name a folder under ``cron/output/`` (one path component, nothing that escapes)."""
    text = str(job_id or "").strip()
    return bool(text) and text not in {".", ".."} and not any(c in text for c in "/\\:\0") and len(text) <= 128


def canonical_skills(skill: object = None, skills: object = None) -> list[str]:
    """The ordered, de-duplicated skill names of the legacy ``skill`` and the newer ``skills`` fields."""
    raw = ([skill] if skill else []) if skills is None else [skills] if isinstance(skills, str) else \
        list(skills) if isinstance(skills, list | tuple) else []
    names: list[str] = []
    for item in raw:
        text = str(item or "").strip()
        if text and text not in names:
            names.append(text)
    return names


def tool_prompt(tool: str, arguments: dict[str, Any]) -> str:
    """What an agent is asked to do for a tool job (Hermes Agent runs every job as a prompt)."""
    return (f"Call the tool `{tool}` with these arguments and report its result:\n"
            f"{json.dumps(arguments, ensure_ascii=False, sort_keys=True)}")


def new_job(*, job_id: str, now: str, name: str | None, prompt: str, schedule: dict[str, Any], next_run_at: str | None,
            repeat: int | None, deliver: str, skills: list[str], model: str | None, enabled_toolsets: list[str] | None,
            context_from: list[str] | None, tool: str | None, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """A job record with every field Hermes Agent 0.19's ``create_job`` writes (``tool``/``arguments`` only for a
    tool job)."""
    label = prompt or (skills[0] if skills else "") or (tool or "") or "cron job"
    job: dict[str, Any] = {
        "id": job_id, "name": name or (tool or label[:50].strip()), "prompt": prompt,
        "skills": skills, "skill": skills[0] if skills else None,
        "model": model, "provider": None, "provider_snapshot": None, "model_snapshot": None, "base_url": None,
        "script": None, "no_agent": False, "context_from": context_from,
        "schedule": schedule, "schedule_display": schedule.get("display", ""),
        "repeat": {"times": repeat, "completed": 0},
        "enabled": True, "state": "scheduled", "paused_at": None, "paused_reason": None,
        "created_at": now, "next_run_at": next_run_at, "last_run_at": None, "last_status": None,
        "last_error": None, "last_delivery_error": None,
        "deliver": deliver, "origin": None, "enabled_toolsets": enabled_toolsets, "workdir": None,
    }
    if tool is not None:
        job["tool"] = tool
        job["arguments"] = arguments or {}
    return job


def _text(value: object, fallback: str = "") -> str:
    return fallback if value is None else str(value)


def schedule_display(job: dict[str, Any]) -> str:
    display = _text(job.get("schedule_display")).strip()
    if display:
        return display
    schedule = job.get("schedule")
    if isinstance(schedule, dict):
        for key in ("display", "value", "expr", "run_at"):
            text = _text(schedule.get(key)).strip()
            if text:
                return text
    elif schedule is not None:
        return str(schedule)
    return "?"


def normalized(job: dict[str, Any]) -> dict[str, Any]:
    """A copy of a stored record safe to read: text fields as text, a name, a schedule display and a state."""
    record = dict(job)
    skills = canonical_skills(record.get("skill"), record.get("skills"))
    record["skills"], record["skill"] = skills, skills[0] if skills else None
    record["id"] = _text(record.get("id"), "unknown")
    record["prompt"] = _text(record.get("prompt"))
    name = _text(record.get("name")).strip()
    if not name:
        source = record["prompt"] or (skills[0] if skills else "") or _text(record.get("tool")) or \
            _text(record.get("script")) or record["id"]
        name = source[:50].strip() or "cron job"
    record["name"] = name
    record["schedule_display"] = schedule_display(record)
    state = _text(record.get("state")).strip()
    record["state"] = state or ("scheduled" if record.get("enabled", True) else "paused")
    return record


def repeat_display(job: dict[str, Any]) -> str:
    repeat: dict[str, Any] = job["repeat"] if isinstance(job.get("repeat"), dict) else {}
    times, completed = repeat.get("times"), repeat.get("completed", 0)
    if times is None:
        return "forever"
    if times == 1:
        return "once" if completed == 0 else "1/1"
    return f"{completed}/{times}" if completed else f"{times} times"


def format_job(job: dict[str, Any]) -> dict[str, Any]:
    """The ``cronjob`` tool's summary of a job (Hermes Agent's ``_format_job``, plus ``tool`` for a tool job)."""
    job = normalized(job)
    prompt = job["prompt"]
    skills = job["skills"]
    summary: dict[str, Any] = {
        "job_id": job["id"], "name": job["name"], "skill": skills[0] if skills else None, "skills": skills,
        "prompt_preview": prompt[:100] + "..." if len(prompt) > 100 else prompt,
        "model": job.get("model"), "provider": job.get("provider"), "base_url": job.get("base_url"),
        "schedule": job["schedule_display"], "repeat": repeat_display(job), "deliver": job.get("deliver", "local"),
        "next_run_at": job.get("next_run_at"), "last_run_at": job.get("last_run_at"),
        "last_status": job.get("last_status"), "last_delivery_error": job.get("last_delivery_error"),
        "enabled": job.get("enabled", True), "state": job["state"], "paused_at": job.get("paused_at"),
        "paused_reason": job.get("paused_reason"),
    }
    for key in ("script", "no_agent", "enabled_toolsets", "workdir", "tool"):
        if job.get(key):
            summary[key] = job[key]
    if job.get("tool"):
        summary["arguments"] = job.get("arguments") or {}
    return summary

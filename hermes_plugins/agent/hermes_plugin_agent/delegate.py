"""``delegate_task``: hand tasks to sub-agents that work with (some of) the caller's tools and report back only a
summary. The core runs them (``ToolContext.delegate_batch``): Hermes Agent 0.19's rules, limits in
``delegation`` of config.yaml."""

from __future__ import annotations

import json
import time
from typing import Any

from hermes_core import SubAgentTask
from hermes_core.errors import DelegationError, NoAnswer, PolicyError
from hermes_core.plugin import tool_context, tool_error

__all__ = ["delegate_task"]


def delegate_task(args: dict[str, Any], **kwargs: Any) -> str:
    """Run ``goal`` (one task) or ``tasks`` (several, side by side) in sub-agents; their summaries, in task order."""
    started = time.monotonic()
    role = args.get("role") or "leaf"
    if args.get("tasks"):
        tasks = [_task(item.get("goal"), item.get("context"), item.get("toolsets"), item.get("role") or role)
                 for item in args["tasks"]]
    elif str(args.get("goal") or "").strip():
        tasks = [_task(args["goal"], args.get("context"), args.get("toolsets"), role)]
    else:
        return tool_error("Provide either 'goal' (one task) or 'tasks' (a batch).")
    try:
        if args.get("background") is True:
            return _in_background(tasks, args.get("max_iterations"), kwargs.get("task_id"))
        results = tool_context().delegate_batch(tasks, max_iterations=args.get("max_iterations"),
                                                task_id=kwargs.get("task_id"))
    except (DelegationError, NoAnswer, PolicyError) as exc:
        return tool_error(str(exc))
    return json.dumps({"results": [result.as_dict() for result in results],
                       "total_duration_seconds": round(time.monotonic() - started, 2)}, ensure_ascii=False)


def _in_background(tasks: list[SubAgentTask], max_iterations: Any, task_id: str | None) -> str:
    """Start the tasks in the background: the run's id, at once (Hermes Agent's ``dispatched`` answer)."""
    run_id = tool_context().delegate_in_background(tasks, max_iterations=max_iterations, task_id=task_id)
    note = ("The sub-agent runs in the background" if len(tasks) == 1 else
            f"{len(tasks)} sub-agents run side by side in the background") + \
        ("; you and the user can keep working. Its result comes back once, appended to a later tool result, or "
         "ask subagent_status with this id.")
    return json.dumps({"status": "dispatched", "mode": "background", "count": len(tasks), "delegation_id": run_id,
                       "goals": [task.goal for task in tasks], "note": note}, ensure_ascii=False)


def _task(goal: Any, context: Any, toolsets: Any, role: str) -> SubAgentTask:
    return SubAgentTask(str(goal or ""), context if isinstance(context, str) else None,
                        tuple(toolsets) if isinstance(toolsets, list) else None, role)

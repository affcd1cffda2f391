"""TinyElf's sub-agent tools over the same runner as ``delegate_task``: ``spawn_agent`` (foreground or background),
``subagent_list`` and ``subagent_status`` (which delivers a finished run's completion, once)."""

from __future__ import annotations

import json
from typing import Any, Final

from hermes_core import SubAgentTask
from hermes_core.errors import DelegationError, NoAnswer, PolicyError
from hermes_core.plugin import tool_context, tool_error

__all__ = ["spawn_agent", "subagent_list", "subagent_status"]

#: TinyElf's permission modes as the approval policy the sub-agent's calls run under (never looser than the
#: caller's: a view only narrows). ``default`` keeps the caller's.
PERMISSION_MODES: Final = {"default": None, "plan": "read-only", "readOnly": "read-only", "acceptEdits": "writes",
                           "read-only": "read-only", "writes": "writes", "dangerous": "dangerous"}


def spawn_agent(args: dict[str, Any], **kwargs: Any) -> str:
    """Start a sub-agent on ``prompt``; its result, or with ``background`` its ``runId`` at once."""
    prompt = args.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        return tool_error("'prompt' is required: what the sub-agent should do, self-contained.")
    mode = args.get("permissionMode") or "default"
    if mode not in PERMISSION_MODES:
        return tool_error(f"Unknown permissionMode {mode!r}; expected one of {', '.join(PERMISSION_MODES)}.")
    tools = args.get("tools")
    if tools is not None and not (isinstance(tools, list) and all(isinstance(name, str) for name in tools)):
        return tool_error("'tools' is a list of tool names.")
    task = SubAgentTask(prompt, tools=None if tools is None else tuple(tools), policy=PERMISSION_MODES[mode])
    context = tool_context()
    try:
        if args.get("background") is True:
            run_id = context.delegate_in_background([task], max_iterations=args.get("maxIterations"),
                                                    task_id=kwargs.get("task_id"))
            return json.dumps({"runId": run_id, "status": "running", "background": True})
        [result] = context.delegate_batch([task], max_iterations=args.get("maxIterations"),
                                          task_id=kwargs.get("task_id"))
    except (DelegationError, NoAnswer, PolicyError) as exc:
        return tool_error(str(exc))
    return json.dumps({"status": result.status, "result": result.summary, "error": result.error,
                       "iterations": result.api_calls, "toolCalls": len(result.tool_trace)}, ensure_ascii=False)


def subagent_list(args: dict[str, Any], **kwargs: Any) -> str:
    """The background runs of this session (all sessions' when the call has none), newest first."""
    context = tool_context()
    runs = context.background_runs().runs(context.session_id)
    return json.dumps({"runs": [{"runId": run["delegation_id"], "status": run["status"],
                                 "prompt": run.get("goal") or run.get("goals"), "startedAt": run["dispatched_at"],
                                 "finishedAt": run["completed_at"]} for run in runs]}, ensure_ascii=False)


def subagent_status(args: dict[str, Any], **kwargs: Any) -> str:
    """One run's status; a finished run's result (delivered here unless it already reached the session)."""
    run_id = args.get("runId")
    if not isinstance(run_id, str) or not run_id:
        return tool_error("'runId' is required (spawn_agent or delegate_task with background: true returns it).")
    record = tool_context().background_runs().status(run_id)
    if record is None:
        return tool_error(f"No background run {run_id!r} (subagent_list shows the known ones).")
    status = {"runId": run_id, "status": record["status"], "prompt": record.get("goal") or record.get("goals"),
              "startedAt": record.get("dispatched_at"), "finishedAt": record.get("completed_at")}
    if record["status"] not in ("running", "finalizing"):
        results = record.get("results") or []
        status |= {"result": "\n\n".join(str(result.get("summary") or "") for result in results) or None,
                   "error": record.get("error") or next((r.get("error") for r in results if r.get("error")), None),
                   "results": results, "delivered": "now" if record["delivered_now"] else "earlier"}
    return json.dumps(status, ensure_ascii=False)

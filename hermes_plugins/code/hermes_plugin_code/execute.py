"""The ``execute_code`` handler: one run bound to the calling runtime (its tools, backend and settings)."""

from __future__ import annotations

import json
from typing import Any

from hermes_core.backends import BackendError
from hermes_core.plugin import tool_context, tool_error

from .run import Limits, run_code
from .stubs import callable_tool_names


def execute_code(args: dict[str, Any], **kwargs: Any) -> str:
    """Run the model's Python script on the task's execution backend; its tool calls come back through the
    runtime, hooks included."""
    code = args.get("code") or ""
    if not code.strip():
        return tool_error("execute_code needs a non-empty 'code' argument")
    context = tool_context()
    try:
        limits = Limits.from_settings(context.settings, args.get("timeout"))
    except ValueError as exc:
        return tool_error(str(exc))
    task_id, session_id = kwargs.get("task_id"), kwargs.get("session_id")
    try:
        backend = context.execution_backend(task_id)
    except BackendError as exc:
        return tool_error(str(exc))

    def dispatch(name: str, tool_args: dict[str, Any]) -> str:
        return context.dispatch(name, tool_args, task_id=task_id, session_id=session_id)

    names = callable_tool_names(context.available_tools())
    passthrough = context.settings.get("env_passthrough") or []
    if not isinstance(passthrough, list) or not all(isinstance(name, str) for name in passthrough):
        return tool_error("plugins.entries.code.settings.env_passthrough must be a list of variable names")
    result = run_code(code, dispatch=dispatch, tool_names=names, limits=limits, backend=backend,
                      cwd=backend.default_cwd, env_passthrough=passthrough, progress=context.progress_reporter())
    return json.dumps(result, ensure_ascii=False)

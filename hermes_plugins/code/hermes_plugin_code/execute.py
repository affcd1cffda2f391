"""The ``execute_code`` handler: one run bound to the calling runtime (its tools, workspace and settings)."""

from __future__ import annotations

import json
import os
from typing import Any

from hermes_core import tool_context, tool_error

from .run import Limits, run_code
from .stubs import callable_tool_names


def platform_supported() -> bool:
    """The runner needs POSIX process groups and Unix domain sockets."""
    return os.name == "posix"


def execute_code(args: dict[str, Any], **kwargs: Any) -> str:
    """Run the model's Python script; its tool calls go back through the runtime, hooks included."""
    code = args.get("code") or ""
    if not code.strip():
        return tool_error("execute_code needs a non-empty 'code' argument")
    context = tool_context()
    try:
        limits = Limits.from_settings(context.settings, args.get("timeout"))
    except ValueError as exc:
        return tool_error(str(exc))
    task_id, session_id = kwargs.get("task_id"), kwargs.get("session_id")

    def dispatch(name: str, tool_args: dict[str, Any]) -> str:
        return context.dispatch(name, tool_args, task_id=task_id, session_id=session_id)

    names = callable_tool_names(context.available_tools())
    result = run_code(code, dispatch=dispatch, tool_names=names, limits=limits, cwd=context.workspace)
    return json.dumps(result, ensure_ascii=False)

"""The ``execute_code`` handler: one run bound to the current Hermes runtime and the plugin's settings."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hermes_core.config import plugin_settings
from hermes_core.runtime import current_runtime

from .run import Limits, run_code
from .stubs import callable_tool_names


def platform_supported() -> bool:
    """The runner needs POSIX process groups and Unix domain sockets."""
    return os.name == "posix"


def execute_code(args: dict[str, Any], **kwargs: Any) -> str:
    """Run the model's Python script; its tool calls go back through the runtime, hooks included."""
    code = args.get("code") or ""
    if not code.strip():
        return json.dumps({"error": "execute_code needs a non-empty 'code' argument"})
    runtime = current_runtime()
    try:
        limits = Limits.from_settings(plugin_settings("code", runtime.config), args.get("timeout"))
    except ValueError as exc:
        return json.dumps({"error": str(exc)})
    task_id, session_id = kwargs.get("task_id"), kwargs.get("session_id")

    def dispatch(name: str, tool_args: dict[str, Any]) -> str:
        return runtime.handle_function_call(name, tool_args, task_id=task_id, session_id=session_id)

    names = callable_tool_names(runtime.registry.get_available_tool_names())
    result = run_code(code, dispatch=dispatch, tool_names=names, limits=limits, cwd=Path.cwd())
    return json.dumps(result, ensure_ascii=False)

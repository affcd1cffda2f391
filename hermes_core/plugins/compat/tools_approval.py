"""Shim of Hermes Agent's ``tools.approval``: ``check_dangerous_command`` judged by the terminal pack's classifier
and asked through the approvals of the runtime running the plugin, in Hermes Agent's return shape."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...calls.approval import ApprovalRequest
from ...calls.toolcontext import current_tool_context
from . import host, host_runtime

__all__ = ["_get_approval_mode", "check_dangerous_command"]

#: Hermes' ``approvals.mode`` -> Hermes Agent's mode (``off``: nothing is asked, everything runs).
_MODES = {"ask": "manual", "strict": "manual", "deny": "manual", "approve": "off"}


def _get_approval_mode() -> str:
    """``manual`` when commands are asked about (``approvals.mode: ask`` or ``strict``, or ``deny``: asked and
    refused), ``off`` when every command is approved without asking (``approve``)."""
    return _MODES.get(host_runtime().config.approvals.mode, "manual")


def check_dangerous_command(command: str, env_type: str = "local", approval_callback: Callable[..., Any] | None = None,
                            has_host_access: bool = False) -> dict[str, Any]:
    """``{"approved": True, "message": None}`` when ``command`` may run; otherwise ``{"approved": False, "message":
    "BLOCKED...", ...}``. Hardline commands are always refused; each dangerous rule matched is put to the runtime's
    approvals (its callback, the answers given in the calling tool call's session, ``command_allowlist``).
    ``approval_callback`` is Hermes Agent's prompt hook and is not used: Hermes asks through its own approvals."""
    try:
        from hermes_plugin_terminal.approvals import questions, strictness
        from hermes_plugin_terminal.danger import Level, classify
    except ImportError:  # no classifier: nothing can be judged safe
        return {"approved": False,
                "message": "BLOCKED: Hermes' terminal pack (hermes-tools-terminal), whose classifier judges commands, "
                           "is not installed; install it to run commands through this plugin"}
    if not isinstance(command, str):
        return {"approved": False, "message": f"BLOCKED: the command must be text, not {type(command).__name__}"}
    current = current_tool_context()
    runtime = host_runtime()
    workspace = str(current.workspace if current is not None else runtime.workspace)
    verdict = classify(command, strictness(runtime.config, workspace=workspace, cwd=workspace))
    if verdict.level is Level.HARDLINE:
        return {"approved": False, "hardline": True, "pattern_key": verdict.rule_key, "description": verdict.reason,
                "message": f"BLOCKED (hardline): this command {verdict.reason} (rule '{verdict.rule_key}'); hardline "
                           "rules are never run, even with approval"}
    approvals = current.approvals if current is not None else runtime.approvals
    session_id = current.session_id if current is not None else None  # a "session" answer is kept for it
    plugin = host().plugin_id or "a plugin"
    for key, what in questions(verdict):
        request = ApprovalRequest(
            message=f"Plugin {plugin} wants to run a command ({env_type}) that {what} (rule '{key}'):\n"
                    f"    {command}",
            rule_key=key, tool_name=plugin, args={"command": command}, session_id=session_id)
        if not approvals.ask(request):
            return {"approved": False, "pattern_key": key, "description": what,
                    "message": f"BLOCKED: this command {what} (rule '{key}') and was not approved. "
                               "Do not retry it; ask the user to run it themselves or to approve it."}
    return {"approved": True, "message": None}

"""The approval gate for commands: hardline refusal, then one approval per dangerous rule matched."""

from __future__ import annotations

from typing import Any

from hermes_core import ApprovalRequest
from hermes_core.plugin import tool_context

from .danger import Level, classify

__all__ = ["check_command"]


def check_command(command: str, *, session_id: str | None, args: dict[str, Any]) -> str | None:
    """``None`` when ``command`` may run; otherwise why it may not (a message for the model)."""
    verdict = classify(command)
    if verdict.level is Level.HARDLINE:
        return (f"Refused: this command {verdict.reason} (rule '{verdict.rule_key}'). Hardline rules are "
                "never run, even with approval.")
    # the runtime's approvals: its callback, its sessions' answers, its config's command_allowlist
    approvals = tool_context().approvals
    for rule in verdict.rules:
        request = ApprovalRequest(
            message=f"The terminal tool wants to run a command that {rule.reason} (rule '{rule.key}'):\n"
                    f"    {command}",
            rule_key=rule.key, tool_name="terminal", args=args, session_id=session_id,
        )
        if not approvals.ask(request):
            return (f"Blocked: this command {rule.reason} (rule '{rule.key}') and was not approved. "
                    "Do not retry it; ask the user to run it themselves or to approve it.")
    return None

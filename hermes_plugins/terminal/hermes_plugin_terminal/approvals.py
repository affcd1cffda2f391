"""The approval gate for commands: hardline refusal, then one approval per dangerous rule matched (and, in the
stricter readings config.yaml opts into, per program off the read-only list and for paths outside the workspace)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from hermes_core import ApprovalRequest
from hermes_core.plugin import tool_context

from .danger import Classification, Level, ReadOnlyList, Strictness, Workspace, classify
from .rules import NOT_READ_ONLY, OUTSIDE_WORKSPACE

if TYPE_CHECKING:
    from hermes_core.config.model import HermesConfig

__all__ = ["check_command", "questions", "strictness"]


def strictness(config: HermesConfig, *, workspace: str, cwd: str) -> Strictness:
    """The readings config.yaml opts into: strict mode's read-only list (``approvals.mode: strict``, extended by
    ``terminal.read_only_commands``), and the workspace's paths (``terminal.workspace_only``; absent: strict mode
    decides)."""
    strict = config.approvals.mode == "strict"
    paths = config.terminal.workspace_only
    home = os.path.expanduser("~")

    def expanded(path: str) -> str:
        return home + path[1:] if path == "~" or path.startswith("~/") else path

    return Strictness(
        read_only=ReadOnlyList.extended(config.terminal.read_only_commands) if strict else None,
        workspace=Workspace(expanded(workspace), expanded(cwd), home) if (strict if paths is None else paths) else None)


def questions(verdict: Classification) -> Iterator[tuple[str, str]]:
    """``(rule key, what the command does)`` for each question ``verdict`` needs answered, in order."""
    for rule in verdict.rules:
        if rule is NOT_READ_ONLY:
            for item in verdict.unlisted:
                yield f"{rule.key}:{item or 'dynamic'}", _unlisted(item)
        elif rule is OUTSIDE_WORKSPACE:
            yield rule.key, f"reads or writes {', '.join(verdict.outside)}, outside the workspace"
        else:
            yield rule.key, rule.reason


def _unlisted(item: str) -> str:
    if item == ">":
        return "writes a file through a redirection (approvals.mode: strict asks for every write)"
    if item.startswith("$"):
        return f"sets {item[1:]}, which changes what programs run (approvals.mode: strict)"
    if not item:
        return "runs a command known only at run time (approvals.mode: strict)"
    return f"runs {item}, which is not on the read-only list (approvals.mode: strict)"


def check_command(command: str, *, session_id: str | None, args: dict[str, Any], cwd: str | None = None,
                  workspace: str | None = None) -> str | None:
    """``None`` when ``command`` may run; otherwise why it may not (a message for the model). ``workspace`` and
    ``cwd`` (default: the runtime's workspace) place its paths."""
    context = tool_context()
    root = workspace or str(context.workspace)
    verdict = classify(command, strictness(context.config, workspace=root, cwd=cwd or root))
    if verdict.level is Level.HARDLINE:
        return (f"Refused: this command {verdict.reason} (rule '{verdict.rule_key}'). Hardline rules are "
                "never run, even with approval.")
    # the runtime's approvals: its callback, its sessions' answers, its config's command_allowlist
    for key, what in questions(verdict):
        request = ApprovalRequest(
            message=f"The terminal tool wants to run a command that {what} (rule '{key}'):\n    {command}",
            rule_key=key, tool_name="terminal", args=args, session_id=session_id,
        )
        if not context.approvals.ask(request):
            return (f"Blocked: this command {what} (rule '{key}') and was not approved. "
                    "Do not retry it; ask the user to run it themselves or to approve it.")
    return None

"""The approval gate for commands: hardline refusal, then one approval per dangerous rule matched (and, in the
stricter readings config.yaml opts into, per program off the read-only list and for paths outside the workspace)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from hermes_core import ApprovalRequest
from hermes_core.plugin import tool_context

from .danger import Classification, Level, ReadOnlyList, Strictness, Workspace, classify
from .rules import NOT_READ_ONLY, OUTSIDE_WORKSPACE

if TYPE_CHECKING:
    from hermes_core.config.model import HermesConfig

__all__ = ["check_command", "check_input", "questions", "strictness", "with_input"]


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
    return _decide(verdict, command, session_id=session_id, args=args)


#: Input that is a hardline command: a command whose verdict it changes runs its input as code.
_PROBE = "rm -rf /"


def with_input(command: str, data: str) -> str:
    """``command`` with ``data`` on its standard input, as a here-document the classifier reads: what a process
    started by ``command`` does with input written to it (a shell runs it, ``bash -c ...`` only reads it)."""
    delimiter = "HERMES_INPUT"
    while delimiter in data:
        delimiter = f"HERMES_INPUT_{secrets.token_hex(4)}"
    return f"{{ {command}\n}} <<'{delimiter}'\n{data}\n{delimiter}"


def check_input(command: str, data: str, *, session_id: str | None, args: dict[str, Any], cwd: str | None = None,
                workspace: str | None = None) -> str | None:
    """``None`` when ``data`` may be written to the running ``command``; otherwise why not. The input is judged as
    the same command given that input (:func:`with_input`), and only for what it adds: what ``command`` itself
    does was decided when it started, and the input of a command that does not run its input (a probe shows
    which) is only data."""
    context = tool_context()
    root = workspace or str(context.workspace)
    reading = strictness(context.config, workspace=root, cwd=cwd or root)
    before = classify(command, reading)
    if set(classify(with_input(command, _PROBE), reading).rules) <= set(before.rules):
        return None  # its input is data to it, whatever it says
    after = classify(with_input(command, data), reading)
    unlisted = tuple(item for item in after.unlisted if item not in before.unlisted)
    outside = tuple(path for path in after.outside if path not in before.outside)
    rules = tuple(rule for rule in after.rules if (unlisted if rule is NOT_READ_ONLY else outside
                                                   if rule is OUTSIDE_WORKSPACE else rule not in before.rules))
    added = Classification(rules[0].level if rules else Level.SAFE, rules, after.normalized, unlisted, outside)
    shown = f"{data.rstrip()}\n    (written to the input of: {command})"
    return _decide(added, shown, session_id=session_id, args=args)


def _decide(verdict: Classification, shown: str, *, session_id: str | None, args: dict[str, Any]) -> str | None:
    context = tool_context()
    if verdict.level is Level.HARDLINE:
        return (f"Refused: this command {verdict.reason} (rule '{verdict.rule_key}'). Hardline rules are "
                "never run, even with approval.")
    # the runtime's approvals: its callback, its sessions' answers, its config's command_allowlist
    for key, what in questions(verdict):
        request = ApprovalRequest(
            message=f"The terminal tool wants to run a command that {what} (rule '{key}'):\n    {shown}",
            rule_key=key, tool_name="terminal", args=args, session_id=session_id,
        )
        if not context.approvals.ask(request):
            return (f"Blocked: this command {what} (rule '{key}') and was not approved. Do not retry it; ask the "
                    f"user to run it themselves or to approve it.{context.approvals.refusal_note()}")
    return None

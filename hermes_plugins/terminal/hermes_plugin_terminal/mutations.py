"""Which ``terminal`` commands may change files, for checkpoints (the tool's ``changes_files``): all but those strict
mode's read-only list lets run (``ls``, ``cat``, ``git status``, and ``terminal.read_only_commands``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .danger import ReadOnlyList, Strictness, classify

if TYPE_CHECKING:
    from hermes_core.config.model import HermesConfig

__all__ = ["changes_files"]


def changes_files(args: dict[str, Any], config: HermesConfig) -> bool:
    """Whether the command of a ``terminal`` call may change files: it runs a program off the read-only list (or
    one known only at run time), writes through a redirection, or matches any rule of the classifier."""
    command = args.get("command")
    if not isinstance(command, str):
        return True
    verdict = classify(command, Strictness(read_only=ReadOnlyList.extended(config.terminal.read_only_commands)))
    return bool(verdict.rules)

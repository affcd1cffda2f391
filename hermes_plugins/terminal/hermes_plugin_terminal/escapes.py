"""Editors, pagers and debuggers told to run commands: ``vim -c '!rm -rf /'``, ``less '+!sh'``, ``gdb -ex 'shell
...'``, ``emacs --eval``, ``man -P CMD``, ``git -c core.pager=CMD``, ``PAGER=CMD``.

Each yields the shell code it would run (checked like any command) or says it runs commands that cannot be read
(``code``): an ex command other than a plain one (``-c 'set nu'``, ``-c wq``, ``+42`` stay safe).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from .invocation import Invocation

__all__ = ["PAGER_VARIABLES", "Escapes", "escapes"]

_VIMS: Final = frozenset({"vi", "vim", "nvim", "gvim", "view", "vimdiff", "ex", "evim", "gview", "nview", "vimx"})
_PAGERS: Final = frozenset({"less", "more", "most"})
_DEBUGGERS: Final = frozenset({"gdb", "lldb", "cgdb", "pdb"})
_EMACS: Final = frozenset({"emacs", "emacsclient", "xemacs"})
#: Variables whose value a program runs as a shell command.
PAGER_VARIABLES: Final = frozenset({"PAGER", "MANPAGER", "GIT_PAGER", "EDITOR", "VISUAL", "GIT_EDITOR",
                                    "LESSOPEN", "LESSCLOSE", "GIT_SSH_COMMAND", "SYSTEMD_PAGER", "BROWSER"})
_GIT_COMMAND_KEYS: Final = re.compile(r"core\.(?:pager|editor|sshcommand|fsmonitor|hookspath)|sequence\.editor"
                                      r"|pager\.\w+|alias\.[^=]+|diff\.\w+\.textconv|filter\.[^=]+")
#: Ex commands that reach a shell or a scripting language.
_EX_CODE: Final = re.compile(r"\b(?:sh(?:ell)?|te(?:rm(?:inal)?)?|sy(?:stem)?|py(?:thon)?3?|pyx?|perl|lua|ruby|"
                             r"exe(?:cute)?|so(?:urce)?|call|norm(?:al)?|r(?:ead)?|w(?:rite)?\s*!|make|grep)\b"
                             r"|!\s*\S", re.I)


@dataclass
class Escapes:
    """Shell code an editor, pager or debugger is told to run, and whether it runs other commands too."""

    scripts: list[str] = field(default_factory=list)
    code: bool = False


def escapes(invocation: Invocation) -> Escapes:
    """What ``invocation`` is told to run beyond its job."""
    found = Escapes()
    name, texts = invocation.name, invocation.texts
    if name in _VIMS:
        for command in _values(texts, ("-c", "--cmd")) + [t[1:] for t in texts if t.startswith("+") and len(t) > 1]:
            _ex(command, found)
    elif name in _PAGERS:
        for command in (t[1:] for t in texts if t.startswith("+") and len(t) > 1):
            _ex(command, found)
    elif name in _DEBUGGERS:
        for command in _values(texts, ("-ex", "--ex", "-iex", "--eval-command", "-o", "--one-line", "-O")):
            stripped = command.strip()
            if stripped.startswith(("shell ", "!", "platform shell ")):
                found.scripts.append(stripped.removeprefix("platform ").removeprefix("shell").lstrip("! "))
            elif stripped.startswith(("python", "pi ", "script", "guile", "source", "pipe", "|")):
                found.code = True
    elif name in _EMACS:
        found.code = any(t in ("--eval", "-eval", "--execute", "-e", "-l", "--load", "-f", "--funcall")
                         or t.startswith(("--eval=", "--execute=", "--load=", "--funcall=")) for t in texts)
    elif name == "man":
        found.scripts += _values(texts, ("-P", "--pager"))
    elif name == "git":
        for setting in _values(texts, ("-c",)):
            key, _, value = setting.partition("=")
            if _GIT_COMMAND_KEYS.fullmatch(key.lower()):
                found.scripts.append(value.lstrip("!"))
    return found


def _ex(command: str, found: Escapes) -> None:
    """An ex command (vim ``-c``, ``less +``): ``!cmd`` runs ``cmd``; other code cannot be checked."""
    stripped = command.lstrip(": ")
    if stripped.startswith("!"):
        found.scripts.append(stripped[1:])
    elif _EX_CODE.search(stripped):
        found.code = True


def _values(texts: Sequence[str], options: tuple[str, ...]) -> list[str]:
    """The values of ``options`` (``-c VALUE``, ``--cmd=VALUE``)."""
    values = []
    for index, text in enumerate(texts):
        option, equals, attached = text.partition("=")
        if text in options and index + 1 < len(texts):
            values.append(texts[index + 1])
        elif equals and option in options and option.startswith("--"):
            values.append(attached)
    return values

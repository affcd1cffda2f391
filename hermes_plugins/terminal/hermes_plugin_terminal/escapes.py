"""Editors, pagers and debuggers told to run commands: ``vim -c '!rm -rf /'``, ``less '+!sh'``, ``gdb -ex 'shell
...'``, ``emacs --eval``, ``man -P CMD``, ``git -c core.pager=CMD``, ``PAGER=CMD``.

Each yields the shell code it would run (checked like any command) or says it runs commands that cannot be read
(``code``): an ex command other than a plain one (``-c 'set nu'``, ``-c wq``, ``+42`` stay safe).

Vim goes by many names (``ex``, ``view``, ``rview``, ``vim.basic``...), clusters its options (``ex -sc CMD``), and
in Ex mode reads its commands from standard input (``ex <<< '!rm -rf /'``), as ``ed`` does: :func:`stdin_commands`
says how a program reads commands from standard input, :func:`commands_read` what they run. ``git config`` that
stores a command-running setting (``core.pager``, ``alias.x = !...``) is the command too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from .invocation import Invocation

__all__ = ["PAGER_VARIABLES", "Escapes", "commands_read", "escapes", "stdin_commands"]

_VIMS: Final = frozenset({"vi", "vim", "nvim", "gvim", "view", "vimdiff", "gvimdiff", "nvimdiff", "ex", "evim", "eview",
                          "gview", "nview", "vimx", "rview", "rvim", "rgview", "rgvim", "vim.basic", "vim.tiny",
                          "vim.nox", "vim.gtk", "vim.gtk3", "vim.athena", "nex", "elvis", "nvi", "vile"})
#: Vim names that start in Ex mode, reading commands from standard input when it is not a terminal.
_EX_MODE: Final = frozenset({"ex", "nex"})
_EDS: Final = frozenset({"ed", "red"})
#: An ``ed`` command that runs a shell command: ``!cmd``, ``r !cmd``, ``w !cmd``, ``e !cmd``.
_ED_SHELL: Final = re.compile(r"\s*(?:[\d,.$;+\-]*\s*[rwWe]\s*)?!(.*)")
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
        for command in _vim_commands(texts) + [t[1:] for t in texts if t.startswith("+") and len(t) > 1]:
            _ex(command, found)
        found.code = found.code or any(_short_letters(t) & {"S"} for t in texts)  # -S FILE sources a script
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
        _git_config(texts, found)
    return found


def stdin_commands(invocation: Invocation) -> str | None:
    """``"ex"`` or ``"ed"`` when ``invocation`` reads editor commands from standard input, else None."""
    if invocation.name in _EDS:
        return "ed"
    if invocation.name in _VIMS and (invocation.name in _EX_MODE
                                     or any(_short_letters(t) & {"e", "E"} for t in invocation.texts)):
        return "ex"
    return None


def commands_read(kind: str, text: str) -> Escapes:
    """What the editor commands ``text`` (one per line, read by ``kind``, see :func:`stdin_commands`) run."""
    found = Escapes()
    for line in text.splitlines():
        if kind == "ed":
            matched = _ED_SHELL.fullmatch(line)
            if matched:
                found.scripts.append(matched.group(1))
        else:
            _ex(line, found)
    return found


def _short_letters(text: str) -> set[str]:
    return set(text[1:]) if text.startswith("-") and not text.startswith("--") else set()


def _vim_commands(texts: Sequence[str]) -> list[str]:
    """The Ex commands of ``-c CMD``, ``--cmd CMD`` and a cluster ending in ``c`` (``-sc CMD``, ``-cCMD``)."""
    commands = _values(texts, ("--cmd",))
    for index, text in enumerate(texts):
        if text.startswith("-") and not text.startswith("--") and "c" in text:
            attached = text[text.index("c") + 1:]
            if attached:
                commands.append(attached)
            elif index + 1 < len(texts):
                commands.append(texts[index + 1])
    return commands


def _git_config(texts: Sequence[str], found: Escapes) -> None:
    """``git config [--global] KEY VALUE`` (or ``config set KEY VALUE``) storing a setting that runs a command."""
    if "config" not in texts:
        return
    rest = texts[texts.index("config") + 1:]
    operands: list[str] = []
    index = 0
    while index < len(rest):
        text = rest[index]
        if text in ("-f", "--file", "--blob", "--type", "--default", "--comment"):
            index += 2
            continue
        if not text.startswith("-"):
            operands.append(text)
        index += 1
    if operands[:1] == ["set"]:
        operands = operands[1:]
    if len(operands) >= 2 and _GIT_COMMAND_KEYS.fullmatch(operands[0].lower()):
        found.scripts.append(operands[1].lstrip("!"))


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

"""Programs that run commands they are handed: as words (``fd -x rm``, ``screen rm -rf /``, ``parallel rm :::
x``), as shell code (``tmux new 'rm -rf /'``, ``tar --to-command=...``, ``rsync -e ...``, ``ssh -o
ProxyCommand=...``, ``hyperfine '...'``), typed into a shell (``tmux send-keys``, ``screen -X stuff``), or read
from standard input (``parallel`` without a command).

Where a program's options are not all known, every reading is returned (each candidate start of the command),
so an option taken for a flag or a value never hides the command: the cost stays linear, a few readings each.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from .invocation import Invocation
from .shell import Word

__all__ = ["Runs", "runs"]

#: How many candidate starts of a command are read where a program's options are not all known.
_CANDIDATES: Final = 3
#: tmux commands whose operands are a shell command.
_TMUX_SHELL: Final = frozenset({
    "new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane", "respawnp",
    "respawn-window", "respawnw", "run-shell", "run", "if-shell", "if", "display-popup", "popup", "pipe-pane",
    "pipep"})
_TMUX_KEYS: Final = frozenset({"send-keys", "send"})
#: Key names that end a line typed into a shell; other key names type nothing a shell runs.
_ENTER_KEYS: Final = frozenset({"enter", "c-m", "kpenter", "c-j", "^m", "^j"})
_TMUX_KEY_NAME: Final = re.compile(r"(?:[cms]-)+\S|f\d+|bspace|btab|dc|end|escape|home|ic|npage|pagedown|pgdn|"
                                   r"pageup|pgup|ppage|space|tab|up|down|left|right|any", re.I)
_PARALLEL_VALUES: Final = frozenset({
    "-j", "--jobs", "-P", "-S", "--sshlogin", "--sshloginfile", "--slf", "-a", "--arg-file", "-C", "--colsep", "-d",
    "--delimiter", "-E", "--eof", "-I", "--replace", "-n", "--max-args", "-N", "--max-replace-args", "-L",
    "--max-lines", "-l", "--timeout", "--delay", "--joblog", "--results", "--res", "--tmpdir", "--workdir", "--wd",
    "--env", "--tagstring", "--tag-string", "--halt", "--halt-on-error", "--retries", "--memfree", "--load",
    "--basefile", "--bf", "--return", "--transferfile", "--tf", "--sshdelay", "--block", "--block-size",
    "--header", "--trc", "--cleanup", "--limit", "--progress-bar"})
_PARALLEL_INPUTS: Final = frozenset({":::", "::::", ":::+", "::::+"})
_SCREEN_VALUES: Final = frozenset({"-S", "-c", "-e", "-h", "-p", "-s", "-t", "-T", "-Logfile"})
_TAR_SCRIPTS: Final = ("--to-command", "--use-compress-program", "--info-script", "--new-volume-script")
_SSH_COMMAND_KEYS: Final = re.compile(r"(?:proxycommand|localcommand|knownhostscommand|remotecommand)\s*[= ]\s*(.*)",
                                      re.I | re.S)
_TERMINALS: Final = frozenset({"xterm", "uxterm", "x-terminal-emulator", "urxvt", "rxvt", "alacritty", "konsole",
                               "kitty", "gnome-terminal", "xfce4-terminal", "mate-terminal", "terminator", "tilix",
                               "foot", "wezterm", "st", "lxterminal", "qterminal", "terminology"})
_TERMINAL_COMMAND: Final = frozenset({"-e", "-x", "--execute", "--command", "--", "-c", "start"})


@dataclass
class Runs:
    """What a program is handed to run."""

    #: Shell code it runs (or types into a shell).
    scripts: list[str] = field(default_factory=list)
    #: Commands it runs, as words.
    commands: list[list[Word]] = field(default_factory=list)
    #: Programs it runs on every file it finds or reads (``fd -x PROGRAM``, ``rg --pre PROGRAM``).
    per_file: list[Word] = field(default_factory=list)
    #: Its standard input is a script (``parallel`` without a command runs the lines it reads).
    stdin_script: bool = False


def runs(invocation: Invocation) -> Runs:
    """What ``invocation`` is handed to run (nothing for most programs)."""
    found = Runs()
    handler = _HANDLERS.get(invocation.name)
    if handler is not None:
        handler(invocation, found)
    elif invocation.name in _TERMINALS:
        _terminal(invocation, found)
    return found


def _starts(args: Sequence[Word], first: int = 0) -> list[int]:
    """Candidate starts of a command among ``args[first:]``: the first few words that are not options."""
    return [i for i in range(first, len(args)) if not args[i].text.startswith("-")][:_CANDIDATES]


def _joined(words: Sequence[Word]) -> str:
    return " ".join(word.text for word in words)


def _tmux(invocation: Invocation, found: Runs) -> None:
    args = list(invocation.args)
    index = 0
    while index < len(args) and args[index].text.startswith("-"):  # tmux's own options
        text = args[index].text
        if text in ("-c",) and index + 1 < len(args):
            found.scripts.append(args[index + 1].text)
        index += 2 if text in ("-L", "-S", "-f", "-T", "-c") else 1
    command: list[Word] = []
    for word in [*args[index:], Word(";")]:  # tmux commands are separated by ";" words
        if word.text not in (";", "\\;"):
            command.append(word)
            continue
        if command:
            _tmux_command(command[0].text, command[1:], found)
        command = []


def _tmux_command(name: str, args: list[Word], found: Runs) -> None:
    if name in _TMUX_SHELL:
        found.scripts.extend(_joined(args[start:]) for start in _starts(args))
    elif name in _TMUX_KEYS:
        for start in _starts(args):
            found.scripts.append("".join(_typed(word.text) for word in args[start:]))


def _typed(key: str) -> str:
    """What ``key`` types into a shell (``send-keys 'rm -rf /' Enter``)."""
    if key.lower() in _ENTER_KEYS:
        return "\n"
    if _TMUX_KEY_NAME.fullmatch(key):
        return " "
    return key


def _screen(invocation: Invocation, found: Runs) -> None:
    args = list(invocation.args)
    index = 0
    while index < len(args) and args[index].text.startswith("-"):
        text = args[index].text
        if text == "-X":
            _screen_command(args[index + 1:], found)
            return
        index += 2 if text in _SCREEN_VALUES else 1
    if index < len(args):
        found.commands.append(args[index:])


def _screen_command(args: list[Word], found: Runs) -> None:
    """``screen -X COMMAND ...``: ``stuff TEXT`` types into the window's shell; ``exec``/``screen`` run words."""
    if not args:
        return
    verb, rest = args[0].text, args[1:]
    if verb == "stuff":
        found.scripts.append(_joined(rest).replace("^M", "\n").replace("\\n", "\n").replace("\\r", "\n"))
    elif verb in ("exec", "screen") and rest:
        found.commands.append(rest)


def _parallel(invocation: Invocation, found: Runs) -> None:
    """GNU ``parallel``/``sem``: the command (its words joined and run by a shell, or kept as words with ``-q``)
    with its inputs; no command: the inputs, or the lines read from standard input, are the commands."""
    args = list(invocation.args)
    index = 0
    while index < len(args) and args[index].text.startswith("-") and args[index].text not in _PARALLEL_INPUTS:
        option = args[index].text.partition("=")[0]
        index += 2 if option in _PARALLEL_VALUES and "=" not in args[index].text else 1
    command: list[Word] = []
    while index < len(args) and args[index].text not in _PARALLEL_INPUTS:
        command.append(args[index])
        index += 1
    inputs = [word for word in args[index:] if word.text not in _PARALLEL_INPUTS]
    if not command:
        found.scripts.extend(word.text for word in inputs)
        found.stdin_script = index >= len(args)
        return
    template, values = _joined(command), _joined(inputs)
    found.scripts.append(template.replace("{}", values) if "{}" in template else f"{template} {values}".strip())
    # with -q (--quote) the words stay words: both readings are checked
    words = [replaced for word in command for replaced in (inputs if word.text == "{}" else [word])]
    found.commands.append(words if any(word.text == "{}" for word in command) else [*command, *inputs])


def _fd(invocation: Invocation, found: Runs) -> None:
    """``fd -x COMMAND...`` / ``-X``: the words after it, up to ``;``, run on each file found."""
    args = list(invocation.args)
    for index, word in enumerate(args):
        if word.text in ("-x", "--exec", "-X", "--exec-batch"):
            command = []
            for later in args[index + 1:]:
                if later.text in (";", "\\;"):
                    break
                command.append(later)
            if command:
                found.commands.append(command)
                found.per_file.append(command[0])


def _rg(invocation: Invocation, found: Runs) -> None:
    """``rg --pre PROGRAM``: PROGRAM runs on every file searched."""
    _option_programs(invocation.args, ("--pre",), found)


def _sort(invocation: Invocation, found: Runs) -> None:
    _option_programs(invocation.args, ("--compress-program",), found)


def _option_programs(args: Sequence[Word], options: tuple[str, ...], found: Runs) -> None:
    for value in _values(args, options):
        found.per_file.append(value)
        found.commands.append([value])


def _values(args: Sequence[Word], options: tuple[str, ...]) -> list[Word]:
    """The values of ``options`` (``--opt VALUE`` or ``--opt=VALUE``)."""
    values = []
    for index, word in enumerate(args):
        option, equals, attached = word.text.partition("=")
        if option in options and equals:
            values.append(Word(attached, word.static))
        elif word.text in options and index + 1 < len(args):
            values.append(args[index + 1])
    return values


def _tar(invocation: Invocation, found: Runs) -> None:
    """``tar --to-command=CMD``, ``-I CMD``, ``--checkpoint-action=exec=CMD``: shell code tar runs."""
    found.scripts.extend(w.text for w in _values(invocation.args, (*_TAR_SCRIPTS, "-I", "-F")))
    for value in _values(invocation.args, ("--checkpoint-action",)):
        if value.text.startswith("exec="):
            found.scripts.append(value.text[5:])


def _rsync(invocation: Invocation, found: Runs) -> None:
    """``rsync -e CMD`` / ``--rsh=CMD``: the remote shell, a command run here."""
    found.scripts.extend(w.text for w in _values(invocation.args, ("-e", "--rsh", "--rsync-path")))


def _ssh(invocation: Invocation, found: Runs) -> None:
    """``ssh -o ProxyCommand=CMD`` (and ``LocalCommand``...): run here by the user's shell; ``scp -S PROGRAM``."""
    for value in _values(invocation.args, ("-o",)):
        matched = _SSH_COMMAND_KEYS.match(value.text)
        if matched:
            found.scripts.append(matched.group(1))
    for word in invocation.args:
        matched = _SSH_COMMAND_KEYS.match(word.text[2:]) if word.text.startswith("-o") else None
        if matched and len(word.text) > 2:
            found.scripts.append(matched.group(1))
    if invocation.name in ("scp", "sftp"):
        found.commands.extend([value] for value in _values(invocation.args, ("-S",)))


def _hyperfine(invocation: Invocation, found: Runs) -> None:
    """``hyperfine 'CMD' ...``: every operand, and the setup/prepare/cleanup options, are shell code."""
    found.scripts.extend(word.text for word in invocation.args if not word.text.startswith("-"))


def _entr(invocation: Invocation, found: Runs) -> None:
    """``entr CMD ARGS`` runs the command on each change; ``entr -s 'CMD'`` runs shell code."""
    args = list(invocation.args)
    start = next((i for i, word in enumerate(args) if not word.text.startswith("-")), len(args))
    if any(text.startswith("-") and "s" in text[1:] for text in invocation.texts[:start]):
        found.scripts.extend(word.text for word in args[start:])
    elif start < len(args):
        found.commands.append(args[start:])


def _terminal(invocation: Invocation, found: Runs) -> None:
    """A terminal emulator told to run a command: ``xterm -e CMD ARGS``, ``gnome-terminal -- CMD``, ``-e 'CMD'``."""
    args = list(invocation.args)
    for index, word in enumerate(args):
        if word.text in _TERMINAL_COMMAND and index + 1 < len(args):
            found.commands.append(args[index + 1:])
            found.scripts.append(_joined(args[index + 1:]))
            return
        if word.text.startswith(("--command=", "--execute=")):
            found.scripts.append(word.text.partition("=")[2])
    if invocation.name == "kitty":
        found.commands.extend(args[start:] for start in _starts(args)[:1])


_HANDLERS: Final = {
    "tmux": _tmux, "screen": _screen, "parallel": _parallel, "sem": _parallel, "fd": _fd, "fdfind": _fd,
    "rg": _rg, "sort": _sort, "tar": _tar, "rsync": _rsync, "ssh": _ssh, "scp": _ssh, "sftp": _ssh,
    "hyperfine": _hyperfine, "entr": _entr,
}

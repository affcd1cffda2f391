"""What a command's words run: wrappers (``sudo``, ``env``, ``timeout``, ``xargs``, ``busybox``...) peeled off.

``sudo -u root nice -n 5 rm -rf x`` runs ``rm``: each wrapper's options are read the way it reads them
(which take a value, how many operands come before the command), one word at a time, so a chain of
wrappers costs time linear in its length. Some wrappers take shell code instead of a command
(``env -S``, ``flock -c``, ``watch``): that code is returned as a script to parse.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .shell import Word

__all__ = ["Invocation", "Unwrapped", "basename", "operands", "unwrap"]


@dataclass(frozen=True)
class _Wrapper:
    """How a wrapper reads its words before the command it runs."""

    #: Short options that take a value (``-u root`` or ``-uroot``).
    short_values: str = ""
    #: Long options that take a value (``--user root`` or ``--user=root``).
    long_values: frozenset[str] = frozenset()
    #: Operands before the command (``timeout DURATION``, ``chroot NEWROOT``).
    operands: int = 0
    #: Options whose value is shell code (``env -S``, ``flock -c``).
    script_options: frozenset[str] = frozenset()
    #: ``VAR=value`` words before the command are settings, not the command (``env``).
    assignments: bool = False
    #: Options after which nothing runs (``command -v rm`` only prints).
    inert_options: frozenset[str] = frozenset()
    #: The command words are joined into one script for ``sh -c`` (``watch``).
    joins: bool = False


def _w(short: str = "", long: str = "", **kwargs: Any) -> _Wrapper:
    return _Wrapper(short, frozenset(long.split()), **kwargs)


WRAPPERS: Final[dict[str, _Wrapper]] = {
    "sudo": _w("ughpCDrtUTR", "--user --group --host --prompt --close-from --chdir --role --type --other-user "
                              "--command-timeout"),
    "doas": _w("uC"),
    "env": _w("uCP", "--unset --chdir", assignments=True, script_options=frozenset({"-S", "--split-string"})),
    "nice": _w("n", "--adjustment"),
    "ionice": _w("cnp", "--class --classdata --pid"),
    "nohup": _w(),
    "setsid": _w(),
    "time": _w("fo", "--format --output"),
    "timeout": _w("sk", "--signal --kill-after", operands=1),
    "exec": _w("a"),
    "command": _w(inert_options=frozenset({"-v", "-V"})),
    "builtin": _w(),
    "stdbuf": _w("ioe", "--input --output --error"),
    "unbuffer": _w(),
    "strace": _w("abeEopPsSuIX", "--output --trace --signal --user --attach"),
    "ltrace": _w("aeEnopsSu"),
    "xargs": _w("aEdIiLlnPs", "--arg-file --eof --delimiter --replace --max-lines --max-args --max-procs "
                              "--max-chars --process-slot-var"),
    "watch": _w("nd", "--interval --differences", joins=True),
    "flock": _w("wEn", "--timeout --conflict-exit-code", operands=1,
                script_options=frozenset({"-c", "--command"})),
    "chroot": _w("", "--userspec --groups", operands=1),
    "taskset": _w(operands=1),
    "chrt": _w(operands=1),
    "runuser": _w("ugGlw", "--user --group --supp-group --login --whitelist-environment",
                  script_options=frozenset({"-c", "--command"})),
    "busybox": _w(),
    "toybox": _w(),
    "caffeinate": _w("tw"),
    "proxychains4": _w("f"),
    "torsocks": _w("uapP"),
}


@dataclass(frozen=True)
class Invocation:
    """One program run: ``name`` is the command word's base name, lower-cased (file systems may fold case)."""

    name: str
    word: Word
    args: tuple[Word, ...]

    @property
    def texts(self) -> list[str]:
        return [arg.text for arg in self.args]


@dataclass
class Unwrapped:
    """The programs a command's words run, outermost first (the last one does the work)."""

    invocations: list[Invocation] = field(default_factory=list)
    #: Shell code handed to a wrapper (``env -S '...'``, ``flock x -c '...'``, ``watch ...``).
    scripts: list[str] = field(default_factory=list)
    #: The command word is decided at run time (a variable, a substitution, a glob).
    dynamic: bool = False


def basename(text: str) -> str:
    return text.rsplit("/", 1)[-1].lower()


def unwrap(words: Sequence[Word]) -> Unwrapped:
    """Peel wrappers off ``words`` (a command's words, name first)."""
    result = Unwrapped()
    index = 0
    while index < len(words):
        word = words[index]
        if not word.static:
            result.dynamic = True
            return result
        name = basename(word.text)
        result.invocations.append(Invocation(name, word, tuple(words[index + 1:])))
        wrapper = WRAPPERS.get(name)
        if wrapper is None:
            return result
        index = _skip(wrapper, words, index + 1, result)
        if wrapper.joins and index < len(words):
            result.scripts.append(" ".join(w.text for w in words[index:]))
            return result
    return result


def _skip(wrapper: _Wrapper, words: Sequence[Word], index: int, result: Unwrapped) -> int:
    """The index of the wrapped command's first word (``len(words)`` when none runs)."""
    operands = wrapper.operands
    while index < len(words):
        text = words[index].text
        if text == "--":
            index += 1
            break
        if wrapper.assignments and "=" in text and not text.startswith("-"):
            index += 1
            continue
        if not text.startswith("-") or text == "-":
            if operands == 0:
                break
            operands -= 1
            index += 1
            continue
        if text in wrapper.inert_options:
            return len(words)
        option, _, attached = text.partition("=")
        takes_value = option in wrapper.long_values or option in wrapper.script_options
        if not text.startswith("--"):
            letters = text[1:]
            cut = next((i for i, letter in enumerate(letters) if letter in wrapper.short_values
                        or f"-{letter}" in wrapper.script_options), None)
            if cut is not None:
                option, attached = f"-{letters[cut]}", letters[cut + 1:]
                takes_value = True
        if takes_value and not attached and index + 1 < len(words):
            index += 1
            attached = words[index].text
        if option in wrapper.script_options:
            result.scripts.append(attached)
            return len(words)
        index += 1
    while operands > 0 and index < len(words):
        operands -= 1
        index += 1
    return index


def operands(args: Sequence[Word], takes_value: str = "") -> list[Word]:
    """The non-option arguments (everything after ``--``); ``takes_value`` lists short options with a value."""
    found: list[Word] = []
    index = 0
    while index < len(args):
        text = args[index].text
        if text == "--":
            return found + list(args[index + 1:])
        if text.startswith("-") and text != "-":
            if len(text) == 2 and text[1] in takes_value:
                index += 1
        else:
            found.append(args[index])
        index += 1
    return found

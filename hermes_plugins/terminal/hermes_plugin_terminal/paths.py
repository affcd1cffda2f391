"""Paths a command reads or writes, judged against the workspace (``terminal.workspace_only``).

After parsing, each word that names a file (an argument that looks like a path, an option's ``=`` value, a
redirection's target, ``cd``'s folder) is resolved as the shell would: ``~`` and ``$HOME`` to the home, ``$PWD`` and
relative paths against the command's working directory, then ``.`` and ``..`` lexically. A path outside the
workspace root is outside; so is a path decided at run time (``cat "$f"``), which cannot be placed. Patterns are
not paths (``grep``'s, ``sed``'s and ``awk``'s program, ``find -name``'s), and neither are URLs, ``host:path``
remote paths or the harmless devices (``/dev/null``, ``/dev/stdout``...). ``cd`` is not followed: a path after
``cd sub &&`` is resolved against the command's own working directory (which may ask for a path that is inside).

Symbolic links are not followed (the classifier reads no file system): a link inside the workspace that points out
is not seen.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from .invocation import Invocation, operands
from .shell import Word

__all__ = ["Workspace"]

_HARMLESS: Final = re.compile(r"/dev/(?:null|zero|stdin|stdout|stderr|tty|random|urandom|full)|/dev/fd/\d+")
#: Programs whose first operand is a pattern or a program, not a file (unless ``-e``/``-f`` gives it).
_PATTERN_FIRST: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack", "sed", "awk", "gawk", "mawk", "jq",
                                   "yq"})
#: Programs whose operands are text, not files.
_TEXT: Final = frozenset({"echo", "printf", "test", "[", "expr", "true", "false", ":"})
#: ``find`` tests whose value is a pattern.
_FIND_PATTERNS: Final = frozenset({"-name", "-iname", "-path", "-ipath", "-regex", "-iregex", "-wholename",
                                   "-iwholename", "-lname", "-ilname"})
_REMOTE: Final = re.compile(r"[^/]*:")  # host:path, scheme://, a Windows drive
_GLOB_OR_EXPANSION: Final = re.compile(r"[*?\[{$`]")


@dataclass(frozen=True)
class Workspace:
    """Where the command runs (``cwd``), the workspace root it must stay in, and the home ``~`` stands for."""

    root: str
    cwd: str
    home: str

    def outside(self, program: Invocation, redirects: Sequence[tuple[str, Word]] = ()) -> list[str]:
        """The paths ``program`` (with its ``redirects``: operator and target) names outside the workspace."""
        words = [*self._path_words(program), *(target for operator, target in redirects
                                               if not target.text.isdigit() and target.text != "-")]
        if program.word.text.startswith(("./", "../", "~")):  # a script run by its path is read
            words.append(program.word)
        return [word.text for word in words if not self.inside(word)]

    def inside(self, word: Word) -> bool:
        """Whether ``word``, read as a path, stays inside the root (a path decided at run time never does)."""
        text = word.text
        if not word.static:
            base = next(((variable, base) for variable, base in self._variables() if text.startswith(variable)), None)
            if base is not None:
                text = base[1] + text[len(base[0]):]
            elif text.startswith("$") or "`" in text or "$(" in text:
                return False
            text = _GLOB_OR_EXPANSION.split(text, maxsplit=1)[0]  # a glob: the folder it starts in
        if _HARMLESS.fullmatch(text):
            return True
        if text == "~" or text.startswith("~/"):
            path = self.home + text[1:]
        elif text.startswith("~"):  # ~user: another user's home
            return False
        else:
            path = posixpath.join(self.cwd, text)
        resolved = posixpath.normpath(path)
        root = posixpath.normpath(self.root)
        return resolved == root or resolved.startswith(root.rstrip("/") + "/")

    def _variables(self) -> tuple[tuple[str, str], ...]:
        """The variables a path may start with, and what they stand for."""
        return (("${HOME}", "~"), ("$HOME", "~"), ("${PWD}", self.cwd), ("$PWD", self.cwd))

    def _path_words(self, program: Invocation) -> Iterator[Word]:
        """The words of ``program`` that name files."""
        name, args = program.name, list(program.args)
        if name in _TEXT:
            return
        if name == "find":  # the folders it walks; its tests' values are patterns
            args = [word for index, word in enumerate(args)
                    if not (index and args[index - 1].text in _FIND_PATTERNS) and not word.text.startswith("-")]
        if name in _PATTERN_FIRST and not any(text in ("-e", "-f", "--regexp", "--file", "--expression")
                                              for text in program.texts):
            pattern = next(iter(operands(args)), None)
            args = [word for word in args if word is not pattern]
        if name == "cd" and not args:
            yield Word("~")
        for word in args:
            value = _path_value(word)
            if value is not None:
                yield value


def _path_value(word: Word) -> Word | None:
    """The path ``word`` names: itself, or the value of ``--option=PATH`` or ``KEY=PATH``; None when it names none."""
    text = word.text
    key, equals, value = text.partition("=")
    if equals and not key.startswith(("/", "~", ".")) and "/" not in key:
        return _path_value(Word(value, word.static)) if value else None
    if text.startswith("-"):
        return None
    if "://" in text or (_REMOTE.match(text) and not text.startswith(("/", "~", "."))):
        return None
    if not word.static and text.startswith("$"):
        return word
    if text in (".", "..", "~") or text.startswith(("/", "~", "./", "../")) or "/" in text:
        return word
    return None

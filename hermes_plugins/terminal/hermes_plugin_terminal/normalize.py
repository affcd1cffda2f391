"""Turn a shell command into one canonical line that the danger rules can match.

The canonical form keeps only what the shell would *run*, spelled one way:

- escape sequences (ANSI/OSC), control characters and Unicode look-alikes are removed or folded (NFKC);
- quoting and backslash escapes are undone (``"r"m``, ``r\\m`` and ``$'\\x72m'`` all read ``rm``), and
  ``$IFS`` reads as a space;
- separators the shell acts on (``;`` ``&`` ``|`` ``(`` ``)``, newlines) become ``;`` ``&`` ``|`` ``(`` ``)``
  tokens with spaces around them, while the same characters *inside quotes* become spaces, so quoted text
  that is only printed (``echo "a; rm -rf /"``) cannot look like a command;
- text the shell runs later is inlined and parsed again: ``$(...)`` and backticks (also inside double
  quotes), the script of ``sh -c``/``su -c``, the words of ``eval`` and the remote command of ``ssh``,
  each wrapped in ``( ... )`` so it starts at a command position;
- comments are dropped, whitespace collapsed, and everything lower-cased: the rules are case-insensitive
  on purpose (SQL keywords, case-insensitive file systems).

Here-document bodies are read as commands: ``bash <<EOF`` runs them, and telling it apart from
``cat <<EOF`` is not worth the risk of a miss.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Final

__all__ = ["COMMAND_PREFIXES", "normalize_command"]

#: Words that run the word after them as a command (``sudo rm``, ``xargs rm``, ``then rm``).
COMMAND_PREFIXES: Final = (
    "sudo", "doas", "env", "nohup", "nice", "ionice", "time", "exec", "command", "builtin", "xargs",
    "timeout", "setsid", "stdbuf", "unbuffer", "strace", "watch", "then", "do", "else", "if", "while",
    "until", "!",
)

_ESCAPES: Final = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"             # CSI: colours, cursor movement
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks
    r"|\x1b[@-_]"                          # other two-byte escapes
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"      # remaining control characters (keeps \t and \n)
)
_OPERATOR_CHARS: Final = frozenset(";&|()<>")
#: Characters that are inert inside quotes but would look like syntax in the canonical form.
_NEUTRALIZED: Final = frozenset(";&|(){}<>`\n")
_C_ESCAPES: Final = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)", re.S)
_C_SIMPLE: Final = {"n": "\n", "t": "\t", "r": "\r", "a": "", "b": "", "e": "", "f": "", "v": ""}
_IFS: Final = re.compile(r"\$(?:\{ifs\}|ifs\b)", re.I)
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "ksh", "dash", "ash", "mksh", "fish", "csh", "tcsh"})
_SWITCH_USER: Final = frozenset({"su", "runuser"})
_SSH_OPTIONS_WITH_VALUE: Final = frozenset("bcDEeFIiJLlmOopQRSWw")
_ANSI_C_BODY: Final = re.compile(r"(?:[^'\\]|\\.)*", re.S)
_MAX_DEPTH: Final = 8
_QUOTING: Final = re.compile(r"[\"'\\]")
_C_FLAG: Final = re.compile(r"(\s-[a-zA-Z]*c)\s")


def normalize_command(command: str) -> str:
    """The canonical, lower-case form of ``command`` (see the module docstring)."""
    return _canonical(_clean(command), depth=0)


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\r\n", "\n").replace("\r", "\n")
    return _ESCAPES.sub("", text).replace("\\\n", "")


def _canonical(text: str, depth: int) -> str:
    if depth > _MAX_DEPTH:  # absurd nesting: drop quoting and start a command after every -c flag
        return " ".join(_C_FLAG.sub(r"\1 ; ", _QUOTING.sub("", text)).split()).lower()
    items = _Lexer(text, depth).items()
    return " ".join(_render(items, depth).split()).lower()


@dataclass
class _Word:
    """One shell word: ``raw`` is its value as the shell sees it, ``canon`` its canonical rendering."""

    raw: list[str] = field(default_factory=list)
    canon: list[str] = field(default_factory=list)

    def add(self, raw: str, canon: str | None = None) -> None:
        self.raw.append(raw)
        self.canon.append(raw if canon is None else canon)

    def add_quoted(self, text: str) -> None:
        self.add(text, "".join(" " if ch in _NEUTRALIZED else ch for ch in text))

    @property
    def value(self) -> str:
        return "".join(self.raw)


_Item = _Word | str  # a word, or an operator token


class _Lexer:
    """A forgiving POSIX-shell lexer: it never fails, unbalanced quotes simply run to the end."""

    def __init__(self, text: str, depth: int) -> None:
        self.text, self.pos, self.depth = text, 0, depth

    def items(self, closer: str | None = None) -> list[_Item]:
        """Read words and operators until ``closer`` (an unmatched ``)`` or a backtick) or the end."""
        items: list[_Item] = []
        nesting = 0
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == closer and (closer == "`" or nesting == 0):
                self.pos += 1
                break
            if ch in " \t":
                self.pos += 1
            elif ch == "\n":
                items.append(";")
                self.pos += 1
            elif ch == "#" and (self.pos == 0 or text[self.pos - 1] in " \t\n;&|()"):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end
            elif ch in _OPERATOR_CHARS:
                op = text[self.pos:self.pos + 2] if text[self.pos:self.pos + 2] in ("&&", "||", ">>", "<<") else ch
                nesting += {"(": 1, ")": -1}.get(op, 0)
                items.append(op)
                self.pos += len(op)
            else:
                items.append(self._word(closer))
        return items

    def _word(self, closer: str | None) -> _Word:
        word = _Word()
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in " \t\n" or ch in _OPERATOR_CHARS or ch == closer:
                break
            if ch == "\\":
                word.add_quoted(text[self.pos + 1:self.pos + 2])
                self.pos += 2
            elif ch == "'":
                end = text.find("'", self.pos + 1)
                end = len(text) if end < 0 else end
                word.add_quoted(text[self.pos + 1:end])
                self.pos = end + 1
            elif text.startswith("$'", self.pos):
                self.pos += 2
                word.add_quoted(self._ansi_c())
            elif ch == '"':
                self.pos += 1
                self._double_quoted(word)
            elif (ifs := _IFS.match(text, self.pos)) is not None:
                word.add(" ")
                self.pos = ifs.end()
            elif text.startswith("$(", self.pos) or ch == "`":
                self._substitution(word)
            else:
                word.add(ch)
                self.pos += 1
        return word

    def _ansi_c(self) -> str:
        """Decode a ``$'...'`` string (the opening ``$'`` already consumed)."""
        match = _ANSI_C_BODY.match(self.text, self.pos)
        body = match.group() if match else ""
        self.pos += len(body) + 1
        return _C_ESCAPES.sub(_decode_c_escape, body)

    def _double_quoted(self, word: _Word) -> None:
        text = self.text
        while self.pos < len(text) and text[self.pos] != '"':
            ch = text[self.pos]
            if ch == "\\" and text[self.pos + 1:self.pos + 2] in ('"', "\\", "$", "`", "\n"):
                word.add_quoted(text[self.pos + 1])
                self.pos += 2
            elif text.startswith("$(", self.pos) or ch == "`":
                self._substitution(word)
            else:
                word.add_quoted(ch)
                self.pos += 1
        self.pos += 1

    def _substitution(self, word: _Word) -> None:
        """Inline ``$(...)`` or a backtick substitution: it runs, so it is parsed as a command."""
        start = self.pos
        closer = "`" if self.text[self.pos] == "`" else ")"
        self.pos += 1 if closer == "`" else 2
        inner = _render(self.items(closer), self.depth + 1)
        word.add(self.text[start:self.pos], f" $( {inner} ) ")


def _decode_c_escape(match: re.Match[str]) -> str:
    code = match.group(1)
    if code[0] in "xuU":
        return chr(int(code[1:], 16))
    if code[0] in "01234567":
        return chr(int(code, 8))
    return _C_SIMPLE.get(code, code)


def _render(items: list[_Item], depth: int) -> str:
    """Render items, re-parsing the words that a command hands to another shell."""
    scripts = _nested_scripts(items)
    parts: list[str] = []
    for index, item in enumerate(items):
        if isinstance(item, str):
            parts.append(f" {item} ")
        elif index in scripts:
            if scripts[index]:
                parts.append(f" ( {_canonical(scripts[index], depth + 1)} ) ")
        else:
            parts.append("".join(item.canon))
    return " ".join(parts)


def _nested_scripts(items: list[_Item]) -> dict[int, str]:
    """Map the index of each word that is a script for another shell to that script's text.

    For ``eval`` and ``ssh`` the script is all the following words; their other indexes map to ``""``.
    """
    scripts: dict[int, str] = {}
    command: list[tuple[int, _Word]] = []
    for index, item in enumerate([*items, ";"]):
        if isinstance(item, _Word):
            command.append((index, item))
            continue
        scripts.update(_script_of(command))
        command = []
    return scripts


def _script_of(command: list[tuple[int, _Word]]) -> dict[int, str]:
    values = [word.value for _, word in command]
    names = [value.rsplit("/", 1)[-1].lower() for value in values]
    start = next((i for i, name in enumerate(names) if not _is_prefix(name)), len(names))
    if start < len(names) and names[start] == "eval":
        return _joined(command[start + 1:])
    if start < len(names) and names[start] == "ssh":
        return _joined(command[_ssh_command_start(values, start):])
    # A shell anywhere in the line runs its -c script (``docker exec box sh -c '...'``, ``sudo -u x bash -c``).
    for position, name in enumerate(names):
        if name in _SHELLS or name in _SWITCH_USER:
            script = _after_c_flag(command, position, stop_at_operand=name in _SHELLS)
            if script:
                return script
    return {}


def _is_prefix(name: str) -> bool:
    return name in COMMAND_PREFIXES or name.startswith("-") or "=" in name or name.isdigit()


def _after_c_flag(command: list[tuple[int, _Word]], shell: int, *, stop_at_operand: bool) -> dict[int, str]:
    """The script of ``sh [options] -c SCRIPT`` (``su USER -c SCRIPT`` when not ``stop_at_operand``)."""
    for offset, (_, word) in enumerate(command[shell + 1:], start=shell + 1):
        value = word.value
        if re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", value) and offset + 1 < len(command):
            index, script = command[offset + 1]
            return {index: script.value}
        if stop_at_operand and not value.startswith("-"):
            break
    return {}


def _ssh_command_start(values: list[str], ssh: int) -> int:
    """Index of the first word of the remote command in an ``ssh [options] host command...`` line."""
    position = ssh + 1
    while position < len(values) and values[position].startswith("-"):
        option = values[position]
        takes_value = len(option) == 2 and option[1] in _SSH_OPTIONS_WITH_VALUE
        position += 2 if takes_value else 1
    return position + 1


def _joined(words: list[tuple[int, _Word]]) -> dict[int, str]:
    if not words:
        return {}
    scripts = {index: "" for index, _ in words}
    scripts[words[0][0]] = " ".join(word.value for _, word in words)
    return scripts

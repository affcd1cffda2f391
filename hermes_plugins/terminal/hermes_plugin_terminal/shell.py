"""Parse a shell command line into the simple commands it runs, with tree-sitter-bash.

Each :class:`Command` holds its words as the shell would see them (quoting and escapes undone,
``$'...'`` decoded, an unquoted ``$IFS`` read as a word break), its redirections and, in a pipeline,
the commands that feed its standard input. Commands anywhere in the line are found: in lists,
pipelines, subshells, functions, loops, ``$(...)``, backticks and ``<(...)``. Text that is only quoted
is never a command: ``echo "rm -rf /"`` is one command, ``echo``.

Text the shell runs later (an ``sh -c`` script, ``eval`` words, a here-document fed to a shell) is a
string here; :mod:`.danger` parses it again. So is the body of an unquoted here-document, where the shell runs
``$(...)`` and backticks before the command reads it (:meth:`Redirect.substituted`).

Where tree-sitter's reading cannot be the shell's, the script says so (:attr:`Script.misread`): two words of a
command with no space between them were one word to the shell.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import pairwise
from typing import Final

import tree_sitter_bash
from tree_sitter import Language, Node, Parser

__all__ = ["Command", "Redirect", "Script", "Word", "clean", "parse"]

_PARSER: Final = Parser(Language(tree_sitter_bash.language()))
_ESCAPES: Final = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"             # CSI: colours, cursor movement
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC: titles, hyperlinks
    r"|\x1b[@-_]"                          # other two-byte escapes
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"      # remaining control characters (keeps \t and \n)
)
_C_ESCAPES: Final = re.compile(r"\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{1,3}|.)", re.S)
_C_SIMPLE: Final = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "e": "\x1b", "f": "\f", "v": "\v"}
_UNQUOTED_ESCAPE: Final = re.compile(r"\\(.)", re.S)
_DQUOTED_ESCAPE: Final = re.compile(r"\\([$`\"\\])")
_GLOB: Final = frozenset("*?[{")
_SUBSTITUTIONS: Final = frozenset({"command_substitution", "process_substitution"})
_WRITE_OPERATORS: Final = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
#: ``$IFS`` not followed by a name character: tree-sitter misreads ``rm$IFS-rf$IFS/`` (the braced form it reads).
_BARE_IFS: Final = re.compile(r"\$IFS(?![A-Za-z0-9_])")
#: What a backslash escapes in an unquoted here-document (a double-quoted string also escapes ``"``).
_HEREDOC_ESCAPES: Final = frozenset("$`\\\n")


def clean(text: str) -> str:
    """Fold Unicode look-alikes (NFKC) and drop escape sequences, control characters and line continuations."""
    text = unicodedata.normalize("NFKC", text).replace("\r\n", "\n").replace("\r", "\n")
    return _BARE_IFS.sub("${IFS}", _ESCAPES.sub("", text).replace("\\\n", ""))


@dataclass(frozen=True)
class Word:
    """One word after quote removal. Expansions and substitutions keep their source text (``$HOME``)."""

    text: str
    #: Nothing in it is decided at run time: no expansion, substitution, glob or brace.
    static: bool = True
    #: The ``$(...)``, backtick and ``<(...)`` nodes inside it: their output becomes part of the word.
    substitutions: tuple[Node, ...] = ()


@dataclass(frozen=True)
class Redirect:
    """A redirection: ``operator`` and its target, or the body of a here-document or here-string."""

    operator: str
    target: Word | None = None
    body: str | None = None
    #: A here-document whose delimiter is unquoted: the shell expands its body (``$(...)``, backticks).
    expands: bool = False

    @property
    def writes(self) -> bool:
        return self.operator in _WRITE_OPERATORS and self.target is not None and not self.target.text.isdigit()

    def substituted(self) -> str | None:
        """The body of an unquoted here-document as a double-quoted shell word (``: "..."``), for its
        substitutions to be parsed as the shell runs them; None for any other redirection."""
        if not self.expands or not self.body:
            return None
        out: list[str] = []
        index = 0
        body = self.body
        while index < len(body):
            char = body[index]
            if char == "\\" and index + 1 < len(body) and body[index + 1] in _HEREDOC_ESCAPES:
                out.append(body[index:index + 2])
                index += 2
                continue
            out.append({"\\": "\\\\", '"': '\\"'}.get(char, char))
            index += 1
        return f': "{"".join(out)}"'


@dataclass(eq=False)
class Command:
    """A simple command: its words (name first, assignments left out) and redirections."""

    words: list[Word]
    redirects: list[Redirect] = field(default_factory=list)
    #: The commands of the previous pipeline stage, whose output is this command's input.
    upstream: tuple[Command, ...] = ()
    #: The variables set for this command alone (``LD_PRELOAD=x ls``).
    assignments: tuple[str, ...] = ()


@dataclass
class Script:
    """Every simple command of a command line, in source order, and what else a check needs."""

    commands: list[Command]
    #: ``(name, commands of its body)`` of each function defined.
    functions: list[tuple[str, list[Command]]]
    #: Redirections of compound commands (``{ ...; } > file``), which belong to no single command.
    redirects: list[Redirect]
    #: The parser had to recover from a syntax error: some of the line may be misread.
    has_error: bool
    _by_node: dict[int, Command]
    #: ``(name, value)`` of each variable set (``X=1 cmd``, ``export X=1``) or unset (value None), anywhere.
    variables: list[tuple[str, str | None]] = field(default_factory=list)
    #: A command's words were split where the shell would not split them: what runs is not what was read.
    misread: bool = False

    def commands_in(self, node: Node) -> list[Command]:
        """The commands inside ``node`` (a substitution, a function body), in source order."""
        return [self._by_node[n.id] for n in _descendants(node) if n.id in self._by_node]


def parse(text: str) -> Script:
    """Parse ``text`` (already :func:`clean`) into a :class:`Script`."""
    tree = _PARSER.parse(text.encode())
    nodes = list(_descendants(tree.root_node))
    by_node = {node.id: _command(node) for node in nodes if node.type == "command"}
    script = Script(list(by_node.values()), [], [], tree.root_node.has_error, by_node)
    script.misread = any(_split_word(node) for node in nodes if node.type == "command")
    for node in nodes:
        if node.type == "redirected_statement":
            body = node.child_by_field_name("body")
            redirects = [_redirect(c) for c in node.named_children if _is_redirect(c)]
            owner = by_node.get(body.id) if body is not None else None
            if owner is not None:
                owner.redirects.extend(redirects)
                continue
            script.redirects.extend(redirects)
            # { bash; } <<< '...': the standard input of a compound command is each inner command's
            stdin = [r for r in redirects if r.body is not None or r.operator == "<"]
            for inner in script.commands_in(body) if body is not None and stdin else ():
                inner.redirects.extend(stdin)
        elif node.type == "pipeline":
            _link(node, script)
        elif node.type == "variable_assignment":
            name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            if name is not None:
                words = _evaluate(value) if value is not None else []
                script.variables.append((_text(name), " ".join(w.text for w in words)))
        elif node.type == "unset_command":
            script.variables.extend((_text(c), None) for c in node.named_children)
        elif node.type == "function_definition":
            name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
            if name is not None and body is not None:
                script.functions.append((_text(name), script.commands_in(body)))
    return script


def _command(node: Node) -> Command:
    assignments = tuple(_text(name) for child in node.named_children if child.type == "variable_assignment"
                        if (name := child.child_by_field_name("name")) is not None)
    return Command(_words(node), [_redirect(c) for c in node.named_children if _is_redirect(c)],
                   assignments=assignments)


def _split_word(command: Node) -> bool:
    """Whether two of ``command``'s words touch (no space between): tree-sitter split one shell word."""
    children = [c for c in command.named_children if not _is_redirect(c) and c.type != "comment"]
    return any(a.end_byte == b.start_byte for a, b in pairwise(children))


def _descendants(node: Node) -> Iterator[Node]:
    """``node`` and everything under it, in source order, without recursion (nesting can be deep)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def _text(node: Node) -> str:
    return node.text.decode(errors="replace") if node.text is not None else ""


def _is_redirect(node: Node) -> bool:
    return node.type in ("file_redirect", "heredoc_redirect", "herestring_redirect")


def _redirect(node: Node) -> Redirect:
    if node.type == "heredoc_redirect":
        body = next((c for c in node.named_children if c.type == "heredoc_body"), None)
        start = next((c for c in node.named_children if c.type == "heredoc_start"), None)
        quoted = start is None or any(quote in _text(start) for quote in "'\"\\")
        return Redirect("<<", body=_text(body) if body is not None else "", expands=not quoted)
    operator = next((_text(c) for c in node.children if not c.is_named), "")
    if node.type == "herestring_redirect":
        target = node.named_children[-1] if node.named_children else None
        return Redirect("<<<", body=" ".join(w.text for w in _evaluate(target)) if target is not None else "")
    destination = node.child_by_field_name("destination")
    words = _evaluate(destination) if destination is not None else []
    return Redirect(operator, words[0] if words else None)


def _words(command: Node) -> list[Word]:
    words: list[Word] = []
    for child in command.named_children:
        if child.type == "command_name":
            words.extend(_evaluate(child.named_children[0]) if child.named_children else [])
        elif child.type not in ("variable_assignment", "comment") and not _is_redirect(child):
            words.extend(_evaluate(child))
    return words


def _evaluate(node: Node) -> list[Word]:
    """The words ``node`` stands for: usually one; an unquoted ``$IFS`` splits it."""
    fields: list[list[str]] = [[]]
    static = [True]
    substitutions: list[Node] = []

    def walk(part: Node, quoted: bool) -> None:
        kind = part.type
        if kind == "word" or kind == "number":
            text = _text(part)
            if not quoted and _GLOB.intersection(text):
                static[0] = False
            fields[-1].append(text if quoted else _UNQUOTED_ESCAPE.sub(r"\1", text))
        elif kind == "raw_string":
            fields[-1].append(_text(part)[1:-1])
        elif kind == "ansi_c_string":
            fields[-1].append(_C_ESCAPES.sub(_decode_c_escape, _text(part)[2:-1]))
        elif kind in ("string", "translated_string"):
            for child in part.children:
                if child.type == "string_content":
                    fields[-1].append(_DQUOTED_ESCAPE.sub(r"\1", _text(child)))
                elif child.is_named:
                    walk(child, quoted=True)
        elif kind == "concatenation":
            for child in part.named_children:
                walk(child, quoted)
        elif not quoted and kind in ("simple_expansion", "expansion") and _text(part) in ("$IFS", "${IFS}"):
            fields.append([])
        else:  # an expansion, substitution or anything else decided at run time: keep its source text
            static[0] = False
            if kind in _SUBSTITUTIONS:
                substitutions.append(part)
            else:
                substitutions.extend(n for n in _descendants(part) if n.type in _SUBSTITUTIONS)
            fields[-1].append(_text(part))

    walk(node, quoted=False)
    return [Word("".join(parts), static[0], tuple(substitutions)) for parts in fields if parts]


def _decode_c_escape(match: re.Match[str]) -> str:
    code = match.group(1)
    if code[0] in "xuU":
        return chr(int(code[1:], 16))
    if code[0] in "01234567":
        return chr(int(code, 8) & 0xFF)
    return _C_SIMPLE.get(code, code)


def _link(pipeline: Node, script: Script) -> None:
    """Give each stage of ``pipeline`` the commands of the stage before it as ``upstream``."""
    stages = [c for c in pipeline.children if c.is_named]
    previous: list[Command] = []
    if pipeline.children and not pipeline.children[0].is_named:
        # tree-sitter puts "cat <<EOF | sh" as a pipeline inside the here-document redirection
        statement = pipeline.parent.parent if pipeline.parent is not None else None
        body = statement.child_by_field_name("body") if statement is not None else None
        previous = script.commands_in(body) if body is not None else []
    for stage in stages:
        if previous:
            for command in _leading(stage, script):
                command.upstream = tuple(previous)
        previous = script.commands_in(stage)


def _leading(node: Node, script: Script) -> list[Command]:
    """The commands of ``node`` that read its standard input first."""
    while node.type in ("redirected_statement", "list", "pipeline", "subshell", "compound_statement",
                        "negated_command") and node.named_children:
        node = node.child_by_field_name("body") or node.named_children[0]
    command = script._by_node.get(node.id)
    return [command] if command is not None else []

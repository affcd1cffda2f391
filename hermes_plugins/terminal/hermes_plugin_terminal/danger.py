"""Classify shell commands as safe, dangerous (needs approval) or hardline (always refused).

The command is parsed (:mod:`.shell`, tree-sitter-bash) into the programs it runs, wherever bash runs them:
lists, pipelines, subshells, functions, loops, ``coproc``, ``$(...)``, backticks and ``<(...)``, in here-documents
and here-strings too. Wrappers such as ``sudo``, ``su``, ``xargs``, ``timeout`` or ``unshare`` are peeled off
(:mod:`.invocation`), programs that are handed commands are read (``tmux``, ``screen``, ``parallel``, ``fd -x``,
``tar --to-command``...: :mod:`.runners`; editors told to run a shell: :mod:`.escapes`; containers:
:mod:`.containers`), and each program is checked for what it does (:mod:`.programs`). Code the shell runs later is
parsed too: ``sh -c``, ``eval``, ``ssh host ...``, a shell's standard input (a here-document, a here-string,
``echo ... |``: ``sudo -s``, ``su``, ``bash``, ``at``), ``trap`` and ``alias`` bodies, prompt strings. So quoting
does not hide a command, and text that is only printed stays safe: ``echo "rm -rf /"`` runs nothing, ``git commit
-m "rm -rf /"`` neither.

What cannot be known without running the command needs approval (fail closed): a variable or a substitution as
the command word, ``eval``, ``alias`` and ``hash -p``, code handed to an interpreter (``python -c``, ``perl -e``,
``awk`` with ``system``, a here-document into ``python``), text piped into a shell, a script the command writes
and then runs, a line the parser cannot read (a syntax error, or words it split where bash would not), one nested
deeper than :data:`MAX_DEPTH`, and one longer than :data:`MAX_COMMAND_CHARS`. Hardline refusals are kept for what
is certain. Every step is linear in the command's length (no backtracking patterns, a bounded number of readings
of ambiguous options), and nesting is bounded, so classification time is linear too.

Two stricter readings are opt-in (:class:`Strictness`): ``read_only`` asks for every command that is not made
only of programs on a read-only list (:mod:`.readonly`, ``approvals.mode: strict``), and ``workspace`` asks for
every path outside the workspace (:mod:`.paths`, ``terminal.workspace_only``).

This is a safety net against mistakes and casual obfuscation, not a sandbox.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from . import programs
from .containers import ContainerRun, container_runs
from .escapes import PAGER_VARIABLES, commands_read, escapes, stdin_commands
from .inline import harmless_python
from .invocation import Invocation, Unwrapped, basename, operands, unwrap
from .paths import Workspace
from .readonly import ReadOnlyList, risky_variable
from .rules import (
    CONTAINER_HOST_ACCESS,
    DESTRUCTIVE_SQL,
    DYNAMIC_COMMAND,
    EDITOR_COMMAND,
    FIND_DELETE,
    FORK_BOMB,
    HISTORY_TAMPER,
    INTERPRETER_CODE,
    NOT_READ_ONLY,
    OUTSIDE_WORKSPACE,
    PAYLOAD_TO_SHELL,
    REMOTE_CODE_TO_SHELL,
    RULES,
    TOO_LONG,
    UNPARSABLE,
    WRITTEN_SCRIPT,
    Level,
    Rule,
)
from .runners import runs
from .shell import Command, Redirect, Script, Word, clean, parse

__all__ = ["MAX_COMMAND_CHARS", "MAX_DEPTH", "RULES", "Classification", "Level", "ReadOnlyList", "Rule", "Strictness",
           "Workspace", "classify"]

#: Longer commands are not parsed: they need approval (``too_long``).
MAX_COMMAND_CHARS: Final = 10_000
#: Nested scripts (``sh -c "sh -c '...'"``) deeper than this need approval (``unparsable``).
MAX_DEPTH: Final = 8

_SHELLS: Final = frozenset({"sh", "bash", "zsh", "ksh", "dash", "ash", "mksh", "fish", "csh", "tcsh", "rbash",
                            "yash", "posh", "oksh", "loksh", "pdksh", "ksh93", "rzsh", "rksh"})
#: Variables whose value the shell itself runs or expands with its substitutions (``PS4='$(...)' bash -x``).
_SHELL_CODE_VARIABLES: Final = frozenset({"PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS3", "PS4"})
#: Front ends that run a command in a container, a pod or a machine: a shell among their words runs there.
_EXEC_FRONTENDS: Final = frozenset({"docker", "podman", "nerdctl", "finch", "kubectl", "oc", "lxc", "incus",
                                    "multipass", "machinectl", "distrobox", "toolbox", "flatpak-spawn", "lxc-attach",
                                    "vagrant", "minikube", "docker-compose", "systemd-nspawn"})
#: A quoted array subscript holding a substitution: bash runs it whenever the text is evaluated as arithmetic
#: (``[[ $x -eq 'a[$(cmd)]' ]]``, ``let``, ``declare -i``, ``(( ))`` on a variable that holds it).
_SUBSCRIPT_CODE: Final = re.compile(r"[A-Za-z_]\w{0,64}\[[^\]\n]{0,200}?(?:\$\(|`)")
#: ``${x@P}`` expands ``x`` as a prompt string, running the substitutions in its value.
_PROMPT_EXPANSION: Final = re.compile(r"\$\{[^}]{0,200}@P\}")
#: Where writing is no write: a redirection to one of these is read-only.
_HARMLESS_SINK: Final = re.compile(r"/dev/(?:null|stdout|stderr|tty)|/dev/fd/[12]")
#: Reserved words that cannot start a command: a line where one does is one bash refuses.
_CLOSING_WORDS: Final = frozenset({"then", "else", "elif", "fi", "do", "done", "esac"})
#: How many other readings of ambiguous wrapper options one classification follows (then: ``unparsable``).
MAX_READINGS: Final = 64
#: Interpreters: the short options that hand them code inline, and those that take a value.
_INTERPRETERS: Final = {
    "perl": ("eE", "IMx"), "ruby": ("e", "Ir"), "node": ("ep", "r"), "nodejs": ("ep", "r"), "bun": ("e", "r"),
    "deno": ("", ""), "php": ("r", "cdf"), "lua": ("e", "l"), "luajit": ("e", "l"), "rscript": ("e", ""),
    "osascript": ("e", "l"), "tclsh": ("", ""), "pwsh": ("c", ""), "powershell": ("c", ""), "pypy": ("c", "WX"),
    "pypy3": ("c", "WX"),
}
_PYTHON: Final = re.compile(r"python[\d.]*")
_INLINE_LONG: Final = ("--eval", "--print", "--command", "-command", "-encodedcommand")
_AWKS: Final = frozenset({"awk", "gawk", "mawk", "nawk"})
_FETCHERS: Final = frozenset({"curl", "wget", "fetch", "aria2c", "lwp-request", "nc", "ncat", "socat"})
_DB_CLIENTS: Final = frozenset({
    "psql", "mysql", "mariadb", "sqlite", "sqlite3", "sqlcmd", "clickhouse", "clickhouse-client", "duckdb",
    "cockroach", "mongo", "mongosh", "redis-cli", "cqlsh", "sqlplus", "snowsql", "bq", "beeline", "spark-sql", "isql"})
_DESTRUCTIVE_SQL: Final = re.compile(
    r"\bdrop\s+(?:table|database|schema|index|view|user|role|collection|keyspace)\b"
    r"|\btruncate\s+(?:table\s+)?[\w.\"`\[]"
    r"|\bdelete\s+from\s+[^\s;]+\s*(?:;|$)"
    r"|\b(?:dropdatabase|flushall|flushdb)\b|\.drop\s*(?:\(|$|\s)", re.I)
_HISTORY_VARIABLES: Final = re.compile(r"HIST(?:FILE|SIZE|FILESIZE|CONTROL|IGNORE)|SAVEHIST")
_FORK_LOOP: Final = re.compile(r"\bfork\s+while\s+fork\b|\bwhile\s*\(?\s*(?:true|1)\b[^\n]{0,200}\bfork\b", re.I)


@dataclass(frozen=True)
class Strictness:
    """The stricter readings a user opts into (the default reads neither)."""

    #: ``approvals.mode: strict``: every program run must be on this list, with safe options (``not_read_only``).
    read_only: ReadOnlyList | None = None
    #: ``terminal.workspace_only``: every path read or written must stay in this workspace (``outside_workspace``).
    workspace: Workspace | None = None


@dataclass(frozen=True)
class Classification:
    """The verdict on one command: its level and every rule it matched (hardline rules first)."""

    level: Level
    rules: tuple[Rule, ...]
    #: The simple commands found, words as the shell sees them, separated by `` ; ``.
    normalized: str
    #: What is not read-only (``not_read_only``): the programs, ``>`` for a file written, ``$NAME`` for a variable
    #: set, and an empty string for a command known only at run time.
    unlisted: tuple[str, ...] = ()
    #: The paths outside the workspace (``outside_workspace``).
    outside: tuple[str, ...] = ()

    @property
    def rule_key(self) -> str | None:
        return self.rules[0].key if self.rules else None

    @property
    def reason(self) -> str:
        return self.rules[0].reason if self.rules else "no danger rule matched"


def classify(command: str, strictness: Strictness | None = None) -> Classification:
    """Parse ``command`` and check everything it would run against :data:`RULES` (the opt-in ones too when
    ``strictness`` asks for them)."""
    if len(command) > MAX_COMMAND_CHARS:
        return Classification(Level.DANGEROUS, (TOO_LONG,), command[:200])
    analysis = _Analysis(strictness or Strictness())
    try:
        analysis.script(clean(command), depth=0)
    except RecursionError:  # absurdly nested words
        analysis.found.add(UNPARSABLE)
    matched = sorted((rule for rule in RULES if rule in analysis.found), key=lambda r: r.level is not Level.HARDLINE)
    level = matched[0].level if matched else Level.SAFE
    return Classification(level, tuple(matched), " ; ".join(analysis.rendered),
                          tuple(dict.fromkeys(analysis.unlisted)), tuple(dict.fromkeys(analysis.outside)))


@dataclass
class _Analysis:
    """The rules found so far, over one command line and every script nested in it."""

    strictness: Strictness
    found: set[Rule] = field(default_factory=set)
    unlisted: list[str] = field(default_factory=list)
    outside: list[str] = field(default_factory=list)
    rendered: list[str] = field(default_factory=list)
    #: Files written so far (``./`` removed), to catch a script written and then run.
    written: set[str] = field(default_factory=set)
    _fetched: dict[int, bool] = field(default_factory=dict)
    #: The container whose command is being read: its mount targets stand for host paths.
    _container: ContainerRun | None = None
    #: Other readings of ambiguous options still to be followed.
    _readings: int = MAX_READINGS

    def script(self, text: str, depth: int) -> None:
        if self._too_deep(depth):
            return
        script = parse(text)
        if script.has_error or script.misread:
            self.found.add(UNPARSABLE)
        self._evaluated_text(text, depth)
        for name, body in script.functions:
            if sum(1 for c in body if c.words and c.words[0].text == name) >= 2:
                self.found.add(FORK_BOMB)
        for redirect in script.redirects:
            self._redirect(redirect, depth)
        for variable, value in script.variables:
            self._variable(variable, value, depth)
        if any(c.words and basename(c.words[0].text) in _DB_CLIENTS for c in script.commands):
            self._sql(script)
        for command in script.commands:
            self.rendered.append(" ".join(w.text for w in command.words))
            if command.words and command.words[0].text in _CLOSING_WORDS:
                self.found.add(UNPARSABLE)  # "then rm -rf /": bash refuses the line, tree-sitter reads a command
            for redirect in command.redirects:
                self._redirect(redirect, depth)
            self.words(command.words, command, script, depth)

    def _variable(self, name: str, value: str | None, depth: int) -> None:
        """A variable set (``value``) or unset (None): some change the history, some hold code that runs."""
        if self.strictness.read_only is not None and risky_variable(name):
            self._not_read_only(f"${name}")
        if _HISTORY_VARIABLES.fullmatch(name):
            self.found.add(HISTORY_TAMPER)
        elif name in PAGER_VARIABLES and value:  # PAGER='sh -c ...' git log runs the value
            self.script(value.lstrip("|").replace("%s", "x"), depth + 1)
        elif name in _SHELL_CODE_VARIABLES and value:
            self.script(value, depth + 1)

    def _redirect(self, redirect: Redirect, depth: int) -> None:
        """A file written, or an unquoted here-document whose substitutions the shell runs first."""
        self._writes(redirect.target if redirect.writes else None)
        target = redirect.target
        if target is not None and not target.text.isdigit() and target.text != "-":
            if redirect.writes and self.strictness.read_only is not None and not _HARMLESS_SINK.fullmatch(target.text):
                self._not_read_only(">")
            workspace = self.strictness.workspace
            if workspace is not None and self._container is None and not workspace.inside(target):
                self._outside([target.text])
        substituted = redirect.substituted()
        if substituted is not None and ("`" in substituted or "$" in substituted):
            self.script(substituted, depth + 1)

    def _evaluated_text(self, text: str, depth: int) -> None:
        """Text bash evaluates later: an array subscript with a substitution inside quotes, ``${x@P}``."""
        if "@P" in text and _PROMPT_EXPANSION.search(text):
            self.found.add(DYNAMIC_COMMAND)
        if "[" in text and ("$(" in text or "`" in text):
            for match in _SUBSCRIPT_CODE.finditer(text):
                self.found.add(DYNAMIC_COMMAND)
                self.script(_substitution(text, match.end()), depth + 1)

    def words(self, words: Sequence[Word], command: Command, script: Script, depth: int) -> None:
        """Check what ``words`` run (a command's words, or the words ``find -exec`` runs)."""
        if self._too_deep(depth):
            return
        if self._container is not None:
            words = [self._container.on_host(word) for word in words]
        unwrapped = unwrap(words)
        self._strict(unwrapped)
        if unwrapped.dynamic:
            self.found.add(DYNAMIC_COMMAND)
        for name, value in unwrapped.assignments:
            self._variable(name, value, depth)
        for nested in unwrapped.scripts:
            self.script(nested, depth + 1)
        for other in unwrapped.alternatives:
            if self._readings <= 0:
                self.found.add(UNPARSABLE)
                break
            self._readings -= 1
            self.words(other, command, script, depth + 1)
        if unwrapped.invocations:
            program = unwrapped.invocations[-1]
            if any(wrapper.name == "xargs" for wrapper in unwrapped.invocations[:-1]):
                self._xargs(program, command)
            self.invocation(program, command, script, depth)

    def _strict(self, unwrapped: Unwrapped) -> None:
        """The opt-in readings: every program of the chain on the read-only list, every path in the workspace."""
        read_only, workspace = self.strictness.read_only, self.strictness.workspace
        chain = unwrapped.invocations
        if read_only is not None:
            if unwrapped.dynamic:
                self._not_read_only("")
            for program in chain:
                if not read_only.allows(program):
                    self._not_read_only(program.name)
        if workspace is not None and self._container is None:
            for index, program in enumerate(chain):
                inner = chain[index + 1] if index + 1 < len(chain) else None
                if inner is not None and inner.word is not program.word:  # a wrapper: only its own words
                    program = Invocation(program.name, program.word, program.args[:len(program.args)
                                                                                   - len(inner.args) - 1])
                self._outside(workspace.outside(program))

    def _not_read_only(self, what: str) -> None:
        self.found.add(NOT_READ_ONLY)
        self.unlisted.append(what)

    def _outside(self, paths: Sequence[str]) -> None:
        if paths:
            self.found.add(OUTSIDE_WORKSPACE)
            self.outside.extend(paths)

    def _xargs(self, program: Invocation, command: Command) -> None:
        """``find / | xargs chmod 777``: ``program`` runs on what the commands upstream list."""
        starts = [word for source in command.upstream for lister in unwrap(source.words).invocations[-1:]
                  for word in programs.find_starts(lister)]
        self.found.update(programs.tree_rules(starts, {program.name}))

    def invocation(self, program: Invocation, command: Command, script: Script, depth: int) -> None:
        name, args = program.name, program.args
        self.found.update(programs.check(program))
        for target in programs.written(program):
            self._writes(target)
        for target in programs.modified(program):
            self.found.update(programs.target_rules(target.text, writes=False))
        for words in programs.find_exec(program) if name == "find" else ():
            self.words(words, command, script, depth + 1)  # find -exec find -exec ...: bounded like scripts
        if "/" in program.word.text:
            self._runs_file(program.word)
        self._escapes(program, command, depth)
        self._handed(program, command, script, depth)
        for run in container_runs(program):
            self._container_run(run, command, script, depth)
        if name in _SHELLS:
            self._shell(program, command, script, depth)
        elif name in _INTERPRETERS or _PYTHON.fullmatch(name):
            self._interpreter(program, command, script, depth)
        elif name in _AWKS:
            program_text = next((w.text for w in operands(args, takes_value="Fvf")), "")
            if "-f" not in program.texts and ("system" in program_text or "|" in program_text):
                self.found.add(INTERPRETER_CODE)
        elif name == "eval":
            self.found.add(DYNAMIC_COMMAND)
            self._code(args, script, depth)
        elif name == "alias":
            self.found.add(DYNAMIC_COMMAND)
            for arg in args:
                if "=" in arg.text:
                    self.script(arg.text.partition("=")[2], depth + 1)
        elif (name == "hash" and "-p" in program.texts) or (name == "enable" and "-f" in program.texts):
            self.found.add(DYNAMIC_COMMAND)  # hash -p /bin/rm ls: a later "ls" runs rm; enable -f loads code
        elif name in ("source", "."):
            self._code(args[:1], script, depth, run_file=True)
        elif name == "trap" and args and not args[0].text.startswith("-"):
            self.script(args[0].text, depth + 1)
        elif name == "ssh":
            remote = args[_ssh_command_start(program.texts):]
            if remote:
                self._code(remote, script, depth)
            else:  # ssh host <<< '...': the remote shell runs its standard input
                self._stdin_code(command, script, depth, shell=True)
        else:
            # a shell deeper in the arguments: docker exec box sh -c '...', kubectl exec -i pod -- bash <<< '...'
            frontend = name in _EXEC_FRONTENDS
            shell = next((i for i, a in enumerate(args) if basename(a.text) in _SHELLS and a.static and (
                frontend or (i + 1 < len(args) and args[i + 1].text.startswith("-") and "c" in args[i + 1].text[1:]))),
                None)
            if shell is not None:
                self.words(args[shell:], command, script, depth)

    def _escapes(self, program: Invocation, command: Command, depth: int) -> None:
        """An editor, pager or debugger told to run commands, on its command line or its standard input."""
        told = escapes(program)
        kind = stdin_commands(program)
        if kind is not None:
            texts, unreadable = _stdin_texts(command)
            for text in texts:
                read = commands_read(kind, text)
                told.scripts += read.scripts
                told.code = told.code or read.code
            told.code = told.code or unreadable
        if told.scripts or told.code:
            self.found.add(EDITOR_COMMAND)
        for text in told.scripts:
            self.script(text, depth + 1)

    def _handed(self, program: Invocation, command: Command, script: Script, depth: int) -> None:
        """Commands ``program`` is handed to run (:mod:`.runners`)."""
        handed = runs(program)
        for text in handed.scripts:
            self.script(text, depth + 1)
        for words in handed.commands:
            self.words(words, command, script, depth + 1)
        if any(basename(word.text) in programs.DELETERS for word in handed.per_file):
            self.found.add(FIND_DELETE)
        if handed.stdin_script:
            self._stdin_code(command, script, depth, shell=True)

    def _container_run(self, run: ContainerRun, command: Command, script: Script, depth: int) -> None:
        """A container that reaches the host asks; what it runs on mounted host paths is checked as on the host."""
        if run.reaches_host:
            self.found.add(CONTAINER_HOST_ACCESS)
        if run.mounts and run.command:
            outer, self._container = self._container, run
            try:
                self.words(run.command, command, script, depth + 1)
            finally:
                self._container = outer

    def _shell(self, program: Invocation, command: Command, script: Script, depth: int) -> None:
        """``sh -c SCRIPT``, ``sh FILE``, ``sh <(...)`` or a shell that reads its script from standard input."""
        args = list(program.args)
        index = 0
        inline = reads_stdin = False
        while index < len(args) and args[index].text.startswith(("-", "+")) and args[index].text not in ("-", "--"):
            letters = args[index].text[1:]
            inline = inline or (args[index].text.startswith("-") and "c" in letters and not letters.startswith("-"))
            reads_stdin = reads_stdin or "s" in letters
            index += 2 if letters.endswith(("o", "O")) else 1
        rest = args[index + (1 if index < len(args) and args[index].text == "--" else 0):]
        if inline:
            self._code(rest[:1], script, depth)
        elif rest and not reads_stdin and rest[0].text != "-":
            self._code(rest[:1], script, depth, run_file=True)
        else:
            self._stdin_code(command, script, depth, shell=True)

    def _interpreter(self, program: Invocation, command: Command, script: Script, depth: int) -> None:
        """Inline code (``python -c``), a script file, or code read from standard input."""
        letters, valued = _INTERPRETERS.get(program.name, ("c", "WX"))
        args, index = program.args, 0
        while index < len(args) and args[index].text.startswith("-") and args[index].text not in ("-", "--"):
            text = args[index].text
            if text.lower() in _INLINE_LONG or (not text.startswith("--") and set(text[1:]) & set(letters)):
                python = _PYTHON.fullmatch(program.name) or program.name.startswith("pypy")
                if python and _harmless_inline(text, args[index + 1:]):
                    return  # python -c 'print(1)': it only computes and prints
                self.found.add(INTERPRETER_CODE)
                if _FORK_LOOP.search(" ".join(program.texts)):
                    self.found.add(FORK_BOMB)
                return
            if text == "-m":  # python -m module: a module, not inline code
                return
            index += 2 if len(text) == 2 and text[1] in valued else 1
        if index < len(args) and args[index].text == "eval":  # deno eval CODE
            self.found.add(INTERPRETER_CODE)
        elif index < len(args) and args[index].text not in ("-", "--"):
            self._code(args[index:index + 1], script, depth, run_file=True)
        else:
            self._stdin_code(command, script, depth, shell=False)

    def _stdin_code(self, command: Command, script: Script, depth: int, *, shell: bool) -> None:
        """A shell or interpreter runs its standard input: a here-document, a file, or a pipe."""
        for redirect in command.redirects:
            if redirect.body is not None:
                if shell:
                    self.script(redirect.body, depth + 1)
                else:
                    self.found.add(INTERPRETER_CODE)
                    if _FORK_LOOP.search(redirect.body):
                        self.found.add(FORK_BOMB)
            elif redirect.operator == "<" and redirect.target is not None:
                self._runs_file(redirect.target)
        if command.upstream:
            self.found.add(REMOTE_CODE_TO_SHELL if self._fetches(command.upstream) else PAYLOAD_TO_SHELL)
            for source in command.upstream:  # echo 'rm -rf /' | sh runs that text
                if shell and source.words and source.words[0].text == "echo":
                    self.script(" ".join(w.text for w in source.words[1:] if not w.text.startswith("-")), depth + 1)

    def _code(self, words: Sequence[Word], script: Script, depth: int, *, run_file: bool = False) -> None:
        """``words`` are shell code (``run_file``: a script's path); substitutions in them make code at run time."""
        for word in words:
            if word.substitutions:
                inner = [c for node in word.substitutions for c in script.commands_in(node)]
                self.found.add(REMOTE_CODE_TO_SHELL if self._fetches(inner) else PAYLOAD_TO_SHELL)
            elif run_file:
                self._runs_file(word)
        if words and not run_file:
            self.script(" ".join(w.text for w in words), depth + 1)

    def _fetches(self, commands: Iterable[Command]) -> bool:
        """Whether any of ``commands``, or what feeds them through pipes, downloads from the network."""
        return any(self._fetched_by(command) for command in commands)

    def _fetched_by(self, command: Command) -> bool:
        key = id(command)
        if key not in self._fetched:
            self._fetched[key] = False  # a pipe never feeds itself; this only guards the recursion
            names = {i.name for i in unwrap(command.words).invocations}
            self._fetched[key] = bool(names & _FETCHERS) or self._fetches(command.upstream)
        return self._fetched[key]

    def _too_deep(self, depth: int) -> bool:
        if depth > MAX_DEPTH:
            self.found.add(UNPARSABLE)
        return depth > MAX_DEPTH

    def _writes(self, target: Word | None) -> None:
        if target is not None:
            self.found.update(programs.target_rules(target.text, writes=True))
            self.written.add(target.text.removeprefix("./"))

    def _runs_file(self, path: Word) -> None:
        if path.text.removeprefix("./") in self.written:
            self.found.add(WRITTEN_SCRIPT)

    def _sql(self, script: Script) -> None:
        """A database client is in the line: look for destructive SQL in every word and here-document."""
        texts = [w.text for c in script.commands for w in c.words]
        texts += [r.body for c in script.commands for r in c.redirects if r.body]
        if any(_DESTRUCTIVE_SQL.search(text) for text in texts):
            self.found.add(DESTRUCTIVE_SQL)


def _stdin_texts(command: Command) -> tuple[list[str], bool]:
    """The text ``command`` reads on standard input where it is written in the line (here-documents, here-strings,
    ``echo`` upstream), and whether it may read other input (a file, another program's output)."""
    texts = [redirect.body for redirect in command.redirects if redirect.body is not None]
    unreadable = any(redirect.operator == "<" for redirect in command.redirects)
    for source in command.upstream:
        if source.words and source.words[0].text == "echo":
            texts.append(" ".join(w.text for w in source.words[1:] if not w.text.startswith("-")))
        else:
            unreadable = True
    return texts, unreadable


def _substitution(text: str, start: int) -> str:
    """The command of the substitution opening just before ``start`` in ``text`` (``$(`` or a backtick)."""
    if text[start - 1] == "`":
        end = text.find("`", start)
        return text[start:end if end >= 0 else len(text)]
    depth, index = 1, start
    limit = min(len(text), start + MAX_COMMAND_CHARS)
    while index < limit and depth:
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        index += 1
    return text[start:index - 1 if not depth else index]


def _harmless_inline(option: str, rest: Sequence[Word]) -> bool:
    """Python's ``-c CODE`` (``option`` is ``-c`` or ``-cCODE``) is plainly harmless."""
    attached = option.partition("c")[2]
    code = Word(attached) if attached else (rest[0] if rest else None)
    return code is not None and code.static and not code.substitutions and harmless_python(code.text)


def _ssh_command_start(texts: Sequence[str]) -> int:
    """Index of the remote command in ``ssh [options] host command...`` arguments."""
    index = 0
    while index < len(texts) and texts[index].startswith("-"):
        option = texts[index]
        index += 2 if len(option) == 2 and option[1] in "bcDEeFIiJLlmOopQRSWw" else 1
    return index + 1

"""The read-only list of strict mode (``approvals.mode: strict``): programs that only read and print, each with the
options that would make it write or run something else refused (as Codex CLI's untrusted mode decides).

A command runs without a question in strict mode only when every program it runs, wrappers and nested scripts
included, is on this list with safe options, it writes no file through a redirection, and it sets no variable
that changes what programs run (``PATH``, ``LD_PRELOAD``...). Users extend the list with command prefixes
(``terminal.read_only_commands: ["make test", "cargo check"]``): a command whose words start with one runs too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from .invocation import Invocation, basename, operands

__all__ = ["READ_ONLY_PROGRAMS", "ReadOnlyList", "risky_variable"]

Check = Callable[[Invocation], bool]


def _always(invocation: Invocation) -> bool:
    return True


def _without(*options: str, clustered: bool = False) -> Check:
    """Read-only unless one of ``options`` is given (``-o``, ``--output`` or ``--output=...``, ``-oFILE``);
    ``clustered``: a short option counts anywhere in a cluster (``-uo``), not only first."""
    longs = tuple(option for option in options if option.startswith("--"))
    shorts = {option[1] for option in options if not option.startswith("--")}

    def check(invocation: Invocation) -> bool:
        for text in invocation.texts:
            if text.startswith("--"):
                if text.partition("=")[0] in longs:
                    return False
            elif text.startswith("-") and set(text[1:] if clustered else text[1:2]) & shorts:
                return False
        return True
    return check


def _operands_at_most(count: int, *refused: str) -> Check:
    """Read-only with at most ``count`` operands (another one is an output file) and none of ``refused``."""
    options = _without(*refused)
    return lambda invocation: options(invocation) and len(operands(invocation.args)) <= count


_FIND_WRITES: Final = frozenset({"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fls", "-fprint", "-fprint0",
                                 "-fprintf"})
#: sed scripts that only print or substitute to standard output: ``5p``, ``1,20p``, ``$d``, ``s/a/b/g``, ``/x/p``.
_SED_SAFE: Final = re.compile(r"\s*(?:(?:\d+|\$)(?:\s*,\s*(?:\d+|\$))?\s*[pdq=]|s/[^/\n]*/[^/\n]*/[gpI\d]*"
                              r"|/[^/\n]*/\s*[pd])\s*")
_GIT_READS: Final = frozenset({
    "status", "log", "diff", "show", "blame", "ls-files", "ls-tree", "ls-remote", "rev-parse", "describe",
    "shortlog", "grep", "cat-file", "show-ref", "rev-list", "merge-base", "name-rev", "count-objects", "version",
    "help", "var", "whatchanged", "cherry", "range-diff", "annotate", "check-ignore", "check-attr"})
_GIT_LISTS: Final = {
    "branch": frozenset({"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--list", "-l",
                         "--show-current", "--contains", "--merged", "--no-merged", "--sort", "--color", "--no-color",
                         "--column", "--no-column", "--points-at", "--format"}),
    "tag": frozenset({"-l", "--list", "-n", "--contains", "--merged", "--no-merged", "--sort", "--points-at",
                      "--format", "--column", "--no-column"}),
    "remote": frozenset({"-v", "--verbose", "show", "get-url"}),
    "stash": frozenset({"list", "show"}),
    "worktree": frozenset({"list"}),
    "config": frozenset({"--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin", "--show-scope",
                         "--global", "--local", "--system", "--name-only", "--null", "-z", "--type", "--default",
                         "get", "list"}),
    "reflog": frozenset({"show"}),
}
#: git's global options that change what runs (a setting, another program) or where output goes.
_GIT_REFUSED_GLOBALS: Final = ("-c", "--exec-path", "--config-env")
_GIT_VALUED_GLOBALS: Final = frozenset({"-C", "--git-dir", "--work-tree", "--namespace"})
_GIT_WRITING_OPTIONS: Final = ("--output", "--ext-diff")


def _git(invocation: Invocation) -> bool:
    texts = invocation.texts
    index = 0
    while index < len(texts) and texts[index].startswith("-"):
        option = texts[index].partition("=")[0]
        if option in _GIT_REFUSED_GLOBALS:
            return False
        index += 2 if option in _GIT_VALUED_GLOBALS and "=" not in texts[index] else 1
    if index >= len(texts):
        return True  # git alone prints its help
    verb, rest = texts[index], texts[index + 1:]
    if any(text.partition("=")[0] in _GIT_WRITING_OPTIONS for text in rest):
        return False
    if verb in _GIT_READS:
        return True
    return verb in _GIT_LISTS and _git_listing(verb, rest)


def _git_listing(verb: str, rest: list[str]) -> bool:
    """``git branch``, ``tag``, ``remote``, ``stash``, ``worktree``, ``config``, ``reflog`` when they only list."""
    allowed = _GIT_LISTS[verb]
    options = [text.partition("=")[0] for text in rest if text.startswith("-")]
    plain = [text for text in rest if not text.startswith("-")]
    if any(option not in allowed for option in options):
        return False
    if verb in ("branch", "tag"):  # a name creates one, unless a listing option filters by it
        return not plain or bool({"--list", "-l", "--contains", "--merged", "--no-merged", "--points-at"}
                                 & set(options))
    if verb == "config":  # a key reads it; a key and a value set it
        return len(plain) <= 1 or (plain[0] in ("get", "list") and len(plain) <= 2)
    return not plain or plain[0] in allowed


def _sed(invocation: Invocation) -> bool:
    """Printing and substituting to standard output only: no in-place edit, no script file, no ``w``/``e``."""
    texts = invocation.texts
    if any(text.startswith(("--in-place", "--file")) or (text.startswith("-") and not text.startswith("--")
                                                          and set(text[1:]) & {"i", "I", "f"}) for text in texts):
        return False
    scripts = [texts[i + 1] for i, text in enumerate(texts[:-1]) if text in ("-e", "--expression")]
    if not scripts:
        plain = operands(invocation.args, takes_value="el")
        scripts = [plain[0].text] if plain else []
    return all(_SED_SAFE.fullmatch(part) for script in scripts for part in script.split(";") if part.strip())


def _find(invocation: Invocation) -> bool:
    return not _FIND_WRITES.intersection(invocation.texts)


#: The read-only programs, each with the check of its options.
READ_ONLY_PROGRAMS: Final[dict[str, Check]] = {
    **dict.fromkeys((
        "ls", "cat", "head", "tail", "wc", "pwd", "echo", "printf", "true", "false", "nl", "which", "whereis", "type",
        "stat", "du", "df", "basename", "dirname", "realpath", "readlink", "whoami", "id", "uname", "uptime", "free",
        "groups", "cut", "tr", "rev", "tac", "column", "fold", "fmt", "expand", "unexpand", "paste", "join", "comm",
        "cmp", "diff", "od", "hexdump", "strings", "md5sum", "sha1sum", "sha224sum", "sha256sum", "sha384sum",
        "sha512sum", "b2sum", "cksum", "base64", "base32", "grep", "egrep", "fgrep", "ag", "ack", "jq", "seq", "test",
        "[", "sleep", "expr", "ps", "pgrep", "printenv", "cd", "pushd", "popd", "dirs", "tty", "locale", "nproc",
        "arch", "lscpu", "lsblk", "wait", ":", "read", "exit", "return", "getconf", "numfmt", "look", "cal",
        "time", "timeout", "nice", "command", "env"), _always),
    "rg": _without("--pre", "--search-zip", "-z", "--hostname-bin", clustered=True),
    "fd": _without("-x", "--exec", "-X", "--exec-batch"),
    "fdfind": _without("-x", "--exec", "-X", "--exec-batch"),
    "find": _find,
    "sed": _sed,
    "sort": _without("-o", "--output", "--compress-program", clustered=True),
    "uniq": _operands_at_most(1),
    "xxd": _operands_at_most(1),
    "tree": _without("-o", "--output"),
    "file": _without("-C", "--compile"),
    "date": _without("-s", "--set"),
    "hostname": _operands_at_most(0, "-F", "--file", "-b", "--boot"),
    "git": _git,
}
#: Variables that change which programs run or what they load: setting one is not read-only.
_RISKY_VARIABLE: Final = re.compile(r"PATH|LD_\w+|DYLD_\w+|BASH_ENV|ENV|PROMPT_COMMAND|PS[0-4]|SHELLOPTS|BASHOPTS"
                                    r"|IFS|HOME|CDPATH|GLOBIGNORE|PYTHON\w*|NODE_OPTIONS|NODE_PATH|PERL5\w*|RUBY\w*"
                                    r"|GIT_\w+|PAGER|MANPAGER|EDITOR|VISUAL|LESSOPEN|LESSCLOSE|\w*_COMMAND")


def risky_variable(name: str) -> bool:
    """Whether setting ``name`` can change what a program runs (``PATH``, ``LD_PRELOAD``, ``GIT_EXTERNAL_DIFF``)."""
    return _RISKY_VARIABLE.fullmatch(name) is not None


@dataclass(frozen=True)
class ReadOnlyList:
    """The built-in read-only programs and the user's command prefixes (``terminal.read_only_commands``)."""

    prefixes: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def extended(cls, commands: Iterable[str]) -> ReadOnlyList:
        """The list extended with ``commands``, each a command prefix such as ``make test``."""
        return cls(tuple(tuple(command.split()) for command in commands if command.split()))

    def allows(self, invocation: Invocation) -> bool:
        """Whether ``invocation`` only reads: a listed program with safe options, or a listed prefix."""
        words = [invocation.name, *invocation.texts]
        if any(_starts_with(words, prefix) for prefix in self.prefixes):
            return True
        check = READ_ONLY_PROGRAMS.get(invocation.name)
        return check is not None and check(invocation)


def _starts_with(words: Sequence[str], prefix: tuple[str, ...]) -> bool:
    return len(words) >= len(prefix) and basename(prefix[0]) == words[0] and tuple(words[1:len(prefix)]) == prefix[1:]

"""What a command's words run: wrappers (``sudo``, ``env``, ``timeout``, ``xargs``, ``busybox``...) peeled off.

``sudo -u root nice -n 5 rm -rf x`` runs ``rm``: each wrapper's options are read the way it reads them
(which take a value, how many operands come before the command), one word at a time, so a chain of
wrappers costs time linear in its length. Some wrappers take shell code instead of a command
(``env -S``, ``flock -c``, ``watch``, ``sg``): that code is returned as a script to parse. Some start a
shell when no command follows (``sudo -s``, ``su``, ``chroot DIR``, ``unshare``): that shell reads its
script from standard input, so it is returned as a program named ``sh`` without arguments.

An option a wrapper is not known to take without a value may take one (``sudo --unknown X rm -rf /``):
both readings are checked (:attr:`Unwrapped.alternatives`), so a wrapper's option never hides its command.

Programs are named by their base name, lower-cased, without ``.exe`` and a version suffix
(``/usr/bin/bash5.2`` is ``bash``), and by the name they go by (GNU coreutils' ``grm`` is ``rm``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from .shell import Word

__all__ = ["Invocation", "Unwrapped", "basename", "operands", "unwrap"]

#: How many other readings of a command's wrapper options are checked (each is linear in the words).
MAX_ALTERNATIVES: Final = 8


@dataclass(frozen=True)
class _Wrapper:
    """How a wrapper reads its words before the command it runs."""

    #: Short options that take a value (``-u root`` or ``-uroot``).
    short_values: str = ""
    #: Long options that take a value (``--user root`` or ``--user=root``).
    long_values: frozenset[str] = frozenset()
    #: Short and long options known to take no value; any other option may take one, so both readings are
    #: checked.
    flags: frozenset[str] = frozenset()
    #: Options that take several values (``bwrap --bind SRC DEST``).
    counts: Mapping[str, int] = field(default_factory=dict)
    #: Operands before the command (``timeout DURATION``, ``chroot NEWROOT``).
    operands: int = 0
    #: Options whose value is shell code (``env -S``, ``flock -c``).
    script_options: frozenset[str] = frozenset()
    #: ``VAR=value`` words before the command are settings, not the command (``env``).
    assignments: bool = False
    #: Options after which nothing runs (``command -v rm`` only prints).
    inert_options: frozenset[str] = frozenset()
    #: The command words are joined into one script for ``sh -c`` (``watch``, ``sg``).
    joins: bool = False
    #: Options that make it run a shell (``sudo -s``): with no command, the shell reads standard input.
    shell_options: frozenset[str] = frozenset()
    #: With no command it starts a shell, which reads its script from standard input (``su``, ``chroot DIR``).
    shell_without_command: bool = False
    #: Its operands are never a command (``script FILE``, ``at TIME``): what it runs comes from standard input.
    no_command: bool = False
    #: The words after its operands are arguments of the shell it starts (``su USER -c CMD``).
    shell_arguments: bool = False
    #: A lone ``-`` is an option (``su -``), not an operand.
    dash_option: bool = False


def _w(short: str = "", long: str = "", flags: str = "", **kwargs: Any) -> _Wrapper:
    """A wrapper: ``short``/``long`` options with a value, ``flags`` (space-separated) without one."""
    return _Wrapper(short, frozenset(long.split()), frozenset(flags.split()), **kwargs)


_SCRIPT_C: Final = frozenset({"-c", "--command"})
#: ``su`` and ``runuser`` without ``-u``: ``su [options] [-] [user [shell arguments]]``.
_SU: Final = _w("sgGw", "--shell --group --supp-group --whitelist-environment",
                "-l --login -m -p --preserve-environment -P --pty -f --fast -h --help -V --version",
                script_options=frozenset({"-c", "--command", "--session-command"}), operands=1,
                shell_without_command=True, shell_arguments=True, dash_option=True)

WRAPPERS: Final[dict[str, _Wrapper]] = {
    "sudo": _w("ughpCDrtUTR", "--user --group --host --prompt --close-from --chdir --role --type --other-user "
                              "--command-timeout",
               "-A --askpass -b --background -E --preserve-env -e --edit -H --set-home -i --login -K "
               "--remove-timestamp -k --reset-timestamp -l --list -n --non-interactive -P --preserve-groups "
               "-S --stdin -s --shell -V --version -v --validate -h --help -N --no-update -B --bell",
               shell_options=frozenset({"-s", "--shell", "-i", "--login"})),
    "doas": _w("uC", "", "-n -s -L", shell_options=frozenset({"-s"})),
    "su": _SU,
    "runuser": _SU,
    "pkexec": _w("", "--user", "--disable-internal-agent --keep-cwd --version --help", shell_without_command=True),
    "env": _w("uCPS", "--unset --chdir --split-string", "-i --ignore-environment -0 --null -v --debug",
              assignments=True, script_options=frozenset({"-S", "--split-string"})),
    "nice": _w("n", "--adjustment", ""),
    "ionice": _w("cnp", "--class --classdata --pid", "-t --ignore"),
    "nohup": _w(),
    "setsid": _w(flags="-c --ctty -f --fork -w --wait"),
    "time": _w("fo", "--format --output", "-p --portability -a --append -v --verbose -q --quiet"),
    "timeout": _w("sk", "--signal --kill-after", "--foreground --preserve-status -v --verbose", operands=1),
    "exec": _w("a", "", "-c -l"),
    "command": _w(flags="-p", inert_options=frozenset({"-v", "-V"})),
    "builtin": _w(),
    "coproc": _w(),
    "stdbuf": _w("ioe", "--input --output --error", ""),
    "unbuffer": _w(flags="-p"),
    "strace": _w("abeEopPsSuIX", "--output --trace --signal --user --attach"),
    "ltrace": _w("aeEnopsSu"),
    "xargs": _w("aEdIiLlnPs", "--arg-file --eof --delimiter --replace --max-lines --max-args --max-procs "
                              "--max-chars --process-slot-var",
                "-0 --null -o --open-tty -p --interactive -r --no-run-if-empty -t --verbose -x --exit"),
    "watch": _w("nd", "--interval --differences", "-b --beep -c --color -e --errexit -g --chgexit -t --no-title "
                                                  "-x --exec -p --precise -w --no-wrap", joins=True),
    "flock": _w("wEn", "--timeout --conflict-exit-code", "-s --shared -x -e --exclusive -u --unlock -o "
                                                         "--close --no-fork -F --verbose", operands=1,
                script_options=_SCRIPT_C),
    "chroot": _w("", "--userspec --groups", "--skip-chdir", operands=1, shell_without_command=True),
    "taskset": _w(flags="-a --all-tasks -p --pid -c --cpu-list", operands=1),
    "chrt": _w("T", "--sched-runtime --sched-period --sched-deadline",
               "-a --all-tasks -b --batch -d --deadline -f --fifo -i --idle -o --other -r --rr -R "
               "--reset-on-fork -v --verbose -m --max -p --pid", operands=1),
    "busybox": _w(),
    "toybox": _w(),
    "caffeinate": _w("tw"),
    "proxychains4": _w("f"),
    "proxychains": _w("f"),
    "torsocks": _w("uapP"),
    "torify": _w(),
    "nsenter": _w("tSG", "--target --setuid --setgid", shell_without_command=True),
    "unshare": _w("SGRw", "--setuid --setgid --root --wd --propagation --map-user --map-group --map-users "
                          "--map-groups --setgroups", shell_without_command=True),
    "setpriv": _w("", "--reuid --regid --ruid --euid --rgid --egid --groups --inh-caps --ambient-caps "
                      "--bounding-set --securebits --pdeathsig --selinux-label --apparmor-profile "
                      "--landlock-access --landlock-rule"),
    "systemd-run": _w("pEMHu", "--property --setenv --machine --host --unit --description --slice --uid --gid "
                               "--nice --working-directory --on-active --on-boot --on-startup --on-unit-active "
                               "--on-unit-inactive --on-calendar --path-property --socket-property "
                               "--timer-property --service-type --job-mode"),
    "script": _w("EIOBTmo", "--echo --log-in --log-out --log-io --log-timing --logging-format --output-limit",
                 script_options=_SCRIPT_C, no_command=True, shell_without_command=True),
    "at": _w("qft", "", "-m -M -v -b", inert_options=frozenset({"-l", "-d", "-r", "-c"}), no_command=True,
             shell_without_command=True),
    "batch": _w("qf", "", "-m -M -v", no_command=True, shell_without_command=True),
    "sg": _w(flags="-c", operands=1, joins=True),
    "newgrp": _w(operands=1, shell_without_command=True, no_command=True),
    "dbus-run-session": _w("", "--config-file --dbus-daemon"),
    "dbus-launch": _w("", "--config-file", "--sh-syntax --csh-syntax --auto-syntax --exit-with-session "
                                          "--exit-with-x11 --close-stderr --binary-syntax"),
    "xvfb-run": _w("nsfewp", "--server-num --server-args --auth-file --error-file --xauth-protocol --wait",
                   "-a --auto-servernum -l --listen-tcp"),
    "fakeroot": _w("lsib", "--lib --faked"),
    "firejail": _w(""),
    "bwrap": _w("", "--dir --tmpfs --proc --dev --mqueue --chdir --unsetenv --hostname --uid --gid --lock-file "
                    "--sync-fd --info-fd --json-status-fd --userns --userns2 --pidns --seccomp --add-seccomp-fd "
                    "--block-fd --userns-block-fd --cap-add --cap-drop --remount-ro --exec-label --file-label "
                    "--args --argv0 --perms --size --overlay-src --tmp-overlay --ro-overlay",
                counts={"--bind": 2, "--bind-try": 2, "--ro-bind": 2, "--ro-bind-try": 2, "--dev-bind": 2,
                        "--dev-bind-try": 2, "--symlink": 2, "--chmod": 2, "--setenv": 2, "--file": 2,
                        "--bind-data": 2, "--ro-bind-data": 2, "--overlay": 3}),
    "valgrind": _w(""),
    "catchsegv": _w(),
    "ssh-agent": _w("aEtP", "", "-c -s -D -d -k"),
    "systemd-inhibit": _w("", "--what --who --why --mode"),
    "cpulimit": _w("lpe", "--limit --pid --exe", "-z --lazy -i --include-children -v --verbose -k --kill -r "
                                               "--restore -b --background -q --quiet"),
    "prlimit": _w("p", "--pid --output"),
    "numactl": _w("CNmpirPM", "--physcpubind --cpunodebind --membind --preferred --interleave --preferred-many"),
    "cgexec": _w("g", "", "--sticky"),
    "chpst": _w("uUbe/nlL"),
    "setarch": _w("", "", operands=1),
    "faketime": _w("f", "", operands=1),
    "gosu": _w(operands=1),
    "su-exec": _w(operands=1),
    "rlwrap": _w("aAbCcDefHiIlmnNOoPqrRsSt"),
    "daemonize": _w("aceEloPpu"),
    "nocache": _w(),
    "eatmydata": _w(),
    "linux32": _w(),
    "linux64": _w(),
}

#: Names programs go by (GNU coreutils on macOS, editors' other names are in :mod:`.escapes`).
_ALIASES: Final = {f"g{name}": name for name in (
    "rm", "find", "xargs", "chmod", "chown", "chgrp", "dd", "shred", "timeout", "env", "nice", "mv", "cp", "ln",
    "tee", "tar", "sed", "stdbuf", "nohup", "truncate", "unlink", "chroot", "install", "touch")}
_ASSIGNMENT: Final = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=(.*)", re.S)
_VERSIONED: Final = re.compile(r"([a-z][a-z_]*?)-?(\d[\d.]*)")
#: Names that keep a version suffix to stand for the same program (``bash5.2``, ``perl5.36``, ``lua5.4``).
_VERSIONED_NAMES: Final = frozenset({
    "sh", "bash", "zsh", "ksh", "dash", "ash", "mksh", "yash", "tcsh", "csh", "fish", "perl", "ruby", "php", "lua",
    "luajit", "node", "tclsh", "wish", "pypy", "python", "busybox"})


@dataclass(frozen=True)
class Invocation:
    """One program run: ``name`` is the command word's program name (see :func:`basename`)."""

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
    #: Other readings of the words (a wrapper's unknown option taking the next word as its value).
    alternatives: list[Sequence[Word]] = field(default_factory=list)
    #: ``(name, value)`` of variables set for the command (``env PAGER=x git log``, ``time PAGER=x git log``).
    assignments: list[tuple[str, str]] = field(default_factory=list)


def basename(text: str) -> str:
    """The program ``text`` names: base name, lower-cased, ``.exe`` and version suffixes off, aliases resolved."""
    name = text.rsplit("/", 1)[-1].lower().removesuffix(".exe")
    versioned = _VERSIONED.fullmatch(name)
    if versioned and versioned.group(1) in _VERSIONED_NAMES:
        name = versioned.group(1)
    return _ALIASES.get(name, name)


def unwrap(words: Sequence[Word]) -> Unwrapped:
    """Peel wrappers off ``words`` (a command's words, name first)."""
    result = Unwrapped()
    index = 0
    while index < len(words):
        word = words[index]
        assignment = _ASSIGNMENT.fullmatch(word.text)
        if assignment:  # a variable set for the command (tree-sitter leaves some as words: "time X=1 cmd")
            result.assignments.append((assignment.group(1), assignment.group(2)))
            index += 1
            continue
        if not word.static:
            result.dynamic = True
            return result
        name = basename(word.text)
        result.invocations.append(Invocation(name, word, tuple(words[index + 1:])))
        wrapper = WRAPPERS.get(name)
        if name == "runuser" and any(w.text in ("-u", "--user") or w.text.startswith("--user=")
                                     for w in words[index + 1:]):
            wrapper = WRAPPERS["sudo"]  # runuser -u USER COMMAND: a command, as with sudo
        if wrapper is None:
            return result
        if name == "coproc" and index + 2 < len(words) and words[index + 2].text in ("{", "("):
            index += 2  # coproc NAME { ...; }: neither the name nor the brace is a command
        skipped = _skip(wrapper, words, index + 1, result)
        if skipped is None:
            return result
        index, shell = skipped
        if wrapper.no_command:
            index = len(words)
        if wrapper.shell_arguments and index < len(words):
            result.invocations.append(Invocation("sh", word, tuple(words[index:])))
            return result
        if index >= len(words) and (shell or wrapper.shell_without_command):
            # no command: it starts a shell, which reads its script from standard input
            result.invocations.append(Invocation("sh", word, ()))
            return result
        if wrapper.joins and index < len(words):
            result.scripts.append(" ".join(w.text for w in words[index:]))
            return result
    return result


def _skip(wrapper: _Wrapper, words: Sequence[Word], index: int, result: Unwrapped) -> tuple[int, bool] | None:
    """The index of the wrapped command's first word (``len(words)`` when none follows) and whether an option
    made the wrapper start a shell; None when nothing runs (``command -v``, or shell code it was handed)."""
    operands = wrapper.operands
    shell = False
    while index < len(words):
        text = words[index].text
        if text == "--":
            index += 1
            break
        assignment = _ASSIGNMENT.fullmatch(text) if wrapper.assignments else None
        if assignment:
            result.assignments.append((assignment.group(1), assignment.group(2)))
            index += 1
            continue
        if text == "-" and wrapper.dash_option:
            shell = True
            index += 1
            continue
        if not text.startswith("-") or text == "-":
            if operands == 0:
                break
            operands -= 1
            index += 1
            continue
        if text in wrapper.inert_options:
            return None
        option, _, attached = text.partition("=")
        shell = shell or option in wrapper.shell_options
        takes_value = option in wrapper.long_values or option in wrapper.script_options
        if not text.startswith("--"):
            letters = text[1:]
            shell = shell or any(f"-{letter}" in wrapper.shell_options for letter in letters)
            cut = next((i for i, letter in enumerate(letters) if letter in wrapper.short_values
                        or f"-{letter}" in wrapper.script_options), None)
            if cut is not None:
                option, attached = f"-{letters[cut]}", letters[cut + 1:]
                takes_value = True
        count = wrapper.counts.get(option, 0)
        if count:
            index += count + 1
            continue
        if not takes_value and not attached and _may_take_value(wrapper, option) \
                and len(result.alternatives) < MAX_ALTERNATIVES and index + 2 <= len(words):
            result.alternatives.append(words[index + 2:])  # the other reading: the next word is its value
        if takes_value and not attached and index + 1 < len(words):
            index += 1
            attached = words[index].text
        if option in wrapper.script_options:
            result.scripts.append(attached)
            return None
        index += 1
    while operands > 0 and index < len(words):
        operands -= 1
        index += 1
    return index, shell


def _may_take_value(wrapper: _Wrapper, option: str) -> bool:
    """Whether ``option``, not listed as taking a value, might still take one (it is not a known flag)."""
    if option.startswith("--"):
        return option not in wrapper.flags
    return not all(f"-{letter}" in wrapper.flags for letter in option[1:])


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

"""What single programs do: the danger rules of ``rm``, ``find``, ``git``, ``kill``... and the files a program writes.

Each check reads one :class:`.Invocation` (a program and its argument words), so its cost is linear in
the number of words. The path patterns below are matched against one word at a time and have no
nested quantifiers, so they are linear too.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterator, Sequence
from itertools import takewhile
from typing import Final

from .invocation import Invocation, basename, operands
from .rules import (
    CREDENTIAL_FILE_WRITE,
    CRONTAB_REMOVE,
    DELETE_ROOT,
    DESTRUCTIVE_SQL,
    FIND_DELETE,
    FIREWALL_CHANGE,
    FORMAT_DISK,
    FORMAT_FILESYSTEM,
    GIT_CLEAN,
    GIT_DELETE_BRANCH,
    GIT_DISCARD_CHANGES,
    GIT_FORCE_PUSH,
    GIT_RESET_HARD,
    GIT_REWRITE_HISTORY,
    HISTORY_TAMPER,
    KILL_ALL_PROCESSES,
    POWER_OFF,
    PROCESS_KILL,
    RAW_DEVICE_WRITE,
    RECURSIVE_CHMOD_ROOT,
    RECURSIVE_DELETE,
    SERVICE_CONTROL,
    SHRED_FILES,
    SYSTEM_FILE_WRITE,
    WRITE_BLOCK_DEVICE,
    Rule,
)
from .shell import Word

__all__ = ["DELETERS", "PERMISSION_CHANGERS", "check", "find_exec", "modified", "target_rules", "tree_rules", "written"]

_TOP_DIRS: Final = ("bin|boot|dev|etc|home|lib|lib32|lib64|opt|proc|root|sbin|srv|sys|usr|var"
                    "|applications|library|system|users")
#: The root, the home directory or a top-level system directory (or all their contents).
_ROOT_TARGET: Final = re.compile(rf"/+\.?|/\*|~/?\*?|\$\{{?home\}}?/?\*?|/(?:{_TOP_DIRS})/?\*?")
_FILE_SYSTEM_ROOT: Final = re.compile(r"/+\*?")
_SYSTEM_DIR: Final = re.compile(r"/(?:bin|boot|etc|lib|lib32|lib64|opt|sbin|srv|sys|usr|var)/?\*?")
_DISK: Final = re.compile(r"/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|r?disk\d|md\d|dm-\d|mapper/)")
_HARMLESS_DEVICE: Final = re.compile(
    r"/dev/(?:(?:null|zero|stdout|stderr|stdin|tty|random|urandom)$|(?:fd|pts|shm|tcp|udp)/)")
_SYSTEM_PATH: Final = re.compile(
    r"/(?:etc|boot|usr|bin|sbin|lib|lib32|lib64|sys|proc/sys|var/spool/cron|library|system)(?:/|$)")
_CREDENTIAL_PATH: Final = re.compile(
    r"(?:^|/)\.(?:ssh|gnupg|aws|azure|kube|hermes|config/gh|docker/config\.json|netrc|git-credentials|pgpass"
    r"|npmrc|pypirc|bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|zshenv|zlogin)\b")
#: Shell history files: erasing or linking one away hides what ran.
_HISTORY_PATH: Final = re.compile(
    r"(?:^|/)\.(?:bash_history|zsh_history|zhistory|sh_history|history|local/share/fish/fish_history)$")
_FORMATTERS: Final = frozenset({"mkfs", "mke2fs", "mkswap", "mkdosfs", "mkntfs", "wipefs"})
_PARTITIONERS: Final = frozenset({"fdisk", "sfdisk", "gdisk", "cfdisk", "parted", "sgdisk"})
#: Programs that discard, erase or sanitise a whole device (or the volume on it).
_ERASERS: Final = frozenset({"blkdiscard", "sg_format", "sg_sanitize", "sg_unmap", "nvme", "hdparm", "cryptsetup",
                             "badblocks", "mdadm", "zpool", "lvremove", "vgremove", "pvremove", "dmsetup"})
#: Verbs and options of :data:`_ERASERS` that erase (the programs also have harmless uses).
_ERASING: Final = frozenset({
    "format", "sanitize", "write-zeroes", "write-uncor", "--security-erase", "--security-erase-enhanced",
    "--sanitize-block-erase", "--sanitize-crypto-scramble", "--sanitize-overwrite", "--trim-sector-ranges",
    "--trim-sector-ranges-stdin", "--write-sector", "--make-bad-sector", "luksformat", "erase", "lukserase",
    "-w", "--zero-superblock", "destroy", "labelclear", "remove", "wipe_table"})
_ALWAYS_ERASE: Final = frozenset({"blkdiscard", "sg_format", "sg_sanitize", "sg_unmap", "lvremove", "vgremove",
                                   "pvremove"})
PERMISSION_CHANGERS: Final = frozenset({"chmod", "chown", "chgrp", "chattr", "setfacl"})
DELETERS: Final = frozenset({"rm", "shred", "unlink", "srm"})
_KILLERS: Final = frozenset({"pkill", "killall", "xkill", "skill", "tkill"})
_FIREWALLS: Final = frozenset({"iptables", "ip6tables", "iptables-nft", "iptables-legacy", "ebtables", "arptables"})
_COPIERS: Final = frozenset({"cp", "mv", "install", "ln", "rsync", "scp"})
_IN_PLACE: Final = frozenset({"rm", "unlink", "shred", "truncate", "touch", "chmod", "chown", "chgrp", "chattr",
                              "setfacl"})


def normalized(path: str) -> str:
    """``path`` lower-cased with ``.``, ``..`` and repeated slashes resolved where that is certain: under the root,
    and under the home (``~``, ``$HOME``), whose parent stands for the root (``~/..`` is ``/home``)."""
    lowered = path.lower()
    for home in ("~", "$home", "${home}"):
        if lowered == home or lowered.startswith(f"{home}/"):
            rest = posixpath.normpath("h/" + lowered[len(home):].lstrip("/"))
            return "/" if not (rest == "h" or rest.startswith("h/")) else "~" + rest[1:]
    if lowered.startswith("/") and ("/." in lowered or "//" in lowered[1:]):
        return posixpath.normpath(lowered)
    return lowered


def is_root_target(path: str) -> bool:
    return _ROOT_TARGET.fullmatch(normalized(path)) is not None


def target_rules(path: str, *, writes: bool) -> Iterator[Rule]:
    """The rules hit by writing to (``writes``) or changing in place the file ``path``."""
    lowered = normalized(path)
    if writes and lowered.startswith("/dev/"):
        if _DISK.match(lowered):
            yield WRITE_BLOCK_DEVICE
        elif not _HARMLESS_DEVICE.match(lowered):
            yield RAW_DEVICE_WRITE
    if writes and lowered == "/proc/sysrq-trigger":
        yield POWER_OFF
    if _SYSTEM_PATH.match(lowered):
        yield SYSTEM_FILE_WRITE
    if _CREDENTIAL_PATH.search(lowered):
        yield CREDENTIAL_FILE_WRITE
    if _HISTORY_PATH.search(lowered):
        yield HISTORY_TAMPER


def _letters(texts: Sequence[str]) -> set[str]:
    """The letters of the short-option clusters (``-rf`` gives r and f), up to ``--``."""
    found: set[str] = set()
    for text in takewhile(lambda t: t != "--", texts):
        if text.startswith("-") and not text.startswith("--"):
            found.update(text[1:])
    return found


def _has(texts: Sequence[str], letters: str = "", longs: tuple[str, ...] = ()) -> bool:
    return bool(_letters(texts).intersection(letters)) or any(t.startswith(longs) for t in texts if longs)


def _value(args: Sequence[Word], short: str, long: str) -> Word | None:
    """The value of ``-x VALUE`` / ``-xVALUE`` / ``--long=VALUE`` / ``--long VALUE``."""
    for index, arg in enumerate(args):
        text = arg.text
        if text in (short, long):
            return args[index + 1] if index + 1 < len(args) else None
        if text.startswith(f"{long}="):
            return Word(text.partition("=")[2])
        if text.startswith(short) and not text.startswith("--") and len(text) > len(short):
            return Word(text[len(short):])
    return None


def written(invocation: Invocation) -> list[Word]:
    """The files ``invocation`` writes or replaces (its redirections aside)."""
    name, args = invocation.name, invocation.args
    if name == "tee":
        return operands(args)
    if name == "dd":
        return [Word(a.text[3:]) for a in args if a.text.startswith("of=")]
    if name in _COPIERS:
        files = operands(args, takes_value="tSo" if name != "scp" else "cFiJloPS")
        target = _value(args, "-t", "--target-directory")
        return ([target] if target else []) + (files[-1:] if len(files) > 1 else [])
    if name == "tar":
        return _tar_archive(args)
    if name == "curl":
        return [w for w in (_value(args, "-o", "--output"),) if w]
    if name == "wget":
        return [w for w in (_value(args, "-O", "--output-document"),) if w]
    return []


def _tar_archive(args: Sequence[Word]) -> list[Word]:
    """The archive ``tar`` creates or extends (``-f``), as in ``tar -cf /dev/sda .``."""
    texts = [a.text for a in args]
    first = texts[0] if texts else ""
    letters = _letters(texts) | (set(first) if first and not first.startswith("-") else set())
    if not (letters & set("cruA") or any(t in ("--create", "--append", "--update", "--catenate") for t in texts)):
        return []
    for index, text in enumerate(texts):
        if text.startswith("--file"):
            return [w for w in (_value(args, "--file", "--file"),) if w]
        cluster = text.lstrip("-")
        if "f" in cluster and ((text.startswith("-") and not text.startswith("--")) or index == 0):
            if cluster.endswith("f") and index + 1 < len(args):
                return [args[index + 1]]
            return [Word(cluster.partition("f")[2])]
    return []


def modified(invocation: Invocation) -> list[Word]:
    """The files ``invocation`` changes in place, moves away or deletes."""
    name, args, texts = invocation.name, invocation.args, invocation.texts
    if name in _IN_PLACE:
        return operands(args)
    if name in ("sed", "perl") and _has(texts, "i", ("--in-place",)):
        return operands(args, takes_value="eEfl")
    if name == "mv":
        return operands(args, takes_value="tS")[:-1]
    return []


def find_exec(invocation: Invocation) -> list[list[Word]]:
    """The commands ``find`` runs: the words after each ``-exec``/``-execdir``/``-ok``, up to ``;`` or ``+``."""
    commands: list[list[Word]] = []
    current: list[Word] | None = None
    for arg in invocation.args:
        if current is None:
            if arg.text in ("-exec", "-execdir", "-ok", "-okdir"):
                current = []
        elif arg.text in (";", "+"):
            commands.append(current)
            current = None
        else:
            current.append(arg)
    return commands + ([current] if current else [])


def check(invocation: Invocation) -> Iterator[Rule]:
    """The rules ``invocation`` hits by itself (files it writes are checked apart, with :func:`written`)."""
    name = invocation.name
    if name in _FORMATTERS or name.startswith(("mkfs.", "newfs")):
        yield FORMAT_FILESYSTEM
        if not name.startswith("newfs") and _on_device(invocation):
            yield FORMAT_DISK
    checker = _CHECKS.get(name)
    if checker is not None:
        yield from checker(invocation)


def _on_device(invocation: Invocation) -> bool:
    return any(w.text.startswith("/dev/") for w in operands(invocation.args))


def _rm(invocation: Invocation) -> Iterator[Rule]:
    texts = invocation.texts
    recursive = _has(texts, "rR", ("--recursive",))
    if "--no-preserve-root" in texts or (recursive and any(is_root_target(w.text) for w in operands(invocation.args))):
        yield DELETE_ROOT
    if recursive:
        yield RECURSIVE_DELETE


def _find(invocation: Invocation) -> Iterator[Rule]:
    starts = list(takewhile(lambda w: not w.text.startswith(("-", "(", "!")), invocation.args))
    runs = {basename(words[0].text) for words in find_exec(invocation) if words}
    if "-delete" in invocation.texts:
        runs.add("rm")
    yield from tree_rules(starts, runs)
    if runs & DELETERS:
        yield FIND_DELETE


def find_starts(invocation: Invocation) -> list[Word]:
    """The folders ``find`` walks (its operands before the first test), or the operands of another lister."""
    if invocation.name == "find":
        return list(takewhile(lambda w: not w.text.startswith(("-", "(", "!")), invocation.args))
    return operands(invocation.args) if invocation.name in ("ls", "echo", "printf", "fd", "locate") else []


def tree_rules(starts: Sequence[Word], runs: set[str]) -> Iterator[Rule]:
    """Running each of ``runs`` on every file under ``starts`` (``find -exec``, ``find ... | xargs``)."""
    lowered = [normalized(w.text) for w in starts]
    if runs & DELETERS and any(is_root_target(text) for text in lowered):
        yield DELETE_ROOT
    if runs & PERMISSION_CHANGERS and any(_FILE_SYSTEM_ROOT.fullmatch(text) or _SYSTEM_DIR.fullmatch(text)
                                           or is_root_target(text) for text in lowered):
        yield RECURSIVE_CHMOD_ROOT


def _shred(invocation: Invocation) -> Iterator[Rule]:
    if invocation.name != "srm" and _on_device(invocation):
        yield FORMAT_DISK
    yield SHRED_FILES


def _partitioner(invocation: Invocation) -> Iterator[Rule]:
    if not {"-l", "--list"}.intersection(invocation.texts):
        yield FORMAT_FILESYSTEM


def _diskutil(invocation: Invocation) -> Iterator[Rule]:
    verb = invocation.texts[0].lower() if invocation.args else ""
    if verb.startswith("erase") or verb in ("partitiondisk", "zerodisk", "randomdisk", "secureerase"):
        yield FORMAT_FILESYSTEM


def _subcommand(invocation: Invocation) -> str:
    return next((t for t in invocation.texts if not t.startswith("-")), "").lower()


def _systemctl(invocation: Invocation) -> Iterator[Rule]:
    verb = _subcommand(invocation)
    if verb in ("stop", "disable", "mask", "kill", "restart", "isolate"):
        yield SERVICE_CONTROL
    elif verb in ("poweroff", "reboot", "halt", "suspend", "hibernate", "kexec"):
        yield POWER_OFF


def _service(invocation: Invocation) -> Iterator[Rule]:
    if len(invocation.args) > 1 and invocation.texts[1].lower() in ("stop", "restart"):
        yield SERVICE_CONTROL


def _verb_in(verbs: frozenset[str], rule: Rule) -> Callable[[Invocation], Iterator[Rule]]:
    def check_verb(invocation: Invocation) -> Iterator[Rule]:
        if _subcommand(invocation) in verbs:
            yield rule
    return check_verb


def _kill(invocation: Invocation) -> Iterator[Rule]:
    texts = invocation.texts
    if texts and texts[0] in ("-0", "-l", "-L", "--list"):
        return
    if len(texts) >= 2 and texts[-1] == "-1":
        yield KILL_ALL_PROCESSES
    yield PROCESS_KILL


def _always(*rules: Rule) -> Callable[[Invocation], Iterator[Rule]]:
    def check_always(invocation: Invocation) -> Iterator[Rule]:
        yield from rules
    return check_always


def _init(invocation: Invocation) -> Iterator[Rule]:
    if invocation.texts[:1] and invocation.texts[0].lower() in ("0", "6", "s"):
        yield POWER_OFF


def _eraser(invocation: Invocation) -> Iterator[Rule]:
    texts = {t.lower() for t in invocation.texts} | set(invocation.texts)
    if invocation.name in _ALWAYS_ERASE or texts & _ERASING:
        yield FORMAT_DISK if _on_device(invocation) else FORMAT_FILESYSTEM


def _history(invocation: Invocation) -> Iterator[Rule]:
    """``history -c`` / ``-d N`` erase; ``set +o history`` stops recording."""
    texts = invocation.texts
    if (invocation.name == "history" and _letters(texts) & set("cd")) or (
            invocation.name in ("set", "shopt") and "history" in texts and ("+o" in texts or "-u" in texts)):
        yield HISTORY_TAMPER


def _chmod(invocation: Invocation) -> Iterator[Rule]:
    recursive = _has(invocation.texts, "R", ("--recursive",))
    for word in operands(invocation.args):
        lowered = normalized(word.text)
        if _FILE_SYSTEM_ROOT.fullmatch(lowered) or (recursive and _SYSTEM_DIR.fullmatch(lowered)):
            yield RECURSIVE_CHMOD_ROOT
            return


def _mv(invocation: Invocation) -> Iterator[Rule]:
    if any(is_root_target(w.text) for w in operands(invocation.args, takes_value="tS")[:-1]):
        yield DELETE_ROOT


def _rsync(invocation: Invocation) -> Iterator[Rule]:
    if any(t.startswith("--del") or t == "--remove-source-files" for t in invocation.texts):
        files = operands(invocation.args)
        yield DELETE_ROOT if files and is_root_target(files[-1].text) else RECURSIVE_DELETE


def _crontab(invocation: Invocation) -> Iterator[Rule]:
    if "r" in _letters(invocation.texts):
        yield CRONTAB_REMOVE


def _iptables(invocation: Invocation) -> Iterator[Rule]:
    listing = {"-L", "--list", "-S", "--list-rules", "-h", "--help", "-V", "--version"}
    if not listing.intersection(invocation.texts):
        yield FIREWALL_CHANGE


def _firewall_cmd(invocation: Invocation) -> Iterator[Rule]:
    if any(t.startswith(("--add", "--remove", "--set", "--panic", "--new", "--delete", "--reload", "--complete"))
           for t in invocation.texts):
        yield FIREWALL_CHANGE


def _pfctl(invocation: Invocation) -> Iterator[Rule]:
    if _letters(invocation.texts) & set("dFf"):
        yield FIREWALL_CHANGE


#: git's global options that take the next word as their value.
_GIT_VALUED: Final = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix",
                                "--config-env", "--list-cmds"})


def _git(invocation: Invocation) -> Iterator[Rule]:
    texts = invocation.texts
    index = 0
    while index < len(texts) and texts[index].startswith("-"):
        index += 2 if texts[index] in _GIT_VALUED else 1
    if index >= len(texts):
        return
    sub, rest = texts[index], texts[index + 1:]
    checker = _GIT.get(sub)
    if checker is not None:
        yield from checker(rest)


def _git_push(rest: list[str]) -> Iterator[Rule]:
    if (_has(rest, "fd", ("--force", "--mirror", "--delete"))
            or any(len(t) > 1 and t[0] in "+:" for t in rest)):
        yield GIT_FORCE_PUSH


def _git_clean(rest: list[str]) -> Iterator[Rule]:
    if _has(rest, "f", ("--force",)) and not _has(rest, "n", ("--dry-run",)):
        yield GIT_CLEAN


def _git_branch(rest: list[str]) -> Iterator[Rule]:
    letters = _letters(rest)
    if "D" in letters or (("d" in letters or "--delete" in rest) and ("f" in letters or "--force" in rest)):
        yield GIT_DELETE_BRANCH


def _git_when(test: Callable[[list[str]], bool], rule: Rule) -> Callable[[list[str]], Iterator[Rule]]:
    def check_git(rest: list[str]) -> Iterator[Rule]:
        if test(rest):
            yield rule
    return check_git


def _git_gc(rest: list[str]) -> bool:
    """``git gc --prune=now``: unreachable commits (a dropped stash, a reset branch) are deleted at once."""
    return any(t.partition("=")[2].lower() in ("now", "all") for t in rest if t.startswith("--prune="))


_GIT: Final[dict[str, Callable[[list[str]], Iterator[Rule]]]] = {
    "reset": _git_when(lambda rest: "--hard" in rest, GIT_RESET_HARD),
    "clean": _git_clean,
    "push": _git_push,
    "checkout": _git_when(lambda rest: bool({"--", ".", "-f", "--force"}.intersection(rest)), GIT_DISCARD_CHANGES),
    "restore": _git_when(lambda rest: "--staged" not in rest and "-S" not in rest, GIT_DISCARD_CHANGES),
    "stash": _git_when(lambda rest: rest[:1] in (["drop"], ["clear"]), GIT_DISCARD_CHANGES),
    "switch": _git_when(lambda rest: bool({"--discard-changes", "-f", "--force"}.intersection(rest)),
                        GIT_DISCARD_CHANGES),
    "branch": _git_branch,
    "filter-branch": _git_when(lambda rest: True, GIT_REWRITE_HISTORY),
    "filter-repo": _git_when(lambda rest: True, GIT_REWRITE_HISTORY),
    "reflog": _git_when(lambda rest: rest[:1] in (["expire"], ["delete"]), GIT_REWRITE_HISTORY),
    "update-ref": _git_when(lambda rest: "-d" in rest, GIT_REWRITE_HISTORY),
    "gc": _git_when(_git_gc, GIT_REWRITE_HISTORY),
    "prune": _git_when(lambda rest: not _has(rest, "n", ("--dry-run",)), GIT_REWRITE_HISTORY),
}

_CHECKS: Final[dict[str, Callable[[Invocation], Iterator[Rule]]]] = {
    "rm": _rm,
    "find": _find,
    "shred": _shred, "wipe": _shred, "srm": _shred,
    **dict.fromkeys(_PARTITIONERS, _partitioner),
    "diskutil": _diskutil,
    "dropdb": _always(DESTRUCTIVE_SQL), "dropuser": _always(DESTRUCTIVE_SQL),
    "systemctl": _systemctl,
    "service": _service, "rc-service": _service,
    "launchctl": _verb_in(frozenset({"unload", "remove", "bootout", "kill", "stop", "disable"}), SERVICE_CONTROL),
    "sv": _verb_in(frozenset({"stop", "down", "kill", "shutdown"}), SERVICE_CONTROL),
    "supervisorctl": _verb_in(frozenset({"stop", "kill", "shutdown"}), SERVICE_CONTROL),
    "kill": _kill,
    **dict.fromkeys(_KILLERS, _always(PROCESS_KILL)),
    "killall5": _always(KILL_ALL_PROCESSES),
    **dict.fromkeys(("shutdown", "reboot", "halt", "poweroff"), _always(POWER_OFF)),
    "init": _init, "telinit": _init,
    **dict.fromkeys(PERMISSION_CHANGERS, _chmod),
    "history": _history, "set": _history, "shopt": _history,
    **dict.fromkeys(_ERASERS, _eraser),
    "mv": _mv,
    "rsync": _rsync,
    "crontab": _crontab,
    **dict.fromkeys(_FIREWALLS, _iptables),
    "nft": _verb_in(frozenset({"flush", "delete", "add", "insert", "replace", "create", "destroy", "reset"}),
                    FIREWALL_CHANGE),
    "ufw": _verb_in(frozenset({"disable", "reset", "deny", "reject", "delete", "default", "allow", "limit"}),
                    FIREWALL_CHANGE),
    "firewall-cmd": _firewall_cmd,
    "pfctl": _pfctl,
    "git": _git,
}

"""Classify shell commands as safe, dangerous (needs approval) or hardline (always refused).

Rules match the canonical form from :mod:`.normalize`, so quoting, escapes and ANSI tricks do not hide a
command, while text that is only printed stays safe: ``echo "rm -rf /"`` is safe (nothing runs it), but
``sh -c "rm -rf /"``, ``echo $(rm -rf /)`` and ``echo "rm -rf /" | sh`` are not. Command rules are anchored
at a command position (the start, after ``; & | (`` or ``-exec``, after wrappers such as ``sudo`` or
``xargs``), so ``git commit -m "rm -rf / fix"`` stays safe too.

This is a safety net against mistakes and casual obfuscation, not a sandbox: a command can always be
written so that no pattern sees it (``$(printf %s r m) -rf /``). Rule keys are stable: they are what
users approve for a session and what ``command_allowlist`` in config.yaml lists.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from .normalize import COMMAND_PREFIXES, normalize_command

__all__ = ["RULES", "Classification", "Level", "Rule", "classify"]


class Level(StrEnum):
    """How a command is treated."""

    SAFE = "safe"
    DANGEROUS = "dangerous"  #: runs after approval (once, for the session or always)
    HARDLINE = "hardline"  #: never runs, whatever the approval callback says


@dataclass(frozen=True)
class Rule:
    """One danger pattern; ``key`` is what approvals and ``command_allowlist`` refer to."""

    key: str
    level: Level
    reason: str
    pattern: re.Pattern[str]
    #: When set, the rule applies only to commands that also match this (e.g. a database client).
    context: re.Pattern[str] | None = None

    def matches(self, normalized: str) -> bool:
        return bool(self.pattern.search(normalized)) and (
            self.context is None or bool(self.context.search(normalized))
        )


@dataclass(frozen=True)
class Classification:
    """The verdict on one command: its level and every rule it matched (hardline rules first)."""

    level: Level
    rules: tuple[Rule, ...]
    normalized: str

    @property
    def rule_key(self) -> str | None:
        return self.rules[0].key if self.rules else None

    @property
    def reason(self) -> str:
        return self.rules[0].reason if self.rules else "no danger pattern matched"


# --- building blocks (all match the lower-case canonical form) ---------------------------------------------
_SEP = r"(?:^|[;&|({]|\s-exec(?:dir)?|\s-ok(?:dir)?)\s*"
_OPTION = r"(?:-\S+(?:\s+[^-\s;&|()]\S*)?|\w+=\S*|\d\S*)"
_PREFIX = (
    rf"(?:(?:{'|'.join(map(re.escape, COMMAND_PREFIXES))})(?:\s+{_OPTION})*\s+|\w+=\S*\s+)*"
)
_ARGS = r"[^;&|()]*"  # the rest of one simple command
_END = r"(?=\s|$|[;&|)])"
_LAST = r"[^\s;&|()]*\s*(?:$|[;&|)])"  # ...and this was the last argument
_RECURSIVE = rf"(?={_ARGS}\s(?:-[a-z]*r[a-z]*|--recursive){_END})"
_SHELL = r"(?:\S*/)?(?:(?:ba|z|k|da|a|mk|tc|c|fi)?sh|python[\d.]*|perl|ruby|node|php|lua)"
_FETCH = r"(?:curl|wget|fetch|aria2c|lwp-request|nc|ncat|socat)"
_DECODE = (
    r"(?:base64\s+(?:-\S+\s+)*?(?:-d|--decode)\b|xxd\s+(?:-\S+\s+)*?-r\b|openssl\s+(?:enc|base64)\b[^;&|]*\s-d\b"
    r"|uudecode\b|rev\b|tr\s|g?unzip\b|zcat\b|bzcat\b|xzcat\b|gzip\s+(?:-\S+\s+)*?-d\b|echo\b|printf\b)"
)
_FORMATTERS = r"mkfs(?:\.\w+)?|mke2fs|mkswap|mkdosfs|mkntfs|wipefs"
_SCRIPT_RUNNER = _SHELL + r"|eval|source|\."
_ROOT_TARGET = (
    r"(?:/+\.?|/\*|~/?\*?|\$\{?home\}?/?\*?"
    r"|/(?:bin|boot|dev|etc|home|lib|lib32|lib64|opt|proc|root|sbin|srv|sys|usr|var|applications|library"
    r"|system|users)/?\*?)"
)
_DISK = r"/dev/(?:sd[a-z]|hd[a-z]|vd[a-z]|xvd[a-z]|nvme\d|mmcblk\d|r?disk\d|md\d|dm-\d|mapper/)"
_SYSTEM_PATH = r"/(?:etc|boot|usr|bin|sbin|lib|lib32|lib64|sys|proc/sys|var/spool/cron|library|system)(?=/|\s|$)"
_CREDENTIAL_PATH = (
    r"(?:[^\s;&|()]*/)?\.(?:ssh|gnupg|aws|azure|kube|hermes|config/gh|docker/config\.json|netrc|git-credentials"
    r"|pgpass|npmrc|pypirc|bashrc|bash_profile|bash_login|bash_logout|profile|zshrc|zprofile|zshenv|zlogin)\b"
)
_DB_CLIENT = (
    r"\b(?:psql|mysql|mariadb|sqlite3?|sqlcmd|clickhouse(?:-client)?|duckdb|cockroach|mongo|mongosh"
    r"|redis-cli|cqlsh|sqlplus|snowsql|bq|beeline|spark-sql|isql|dropdb|dropuser)\b"
)


def _cmd(names: str) -> str:
    """``names`` run as a command: at a command position, after wrappers, with an optional directory."""
    return rf"{_SEP}{_PREFIX}(?:\S*/)?(?:{names}){_END}"


def _git(subcommand: str) -> str:
    return rf"{_cmd('git')}(?:\s+(?:-c\s+\S+|--\S+))*\s+{subcommand}"


def _writes_to(target: str) -> str:
    """Any way of writing to, replacing or modifying a path matching ``target``."""
    return "|".join((
        rf"(?:>>?|>\||\bof=|\btee\b(?:\s+-\S+)*)\s*{target}",
        rf"{_cmd('cp|mv|install|ln|rsync|scp')}{_ARGS}\s{target}{_LAST}",
        rf"{_cmd('rm|unlink|shred|truncate|touch|chmod|chown|chgrp|chattr|setfacl')}{_ARGS}\s{target}",
        rf"{_cmd('sed|perl')}(?={_ARGS}\s-[a-z]*i){_ARGS}\s{target}",
    ))


def _rule(key: str, level: Level, reason: str, *patterns: str, context: str | None = None) -> Rule:
    return Rule(key, level, reason, re.compile("|".join(f"(?:{p})" for p in patterns)),
                re.compile(context) if context else None)


H, D = Level.HARDLINE, Level.DANGEROUS

RULES: Final[tuple[Rule, ...]] = (
    # hardline: catastrophic and never legitimate for an agent
    _rule("delete_root", H, "deletes the root, home or a top-level system directory",
          rf"{_cmd('rm')}{_ARGS}\s--no-preserve-root{_END}",
          rf"{_cmd('rm')}{_RECURSIVE}{_ARGS}\s{_ROOT_TARGET}{_END}",
          rf"{_cmd('find')}\s+{_ROOT_TARGET}\s{_ARGS}-delete\b"),
    _rule("format_disk", H, "formats or wipes a disk device",
          rf"{_cmd(_FORMATTERS + '|shred|wipe')}{_ARGS}\s/dev/"),
    _rule("write_block_device", H, "overwrites a disk device with raw data",
          rf"(?:>|\bof=|\btee\b(?:\s+-\S+)*)\s*{_DISK}"),
    _rule("fork_bomb", H, "is a fork bomb",
          r"(?P<f>\S+)\s*\(\s*\)\s*\{[^}]*(?P=f)\s*\|\s*(?P=f)\s*&",
          r"\bfunction\s+(?P<g>\S+)\s*(?:\(\s*\))?\s*\{[^}]*(?P=g)\s*\|\s*(?P=g)",
          r"\bfork\s+while\s+fork\b", r"\bwhile\s+(?:true|1)\b[^;]*\bos\.fork\b"),
    _rule("kill_all_processes", H, "signals every process on the machine",
          rf"{_cmd('kill')}\s+\S+(?:\s+\S+)*?\s+-1\s*(?:$|[;&|)])", _cmd("killall5")),
    _rule("recursive_chmod_root", H, "changes permissions or ownership of the whole file system",
          rf"{_cmd('chmod|chown|chgrp')}{_RECURSIVE}{_ARGS}\s/+\*?{_END}"),
    # dangerous: run only with approval
    _rule("recursive_delete", D, "deletes files recursively",
          rf"{_cmd('rm')}{_ARGS}\s(?:-[a-z]*r[a-z]*|--recursive){_END}"),
    _rule("find_delete", D, "deletes the files that find matches",
          rf"{_cmd('find')}{_ARGS}\s(?:-delete|-exec(?:dir)?\s+(?:\S*/)?(?:rm|shred|unlink))\b"),
    _rule("shred_files", D, "destroys file contents beyond recovery", _cmd("shred|wipe|srm")),
    _rule("format_filesystem", D, "creates a file system or changes a partition table",
          _cmd(_FORMATTERS + r"|newfs\w*"),
          rf"{_cmd('fdisk|sfdisk|gdisk|cfdisk|parted')}(?!\s+(?:-l|--list)\b)",
          rf"{_cmd('diskutil')}\s+(?:erase\w*|partitiondisk|zerodisk|randomdisk|secureerase)\b"),
    _rule("raw_device_write", D, "writes raw data to a device file",
          r"(?:>|\bof=|\btee\b(?:\s+-\S+)*)\s*"
          r"/dev/(?!(?:null|zero|stdout|stderr|stdin|tty|random|urandom)\b|(?:fd|pts|shm|tcp|udp)/)\S"),
    _rule("destructive_sql", D, "drops, truncates or wholesale deletes database data",
          r"\bdrop\s+(?:table|database|schema|index|view|user|role|collection|keyspace)\b",
          r"\btruncate\s+(?:table\s+)?[\w.\"`\[]",
          r"\bdelete\s+from\s+\S+\s*(?:$|[;&|)])",
          r"\b(?:dropdatabase|flushall|flushdb)\b", r"\.drop\s*(?:\(|$|\s)", _cmd("dropdb|dropuser"),
          context=_DB_CLIENT),
    _rule("system_file_write", D, "writes to a system file or directory", _writes_to(_SYSTEM_PATH)),
    _rule("credential_file_write", D, "writes to a credential, SSH, Hermes or shell start-up file",
          _writes_to(_CREDENTIAL_PATH)),
    _rule("service_control", D, "stops, disables or restarts a system service",
          rf"{_cmd('systemctl')}(?:\s+-\S+)*\s+(?:stop|disable|mask|kill|restart|isolate)\b",
          rf"{_cmd('service|rc-service')}\s+\S+\s+(?:stop|restart)\b",
          rf"{_cmd('launchctl')}\s+(?:unload|remove|bootout|kill|stop|disable)\b",
          rf"{_cmd('sv|supervisorctl')}\s+(?:stop|down|kill|shutdown)\b"),
    _rule("process_kill", D, "kills processes",
          rf"{_cmd('kill')}(?!\s+-(?:0|l|list)\b)", _cmd("pkill|killall|xkill|skill|tkill")),
    _rule("power_off", D, "shuts down or reboots the machine",
          _cmd("shutdown|reboot|halt|poweroff"), rf"{_cmd('init|telinit')}\s+[06s]\b",
          rf"{_cmd('systemctl')}(?:\s+-\S+)*\s+(?:poweroff|reboot|halt|suspend|hibernate|kexec)\b"),
    _rule("remote_code_to_shell", D, "runs code downloaded from the network",
          rf"\b{_FETCH}\b[^;&]*\|\s*{_PREFIX}{_SHELL}{_END}",
          rf"{_cmd(_SCRIPT_RUNNER)}[^;&|]*?(?:<\s*\(|\$\()\s*(?:\S*/)?{_FETCH}\b"),
    _rule("payload_to_shell", D, "pipes generated or decoded text into a shell",
          rf"\b{_DECODE}[^;&]*\|\s*{_PREFIX}{_SHELL}{_END}",
          rf"{_cmd(_SCRIPT_RUNNER)}[^;&|]*?(?:<\s*\(|\$\()[^)]*?\b{_DECODE}"),
    _rule("git_reset_hard", D, "discards uncommitted changes (git reset --hard)",
          rf"{_git('reset')}{_ARGS}\s--hard\b"),
    _rule("git_clean", D, "deletes untracked files (git clean -f)",
          rf"{_git('clean')}(?!{_ARGS}\s(?:-[a-z]*n[a-z]*|--dry-run){_END})"
          rf"(?={_ARGS}\s(?:-[a-z]*f[a-z]*|--force){_END})"),
    _rule("git_force_push", D, "overwrites or deletes remote history (git push --force/--delete)",
          rf"{_git('push')}{_ARGS}\s(?:--force(?:-with-lease|-if-includes)?(?:=\S*)?|-[a-z]*f[a-z]*|--mirror"
          rf"|--delete|-d|\+\S+|:\S+){_END}"),
    _rule("git_discard_changes", D, "discards working-tree changes (git checkout/restore/stash drop)",
          rf"{_git('checkout')}{_ARGS}\s(?:--|\.|-f|--force){_END}",
          rf"{_git('restore')}(?!{_ARGS}\s--staged{_END})",
          rf"{_git('stash')}\s+(?:drop|clear)\b",
          rf"{_git('switch')}{_ARGS}\s(?:--discard-changes|-f|--force){_END}"),
    _rule("git_rewrite_history", D, "rewrites or expires local history",
          _git(r"(?:filter-branch|filter-repo)\b"), _git(r"reflog\s+(?:expire|delete)\b"),
          _git(r"update-ref\s+-d\b")),
)


def classify(command: str) -> Classification:
    """Normalise ``command`` and match it against :data:`RULES`."""
    normalized = normalize_command(command)
    matched = [rule for rule in RULES if rule.matches(normalized)]
    matched.sort(key=lambda rule: rule.level is not Level.HARDLINE)
    if not matched:
        return Classification(Level.SAFE, (), normalized)
    return Classification(matched[0].level, tuple(matched), normalized)

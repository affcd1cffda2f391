"""The danger rules: a key, a level and what a matching command does.

Keys are stable: they are what users approve for a session and what ``command_allowlist`` in
config.yaml lists. Which commands match a rule is decided in :mod:`.programs` and :mod:`.danger`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Final

__all__ = ["OPT_IN_RULES", "RULES", "Level", "Rule"]


class Level(StrEnum):
    """How a command is treated."""

    SAFE = "safe"
    DANGEROUS = "dangerous"  #: runs after approval (once, for the session or always)
    HARDLINE = "hardline"  #: never runs, whatever the approval callback says


@dataclass(frozen=True, eq=False)  # each rule is one constant: identity is equality, and hashing is cheap
class Rule:
    """One kind of danger; ``key`` is what approvals and ``command_allowlist`` refer to."""

    key: str
    level: Level
    reason: str


H, D = Level.HARDLINE, Level.DANGEROUS

# hardline: catastrophic and never legitimate for an agent
DELETE_ROOT: Final = Rule("delete_root", H, "deletes or moves away the root, home or a top-level system directory")
FORMAT_DISK: Final = Rule("format_disk", H, "formats, wipes, discards or secure-erases a disk device")
WRITE_BLOCK_DEVICE: Final = Rule("write_block_device", H, "overwrites a disk device with raw data")
FORK_BOMB: Final = Rule("fork_bomb", H, "is a fork bomb")
KILL_ALL_PROCESSES: Final = Rule("kill_all_processes", H, "signals every process on the machine")
RECURSIVE_CHMOD_ROOT: Final = Rule("recursive_chmod_root", H,
                                   "changes permissions or ownership of the root or of a whole system directory")
# dangerous: run only with approval
RECURSIVE_DELETE: Final = Rule("recursive_delete", D, "deletes files recursively")
FIND_DELETE: Final = Rule("find_delete", D, "deletes the files that find matches")
SHRED_FILES: Final = Rule("shred_files", D, "destroys file contents beyond recovery")
FORMAT_FILESYSTEM: Final = Rule("format_filesystem", D, "creates a file system or changes a partition table")
RAW_DEVICE_WRITE: Final = Rule("raw_device_write", D, "writes raw data to a device file")
DESTRUCTIVE_SQL: Final = Rule("destructive_sql", D, "drops, truncates or wholesale deletes database data")
SYSTEM_FILE_WRITE: Final = Rule("system_file_write", D, "writes to a system file or directory")
CREDENTIAL_FILE_WRITE: Final = Rule("credential_file_write", D,
                                    "writes to a credential, SSH, Hermes or shell start-up file")
SERVICE_CONTROL: Final = Rule("service_control", D, "stops, disables or restarts a system service")
PROCESS_KILL: Final = Rule("process_kill", D, "kills processes")
POWER_OFF: Final = Rule("power_off", D, "shuts down, reboots or crashes the machine")
FIREWALL_CHANGE: Final = Rule("firewall_change", D, "changes or flushes the firewall rules")
CRONTAB_REMOVE: Final = Rule("crontab_remove", D, "deletes the user's crontab")
REMOTE_CODE_TO_SHELL: Final = Rule("remote_code_to_shell", D, "runs code downloaded from the network")
PAYLOAD_TO_SHELL: Final = Rule("payload_to_shell", D, "pipes generated or decoded text into a shell")
INTERPRETER_CODE: Final = Rule("interpreter_code", D,
                               "runs code given inline to an interpreter (python -c, perl -e, awk system(), a "
                               "here-document), which cannot be checked")
DYNAMIC_COMMAND: Final = Rule("dynamic_command", D,
                              "runs a command known only at run time (a variable or substitution as the command, "
                              "eval, alias)")
WRITTEN_SCRIPT: Final = Rule("written_script", D, "runs a script that it writes itself")
UNPARSABLE: Final = Rule("unparsable", D, "cannot be parsed reliably, so what it runs is unknown")
TOO_LONG: Final = Rule("too_long", D, "is too long to be checked")
HISTORY_TAMPER: Final = Rule("history_tamper", D, "erases, disables or redirects the shell's command history")
CONTAINER_HOST_ACCESS: Final = Rule("container_host_access", D,
                                    "runs a container with the host's root, a system or credential directory or "
                                    "the Docker socket mounted, privileged, or in the host's process namespace")
EDITOR_COMMAND: Final = Rule("editor_command", D,
                             "gives commands to an editor, pager or debugger that can run a shell (vim -c, "
                             "less +!, gdb -ex, emacs --eval)")
GIT_RESET_HARD: Final = Rule("git_reset_hard", D, "discards uncommitted changes (git reset --hard)")
GIT_CLEAN: Final = Rule("git_clean", D, "deletes untracked files (git clean -f)")
GIT_FORCE_PUSH: Final = Rule("git_force_push", D,
                             "overwrites or deletes remote history (git push --force/--delete)")
GIT_DISCARD_CHANGES: Final = Rule("git_discard_changes", D,
                                  "discards working-tree changes (git checkout/restore/stash drop)")
GIT_DELETE_BRANCH: Final = Rule("git_delete_branch", D,
                                "force-deletes a branch and its unmerged commits (git branch -D)")
GIT_REWRITE_HISTORY: Final = Rule("git_rewrite_history", D, "rewrites or expires local history")
# dangerous only in the stricter readings a user opts into
NOT_READ_ONLY: Final = Rule("not_read_only", D,
                            "runs a program that is not on the read-only list, writes a file or sets a variable that "
                            "changes what runs (approvals.mode: strict)")
OUTSIDE_WORKSPACE: Final = Rule("outside_workspace", D,
                                "reads or writes a path outside the workspace (terminal.workspace_only)")

RULES: Final[tuple[Rule, ...]] = (
    DELETE_ROOT, FORMAT_DISK, WRITE_BLOCK_DEVICE, FORK_BOMB, KILL_ALL_PROCESSES, RECURSIVE_CHMOD_ROOT,
    RECURSIVE_DELETE, FIND_DELETE, SHRED_FILES, FORMAT_FILESYSTEM, RAW_DEVICE_WRITE, DESTRUCTIVE_SQL,
    SYSTEM_FILE_WRITE, CREDENTIAL_FILE_WRITE, SERVICE_CONTROL, PROCESS_KILL, POWER_OFF, FIREWALL_CHANGE,
    CRONTAB_REMOVE, REMOTE_CODE_TO_SHELL, PAYLOAD_TO_SHELL, INTERPRETER_CODE, DYNAMIC_COMMAND, WRITTEN_SCRIPT,
    UNPARSABLE, TOO_LONG, HISTORY_TAMPER, CONTAINER_HOST_ACCESS, EDITOR_COMMAND,
    GIT_RESET_HARD, GIT_CLEAN, GIT_FORCE_PUSH, GIT_DISCARD_CHANGES, GIT_DELETE_BRANCH,
    GIT_REWRITE_HISTORY, NOT_READ_ONLY, OUTSIDE_WORKSPACE,
)
#: The rules of the stricter readings (:class:`.danger.Strictness`): never matched by default.
OPT_IN_RULES: Final = frozenset({NOT_READ_ONLY, OUTSIDE_WORKSPACE})

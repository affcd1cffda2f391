"""The built-in persistent memory, in Hermes Agent's files and rules: ``memories/MEMORY.md`` (the agent's notes)
and ``memories/USER.md`` (the user's profile) in the home, entries separated by ``\\n§\\n``, each file held under
its character limit (2 200 and 1 375 by default, ``memory.memory_char_limit`` / ``user_char_limit``).

Every change re-reads the file under two locks, the one the file tools take for edits of that path
(:func:`~hermes_core.config.filelock.path_lock`) and ``<file>.lock`` beside it (the one Hermes Agent's memory tool
takes), then replaces it atomically: writers in several processes, Hermes' or Hermes Agent's, never lose an entry.
Answers and refusals are Hermes Agent's, word for word.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, Literal

from ..config.cachefile import write_atomically
from ..config.filelock import exclusive_lock, path_lock
from ..config.untrusted import read_untrusted_text
from .threats import first_threat_message, scan_for_threats

__all__ = ["ENTRY_DELIMITER", "TARGETS", "MemoryFiles", "Target"]

ENTRY_DELIMITER: Final = "\n§\n"
Target = Literal["memory", "user"]
TARGETS: Final[tuple[Target, ...]] = ("memory", "user")
_FILES: Final = {"memory": "MEMORY.md", "user": "USER.md"}
_HEADERS: Final = {"memory": "MEMORY (your personal notes)", "user": "USER PROFILE (who the user is)"}
#: A memory file larger than this is not one the tool wrote: it is read up to here.
_READ_LIMIT: Final = 4 << 20

Answer = dict[str, Any]


class MemoryFiles:
    """MEMORY.md and USER.md in ``folder`` (``<home>/memories``), with their character limits."""

    def __init__(self, folder: Path, memory_char_limit: int = 2200, user_char_limit: int = 1375) -> None:
        self.folder = folder
        self.limits: dict[str, int] = {"memory": memory_char_limit, "user": user_char_limit}

    @classmethod
    def of(cls, home: Path, settings: Mapping[str, Any]) -> MemoryFiles:
        """The memory of the home ``home`` with the limits of its ``memory:`` section."""
        return cls(home / "memories", int(settings.get("memory_char_limit") or 2200),
                   int(settings.get("user_char_limit") or 1375))

    def path(self, target: str) -> Path:
        return self.folder / _FILES["user" if target == "user" else "memory"]

    def entries(self, target: str) -> list[str]:
        """The entries of ``target`` as they are on disk now (duplicates dropped, order kept)."""
        return list(dict.fromkeys(_split(self._read(target))))

    def usage(self, target: str, entries: list[str] | None = None) -> tuple[int, int]:
        """Characters used and the limit."""
        entries = self.entries(target) if entries is None else entries
        return len(ENTRY_DELIMITER.join(entries)), self.limits["user" if target == "user" else "memory"]

    # -- the system prompt ---------------------------------------------------------------------------

    def prompt_block(self, target: str) -> str:
        """The block Hermes Agent puts in the system prompt for ``target`` (empty when it holds nothing): a header
        with the usage, and the entries, each that matches a threat pattern replaced by a placeholder."""
        entries = self.entries(target)
        if not entries:
            return ""
        shown = [_screened(entry, _FILES["user" if target == "user" else "memory"]) for entry in entries]
        content = ENTRY_DELIMITER.join(shown)
        used, limit = len(content), self.usage(target)[1]
        separator = "═" * 46
        title = _HEADERS["user" if target == "user" else "memory"]
        header = f"{title} [{_percent(used, limit)}% — {used:,}/{limit:,} chars]"
        return f"{separator}\n{header}\n{separator}\n{content}"

    # -- changes ------------------------------------------------------------------------------------

    def add(self, target: str, content: str) -> Answer:
        """Append an entry (refused over the limit; an exact duplicate is not added twice)."""
        content = content.strip()
        if not content:
            return {"success": False, "error": "Content cannot be empty."}
        threat = first_threat_message(content)
        if threat:
            return {"success": False, "error": threat}
        with self.locked(target):
            entries = self.entries(target)  # appending never rewrites what another writer put there
            if content in entries:
                return self._success(target, entries, "Entry already exists (no duplicate added).")
            new_total = len(ENTRY_DELIMITER.join([*entries, content]))
            current, limit = self.usage(target, entries)
            if new_total > limit:
                return {"success": False,
                        "error": f"Memory at {current:,}/{limit:,} chars. Adding this entry ({len(content)} chars) "
                                 "would exceed the limit. Consolidate now: use 'replace' to merge overlapping entries "
                                 "into shorter ones or 'remove' stale or less important entries (see current_entries "
                                 "below), then retry this add — all in this turn.",
                        "current_entries": entries, "usage": f"{current:,}/{limit:,}"}
            entries.append(content)
            self._write(target, entries)
        return self._success(target, entries, "Entry added.")

    def replace(self, target: str, old_text: str, new_content: str) -> Answer:
        """Replace the one entry that contains ``old_text``."""
        old_text, new_content = old_text.strip(), new_content.strip()
        if not old_text:
            return {"success": False, "error": "old_text cannot be empty."}
        if not new_content:
            return {"success": False, "error": "new_content cannot be empty. Use 'remove' to delete entries."}
        threat = first_threat_message(new_content)
        if threat:
            return {"success": False, "error": threat}

        def replaced(entries: list[str], index: int) -> list[str] | Answer:
            changed = [*entries]
            changed[index] = new_content
            new_total, limit = self.usage(target, changed)
            if new_total <= limit:
                return changed
            current = self.usage(target, entries)[0]
            return {"success": False,
                    "error": f"Replacement would put memory at {new_total:,}/{limit:,} chars. Shorten the new "
                             "content, or 'remove' other stale or less important entries to make room (see "
                             "current_entries below), then retry — all in this turn.",
                    "current_entries": entries, "usage": f"{current:,}/{limit:,}"}

        return self._change_one(target, old_text, "replace", replaced, "Entry replaced.")

    def remove(self, target: str, old_text: str) -> Answer:
        """Remove the one entry that contains ``old_text``."""
        old_text = old_text.strip()
        if not old_text:
            return {"success": False, "error": "old_text cannot be empty."}
        return self._change_one(target, old_text, "remove",
                                lambda entries, index: entries[:index] + entries[index + 1:], "Entry removed.")

    def _change_one(self, target: str, old_text: str, action: str,
                    change: Callable[[list[str], int], list[str] | Answer], done: str) -> Answer:
        """Under the locks: refuse a drifted file, find the one entry holding ``old_text``, and write what ``change``
        makes of the entries (or answer its refusal)."""
        with self.locked(target):
            refusal = self._drift(target)
            if refusal:
                return refusal
            entries = self.entries(target)
            index = _match(entries, old_text)
            if isinstance(index, dict):
                return _no_match(index, old_text, entries, action)
            changed = change(entries, index)
            if isinstance(changed, dict):
                return changed
            self._write(target, changed)
        return self._success(target, changed, done)

    def apply_batch(self, target: str, operations: list[Any]) -> Answer:
        """Apply add/replace/remove operations all or nothing, the limit checked on the final result only."""
        if not operations:
            return {"success": False, "error": "operations list is empty."}
        for number, op in enumerate(operations, 1):
            op = op if isinstance(op, dict) else {}
            if op.get("action") in ("add", "replace") and op.get("content"):
                threat = first_threat_message(str(op["content"]))
                if threat:
                    return {"success": False, "error": f"Operation {number}: {threat}"}
        with self.locked(target):
            refusal = self._drift(target)
            if refusal:
                return refusal
            before = self.entries(target)
            working = [*before]
            for number, op in enumerate(operations, 1):
                op = op if isinstance(op, dict) else {}
                action = op.get("action")
                content, old_text = str(op.get("content") or "").strip(), str(op.get("old_text") or "").strip()
                where = f"Operation {number} ({action or 'unknown'})"
                problem = _apply(working, action, content, old_text, where)
                if problem:
                    return self._batch_error(target, before, problem)
            new_total, limit = self.usage(target, working)
            if new_total > limit:
                current = self.usage(target, before)[0]
                return {"success": False,
                        "error": f"After applying all {len(operations)} operations, memory would be at "
                                 f"{new_total:,}/{limit:,} chars -- over the limit. Remove or shorten more entries "
                                 "in the same batch (see current_entries below), then retry.",
                        "current_entries": before, "usage": f"{current:,}/{limit:,}"}
            self._write(target, working)
        return self._success(target, working, f"Applied {len(operations)} operation(s).")

    # -- the files ----------------------------------------------------------------------------------

    @contextlib.contextmanager
    def locked(self, target: str) -> Iterator[None]:
        """Hold both locks of ``target``'s file for the block (a read-modify-write of it)."""
        path = self.path(target)
        self.folder.mkdir(parents=True, exist_ok=True)
        with path_lock(path), exclusive_lock(path.with_name(path.name + ".lock")):
            yield

    def _read(self, target: str) -> str:
        try:
            return read_untrusted_text(self.path(target), _READ_LIMIT, follow_symlinks=True)
        except FileNotFoundError:
            return ""

    def _write(self, target: str, entries: list[str]) -> None:
        write_atomically(self.path(target), ENTRY_DELIMITER.join(entries))

    def _drift(self, target: str) -> Answer | None:
        """Hermes Agent's guard before a rewrite: a file holding what the tool would not write back as it is (an
        edit by hand, an append by the shell) is saved to ``<file>.bak.<time>`` and the change refused."""
        raw = self._read(target)
        if not raw.strip():
            return None
        parsed = _split(raw)
        limit = self.usage(target)[1]
        if raw.strip() == ENTRY_DELIMITER.join(parsed) and max(map(len, parsed), default=0) <= limit:
            return None
        path = self.path(target)
        backup = path.with_name(f"{path.name}.bak.{int(time.time())}")
        try:
            backup.write_text(raw, encoding="utf-8")
            saved = str(backup)
        except OSError:
            saved = f"{backup} (BACKUP FAILED — file unchanged on disk)"
        return {"success": False,
                "error": f"Refusing to write {path.name}: file on disk has content that wouldn't round-trip through "
                         "the memory tool (likely added by the patch tool, a shell append, a manual edit, or a "
                         f"concurrent session). A snapshot was saved to {saved}. Resolve the drift first — either "
                         "rewrite the file as a clean §-delimited list of entries, or move the extra content out — "
                         "then retry. This guard exists to prevent silent data loss (issue #26045).",
                "drift_backup": saved,
                "remediation": "Open the .bak file, integrate the missing entries into the memory tool one at a time "
                               "via memory(action=add, content=...), then remove or rewrite the original file to a "
                               "clean state."}

    def _success(self, target: str, entries: list[str], message: str) -> Answer:
        current, limit = self.usage(target, entries)
        return {"success": True, "done": True, "target": target,
                "usage": f"{_percent(current, limit)}% — {current:,}/{limit:,} chars", "entry_count": len(entries),
                "message": message, "note": "Write saved. This update is complete — do not repeat it."}

    def _batch_error(self, target: str, entries: list[str], message: str) -> Answer:
        current, limit = self.usage(target, entries)
        return {"success": False, "error": message + " No operations were applied (batch is all-or-nothing).",
                "current_entries": entries, "usage": f"{current:,}/{limit:,}"}


def _split(raw: str) -> list[str]:
    return [entry.strip() for entry in raw.split(ENTRY_DELIMITER) if entry.strip()] if raw.strip() else []


def _percent(used: int, limit: int) -> int:
    return min(100, int(used / limit * 100)) if limit > 0 else 0


def _screened(entry: str, filename: str) -> str:
    if entry.startswith("[BLOCKED:"):
        return entry
    findings = scan_for_threats(entry)
    if not findings:
        return entry
    return (f"[BLOCKED: {filename} entry contained threat pattern(s): {', '.join(findings)}. Removed from system "
            "prompt; use memory(action=remove) to delete the original.]")


def _match(entries: list[str], old_text: str) -> int | dict[str, Any]:
    """The index of the one entry holding ``old_text`` (several identical entries count as one), else what is
    wrong: ``{}`` for none, ``{"matches": [...]}`` for several different ones."""
    matches = [index for index, entry in enumerate(entries) if old_text in entry]
    if not matches:
        return {}
    if len({entries[index] for index in matches}) > 1:
        return {"matches": [entries[i][:80] + ("..." if len(entries[i]) > 80 else "") for i in matches]}
    return matches[0]


def _no_match(problem: dict[str, Any], old_text: str, entries: list[str], action: str) -> Answer:
    if problem:
        return {"success": False, "error": f"Multiple entries matched '{old_text}'. Be more specific.", **problem}
    return {"success": False, "error": f"No entry matched '{old_text}'. Check current_entries below and retry with "
                                       f"the exact text of the entry you want to {action}.",
            "current_entries": entries}


def _apply(working: list[str], action: Any, content: str, old_text: str, where: str) -> str | None:
    """Apply one batch operation to ``working``; what is wrong with it, or None."""
    if action == "add":
        if not content:
            return f"{where}: content is required."
        if content not in working:  # a duplicate is skipped, not an error
            working.append(content)
        return None
    if action not in ("replace", "remove"):
        return f"{where}: unknown action. Use add, replace, or remove."
    if not old_text:
        return f"{where}: old_text is required."
    if action == "replace" and not content:
        return f"{where}: content is required (use action='remove' to delete)."
    index = _match(working, old_text)
    if isinstance(index, dict):
        return f"{where}: '{old_text}' matched multiple distinct entries -- be more specific." if index else \
            f"{where}: no entry matched '{old_text}'."
    if action == "replace":
        working[index] = content
    else:
        working.pop(index)
    return None

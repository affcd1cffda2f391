"""Memory writes staged for the user's approval (``memory.write_approval: true``), in Hermes Agent's pending store:
one JSON record per write in ``<home>/pending/memory/<id>.json`` (id, subsystem, action, summary, origin,
created_at, payload), so ``hermes memory pending|approve|reject`` and Hermes Agent's ``/memory pending`` read the
same records. A staged write changes nothing until it is approved; a record that cannot be read is skipped."""

from __future__ import annotations

import json
import re
import time
import uuid
from pathlib import Path
from typing import Any, Final

from ..config.cachefile import write_atomically
from ..config.untrusted import read_untrusted_text
from .memory import TARGETS, MemoryFiles

__all__ = ["PendingWrites", "apply_pending"]

_ID: Final = re.compile(r"^[0-9a-f]{8}$")
#: A record larger than this is not one a memory write staged: it is skipped.
_RECORD_LIMIT: Final = 256 * 1024


class PendingWrites:
    """The staged writes of one subsystem (``memory``) of a home."""

    def __init__(self, home: Path, subsystem: str = "memory") -> None:
        self.folder = home / "pending" / subsystem
        self.subsystem = subsystem

    def stage(self, payload: dict[str, Any], summary: str, origin: str = "foreground") -> dict[str, Any]:
        """Keep ``payload`` (the write's arguments, replayed on approval) for the user; its record."""
        record = {"id": uuid.uuid4().hex[:8], "subsystem": self.subsystem, "action": payload.get("action", ""),
                  "summary": summary.strip(), "origin": origin, "created_at": time.time(), "payload": payload}
        write_atomically(self.folder / f"{record['id']}.json", json.dumps(record, ensure_ascii=False, indent=2))
        return record

    def list(self) -> list[dict[str, Any]]:
        """Every readable record, oldest first."""
        if not self.folder.is_dir():
            return []
        records = [record for path in self.folder.glob("*.json") if (record := self._read(path)) is not None]
        return sorted(records, key=lambda record: float(record.get("created_at") or 0))

    def get(self, pending_id: str) -> dict[str, Any] | None:
        """The record ``pending_id`` (8 hex digits, as staged), or None."""
        return self._read(self.folder / f"{pending_id}.json") if _ID.match(pending_id) else None

    def discard(self, pending_id: str) -> bool:
        """Forget the record; False when there was none."""
        if not _ID.match(pending_id):
            return False
        try:
            (self.folder / f"{pending_id}.json").unlink()
        except FileNotFoundError:
            return False
        return True

    def _read(self, path: Path) -> dict[str, Any] | None:
        try:
            record = json.loads(read_untrusted_text(path, _RECORD_LIMIT))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) and isinstance(record.get("payload"), dict) else None


def apply_pending(files: MemoryFiles, payload: dict[str, Any]) -> dict[str, Any]:
    """Replay a staged memory write (Hermes Agent's payload: ``action`` add/replace/remove with ``content`` and
    ``old_text``, or ``batch`` with ``operations``) with the memory tool's rules and answers."""
    target, action = payload.get("target") or "memory", payload.get("action")
    content, old_text = str(payload.get("content") or ""), str(payload.get("old_text") or "")
    if target not in TARGETS:
        return {"success": False, "error": f"Invalid target '{target}'. Use 'memory' or 'user'."}
    if action == "batch":
        operations = payload.get("operations")
        return files.apply_batch(target, operations if isinstance(operations, list) else [])
    if action == "add":
        return files.add(target, content)
    if action == "replace":
        return files.replace(target, old_text, content)
    if action == "remove":
        return files.remove(target, old_text)
    return {"success": False, "error": f"Unknown staged action '{action}'."}

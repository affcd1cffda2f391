"""Shim of Hermes Agent's ``hermes_state``: ``DEFAULT_DB_PATH`` in the home of the runtime running the plugin, and a
``SessionDB`` on SQLite there with the calls published plugins make (sessions, titles, messages).

Hermes itself keeps no conversation history: the database holds what plugins put in it (a host program's agent
loop may record its sessions and messages through ``SessionDB`` too).
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from . import host_runtime

__all__ = ["SessionDB"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, title TEXT, system_prompt TEXT,
    parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT,
    message_count INTEGER DEFAULT 0);
CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
    content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL);
"""
_TITLE_CHARS = 200


def __getattr__(name: str) -> Any:
    # a module constant in Hermes Agent; here it follows the runtime that imports it
    if name == "DEFAULT_DB_PATH":
        return default_db_path()
    raise AttributeError(name)


def default_db_path() -> Path:
    home: Path = host_runtime().home.root
    return home / "state.db"


class SessionDB:
    """Sessions and their messages in ``state.db`` (``db_path``: default :data:`DEFAULT_DB_PATH`)."""

    def __init__(self, db_path: Path | str | None = None) -> None:
        self.db_path = Path(db_path) if db_path is not None else default_db_path()
        self.db_path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(str(self.db_path), check_same_thread=False, timeout=10)
        self._conn.row_factory = sqlite3.Row
        self._conn.executescript(_SCHEMA)

    def close(self) -> None:
        self._conn.close()

    def _write(self, sql: str, params: tuple[Any, ...]) -> int:
        with self._lock, self._conn:
            return self._conn.execute(sql, params).rowcount

    def create_session(self, session_id: str, source: str, model: str | None = None,
                       parent_session_id: str | None = None, **ignored: Any) -> str:
        self._write("INSERT OR IGNORE INTO sessions (id, source, model, parent_session_id, started_at) "
                    "VALUES (?, ?, ?, ?, ?)", (session_id, source, model, parent_session_id, time.time()))
        return session_id

    def ensure_session(self, session_id: str, source: str = "unknown", **kwargs: Any) -> str:
        return self.create_session(session_id, source, **kwargs)

    def end_session(self, session_id: str, end_reason: str) -> None:
        self._write("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ?", (time.time(), end_reason,
                                                                                       session_id))

    def get_session(self, session_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchone()
        return dict(row) if row else None

    @staticmethod
    def sanitize_title(title: str | None) -> str | None:
        cleaned = " ".join((title or "").split())[:_TITLE_CHARS]
        return cleaned or None

    def set_session_title(self, session_id: str, title: str) -> bool:
        return self._write("UPDATE sessions SET title = ? WHERE id = ?",
                           (self.sanitize_title(title), session_id)) > 0

    def get_session_title(self, session_id: str) -> str | None:
        session = self.get_session(session_id)
        return session["title"] if session else None

    def append_message(self, session_id: str, role: str, content: str | None = None, tool_name: str | None = None,
                       tool_calls: Any = None, tool_call_id: str | None = None, **ignored: Any) -> int:
        with self._lock, self._conn:
            cursor = self._conn.execute(
                "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, role, content, tool_call_id, json.dumps(tool_calls) if tool_calls else None, tool_name,
                 time.time()))
            self._conn.execute("UPDATE sessions SET message_count = message_count + 1 WHERE id = ?", (session_id,))
            return int(cursor.lastrowid or 0)

    def get_messages(self, session_id: str, **ignored: Any) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._conn.execute("SELECT * FROM messages WHERE session_id = ? ORDER BY id", (session_id,))
            return [dict(row) for row in rows]

    def get_messages_as_conversation(self, session_id: str, include_ancestors: bool = False,
                                     **ignored: Any) -> list[dict[str, Any]]:
        """``[{"role", "content"}, ...]`` (tool calls included), the parent sessions' first when asked."""
        chain = [session_id]
        while include_ancestors and (session := self.get_session(chain[0])) and session["parent_session_id"] \
                and session["parent_session_id"] not in chain:
            chain.insert(0, session["parent_session_id"])
        conversation = []
        for sid in chain:
            for row in self.get_messages(sid):
                message: dict[str, Any] = {"role": row["role"], "content": row["content"]}
                if row["tool_calls"]:
                    message["tool_calls"] = json.loads(row["tool_calls"])
                if row["tool_call_id"]:
                    message["tool_call_id"] = row["tool_call_id"]
                conversation.append(message)
        return conversation

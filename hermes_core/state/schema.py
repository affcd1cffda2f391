"""The tables of ``state.db`` as Hermes Agent 0.19 lays them out (schema version 22), so that a Hermes Agent home's
database is read as it is and Hermes Agent reads what Hermes writes.

Only what Hermes reads or writes is created here (sessions, messages, their two FTS5 indexes with the triggers that
keep them current, ``state_meta``); Hermes Agent adds its other tables when it opens the file, and its column
reconciliation adds any column a newer release declares.
"""

from __future__ import annotations

import logging
import sqlite3
from typing import Final

__all__ = ["SCHEMA_VERSION", "create_schema"]

log = logging.getLogger(__name__)

SCHEMA_VERSION: Final = 22

_TABLES = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);

CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, session_key TEXT, chat_id TEXT, chat_type TEXT,
    thread_id TEXT, display_name TEXT, origin_json TEXT, expiry_finalized INTEGER DEFAULT 0, model TEXT,
    model_config TEXT, system_prompt TEXT, parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL,
    end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0, cwd TEXT, git_branch TEXT,
    git_repo_root TEXT, billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT, estimated_cost_usd REAL,
    actual_cost_usd REAL, cost_status TEXT, cost_source TEXT, pricing_version TEXT, title TEXT,
    api_call_count INTEGER DEFAULT 0, handoff_state TEXT, handoff_platform TEXT, handoff_error TEXT,
    compression_failure_cooldown_until REAL, compression_failure_error TEXT,
    compression_fallback_streak INTEGER NOT NULL DEFAULT 0, profile_name TEXT,
    rewind_count INTEGER NOT NULL DEFAULT 0, archived INTEGER NOT NULL DEFAULT 0,
    FOREIGN KEY (parent_session_id) REFERENCES sessions(id)
);

CREATE TABLE IF NOT EXISTS messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
    content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, effect_disposition TEXT,
    timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT, reasoning TEXT, reasoning_content TEXT,
    reasoning_details TEXT, codex_reasoning_items TEXT, codex_message_items TEXT, platform_message_id TEXT,
    observed INTEGER DEFAULT 0, active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0,
    api_content TEXT
);

CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT);

CREATE INDEX IF NOT EXISTS idx_sessions_source ON sessions(source);
CREATE INDEX IF NOT EXISTS idx_sessions_source_id ON sessions(source, id);
CREATE INDEX IF NOT EXISTS idx_sessions_parent ON sessions(parent_session_id);
CREATE INDEX IF NOT EXISTS idx_sessions_started ON sessions(started_at DESC);
CREATE INDEX IF NOT EXISTS idx_messages_session ON messages(session_id, timestamp);
CREATE INDEX IF NOT EXISTS idx_messages_session_active ON messages(session_id, active, timestamp);
"""

#: What each index holds of a message: its text, the tool's name and the calls' arguments (Hermes Agent's v11 rule).
_INDEXED = "COALESCE(new.content, '') || ' ' || COALESCE(new.tool_name, '') || ' ' || COALESCE(new.tool_calls, '')"


def _fts(table: str, tokenizer: str, prefix: str) -> str:
    """An inline FTS5 table and the three triggers (named as Hermes Agent names them) that keep it current."""
    return f"""
CREATE VIRTUAL TABLE IF NOT EXISTS {table} USING fts5(content{tokenizer});
CREATE TRIGGER IF NOT EXISTS {prefix}_insert AFTER INSERT ON messages BEGIN
    INSERT INTO {table}(rowid, content) VALUES (new.id, {_INDEXED});
END;
CREATE TRIGGER IF NOT EXISTS {prefix}_delete AFTER DELETE ON messages BEGIN
    DELETE FROM {table} WHERE rowid = old.id;
END;
CREATE TRIGGER IF NOT EXISTS {prefix}_update AFTER UPDATE ON messages BEGIN
    DELETE FROM {table} WHERE rowid = old.id;
    INSERT INTO {table}(rowid, content) VALUES (new.id, {_INDEXED});
END;
"""


_FTS = _fts("messages_fts", "", "messages_fts")
_FTS_TRIGRAM = _fts("messages_fts_trigram", ", tokenize='trigram'", "messages_fts_trigram")


def create_schema(conn: sqlite3.Connection) -> tuple[bool, bool]:
    """Create what is missing (every statement safe to run at once from several processes); whether the word
    index and the trigram index (substring search of CJK text) are usable."""
    conn.executescript(_TABLES)
    _add_missing_columns(conn)
    conn.execute("INSERT INTO schema_version (version) SELECT ? WHERE NOT EXISTS (SELECT 1 FROM schema_version)",
                 (SCHEMA_VERSION,))
    words = _try(conn, _FTS, "messages_fts")
    trigram = words and _try(conn, _FTS_TRIGRAM, "messages_fts_trigram")
    return words, trigram


def _add_missing_columns(conn: sqlite3.Connection) -> None:
    """A database an older Hermes Agent made may lack columns Hermes reads: add them (as Hermes Agent's column
    reconciliation does when it opens the file)."""
    for table, wanted in (("messages", {"active": "INTEGER NOT NULL DEFAULT 1",
                                        "compacted": "INTEGER NOT NULL DEFAULT 0", "tool_name": "TEXT"}),
                          ("sessions", {"title": "TEXT", "archived": "INTEGER NOT NULL DEFAULT 0"})):
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        for column, kind in wanted.items():
            if column not in present:
                try:
                    conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
                except sqlite3.OperationalError as exc:  # another process added it first
                    if "duplicate column" not in str(exc):
                        raise


def _try(conn: sqlite3.Connection, script: str, table: str) -> bool:
    try:
        conn.executescript(script)
    except sqlite3.OperationalError as exc:  # an SQLite built without FTS5, or without the trigram tokenizer
        log.warning("state.db: the full-text index %s is unavailable (%s); search falls back to a plain scan",
                    table, exc)
        return False
    return True

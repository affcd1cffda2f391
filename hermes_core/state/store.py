"""``SessionStore``: the sessions and messages of one home in ``state.db``, in Hermes Agent's schema.

WAL mode; every write is one ``BEGIN IMMEDIATE`` transaction under the store's lock (one writer per store in a
process), retried with a random pause while another process holds SQLite's write lock, so concurrent writers in
threads and processes never lose a message. What is recorded is capped in size and has its secrets masked first.
On a network filesystem, where SQLite's WAL locking does not hold, use one store per host (docs/deploy.md).
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, TypeVar

from ..errors import SessionStoreError
from .fts import cjk_terms, count_cjk, fts_query, has_cjk
from .redact import redact_secrets
from .schema import create_schema

__all__ = ["DEFAULT_SOURCE", "SessionStore", "SessionStoreError"]

log = logging.getLogger(__name__)
T = TypeVar("T")

#: The ``source`` of a session a host did not name (Hermes Agent hides ``tool`` and ``subagent`` sessions).
DEFAULT_SOURCE: Final = "hermes"
#: Hermes Agent's marker for content that is a JSON list or object (multimodal parts), not text.
_JSON_PREFIX: Final = "\x00json:"
_RETRIES: Final = 40
_TODO_KEY: Final = "hermes.todo."
_ROLES: Final = frozenset({"system", "user", "assistant", "tool", "developer", "function"})


class SessionStore:
    """One ``state.db``. Thread-safe; several processes may open the same file (WAL).

    ``max_message_chars`` caps each recorded text (content, tool call arguments); ``redact`` masks secrets in it;
    ``read_only`` opens an existing database without taking any lock or creating anything (another profile's).
    """

    def __init__(self, path: Path, *, max_message_chars: int = 100_000, redact: bool = True,
                 read_only: bool = False) -> None:
        self.path = path
        self.max_message_chars = max_message_chars
        self.redact = redact
        self.read_only = read_only
        self._lock = threading.Lock()
        if read_only:
            self._conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False, timeout=5.0,
                                         isolation_level=None)
            self.fts = self.trigram = True
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(path), check_same_thread=False, timeout=5.0, isolation_level=None)
            self._journal()
            self.fts, self.trigram = self._retrying(lambda: create_schema(self._conn))
        self._conn.row_factory = sqlite3.Row

    def _journal(self) -> None:
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
        except sqlite3.OperationalError as exc:  # a network filesystem: the slower rollback journal still works
            log.warning("state.db: WAL mode is unavailable (%s); using a rollback journal", exc)
            self._conn.execute("PRAGMA journal_mode=DELETE")
        self._conn.execute("PRAGMA synchronous=NORMAL")

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    # -- writing ------------------------------------------------------------------------------------

    def _retrying(self, work: Callable[[], T]) -> T:
        """Run ``work`` under the lock, retrying while SQLite says another connection holds the database."""
        for attempt in range(_RETRIES):
            try:
                with self._lock:
                    return work()
            except sqlite3.OperationalError as exc:
                if ("locked" not in str(exc) and "busy" not in str(exc)) or attempt == _RETRIES - 1:
                    raise
            time.sleep(random.uniform(0.02, 0.15))  # jitter: competing writers do not retry in step
        raise AssertionError("unreachable")

    def _write(self, work: Callable[[sqlite3.Connection], T]) -> T:
        """``work`` in one write transaction (``BEGIN IMMEDIATE``: the write lock is taken at the start)."""
        if self.read_only:
            raise SessionStoreError(f"{self.path} is open read-only")

        def transaction() -> T:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                result = work(self._conn)
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            return result

        return self._retrying(transaction)

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(row) for row in self._conn.execute(sql, params).fetchall()]

    def ensure_session(self, session_id: str, source: str = DEFAULT_SOURCE, *, model: str | None = None,
                       title: str | None = None, parent_session_id: str | None = None,
                       cwd: str | None = None) -> str:
        """Create the session unless it exists (then fill in what it lacks); returns ``session_id``."""
        _check_id(session_id)

        self._write(lambda conn: _insert_session(conn, session_id, source, model, parent_session_id, cwd))
        if title and not (self.session(session_id) or {}).get("title"):
            self.set_title(session_id, title)
        return session_id

    def record(self, session_id: str, role: str, content: Any = None, *, tool_name: str | None = None,
               tool_calls: Any = None, tool_call_id: str | None = None, source: str = DEFAULT_SOURCE,
               model: str | None = None, finish_reason: str | None = None, reasoning: str | None = None,
               timestamp: float | None = None) -> int:
        """Append one message to the session (created when new); returns the message's id.

        ``role`` is ``user``, ``assistant``, ``tool`` or ``system``; ``content`` text, or a list of parts;
        ``tool_calls`` the assistant's calls as the model sent them (OpenAI's shape); ``tool_call_id`` and
        ``tool_name`` say which call a ``tool`` message answers."""
        return self.record_many(session_id, [{
            "role": role, "content": content, "tool_name": tool_name, "tool_calls": tool_calls,
            "tool_call_id": tool_call_id, "finish_reason": finish_reason, "reasoning": reasoning,
            "timestamp": timestamp}], source=source, model=model)[0]

    def record_many(self, session_id: str, messages: Iterable[Mapping[str, Any]], *, source: str = DEFAULT_SOURCE,
                    model: str | None = None) -> list[int]:
        """Append several messages in one transaction, in order; their ids."""
        _check_id(session_id)
        rows = [self._row(message) for message in messages]

        def work(conn: sqlite3.Connection) -> list[int]:
            _insert_session(conn, session_id, source, model, None, None)
            ids = []
            calls = 0
            for row in rows:
                cursor = conn.execute(
                    "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, "
                    "timestamp, finish_reason, reasoning, observed, active) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 1)",
                    (session_id, *row[:-1]))
                ids.append(int(cursor.lastrowid or 0))
                calls += row[-1]
            conn.execute("UPDATE sessions SET message_count = message_count + ?, tool_call_count = tool_call_count "
                         "+ ? WHERE id = ?", (len(rows), calls, session_id))
            return ids

        return self._write(work) if rows else []

    def _row(self, message: Mapping[str, Any]) -> tuple[Any, ...]:
        role = message.get("role")
        if role not in _ROLES:
            raise SessionStoreError(f"role must be one of {', '.join(sorted(_ROLES))}, not {role!r}")
        calls = message.get("tool_calls")
        stamp = message.get("timestamp")
        return (role, self._text(_encoded(message.get("content"))), message.get("tool_call_id"),
                self._text(json.dumps(calls, ensure_ascii=False, default=str)) if calls else None,
                message.get("tool_name"), float(stamp) if stamp is not None else time.time(),
                message.get("finish_reason"), self._text(message.get("reasoning")),
                len(calls) if isinstance(calls, list) else int(bool(calls)))

    def _text(self, text: str | None) -> str | None:
        """``text`` as stored: secrets masked, then cut to the cap with a marker saying how much was left out."""
        if not text:
            return text
        if self.redact:
            text = redact_secrets(text)
        if len(text) > self.max_message_chars:
            text = f"{text[:self.max_message_chars]}… [{len(text) - self.max_message_chars} more characters not " \
                   "recorded]"
        return _valid(text)

    def set_title(self, session_id: str, title: str | None) -> bool:
        """Name the session (titles are unique: False when another session has it, or there is no such session)."""
        cleaned = _title(title or "") or None

        def work(conn: sqlite3.Connection) -> bool:
            if cleaned and conn.execute("SELECT 1 FROM sessions WHERE title = ? AND id != ?",
                                        (cleaned, session_id)).fetchone():
                return False
            return conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (cleaned, session_id)).rowcount > 0

        return self._write(work)

    def end_session(self, session_id: str, reason: str = "ended") -> None:
        """Mark the session ended (it stays searchable)."""
        self._write(lambda conn: conn.execute("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND "
                                              "ended_at IS NULL", (time.time(), reason, session_id)))

    def delete_session(self, session_id: str) -> bool:
        """Delete a session, its messages and its todo list; False when there was none."""
        def work(conn: sqlite3.Connection) -> bool:
            conn.execute("DELETE FROM messages WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM state_meta WHERE key = ?", (_TODO_KEY + session_id,))
            conn.execute("UPDATE sessions SET parent_session_id = NULL WHERE parent_session_id = ?", (session_id,))
            return conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0

        return self._write(work)

    def prune(self, older_than_days: float, *, source: str | None = None) -> list[str]:
        """Delete the sessions whose last activity is older than ``older_than_days``; their ids."""
        cutoff = time.time() - older_than_days * 86400
        where = " AND s.source = ?" if source else ""
        rows = self._read(f"SELECT s.id FROM sessions s WHERE COALESCE((SELECT MAX(m.timestamp) FROM messages m "
                          f"WHERE m.session_id = s.id), s.started_at) < ?{where}",
                          (cutoff, source) if source else (cutoff,))
        return [row["id"] for row in rows if self.delete_session(row["id"])]

    # -- a session's todo list ----------------------------------------------------------------------

    def todo(self, session_id: str) -> list[dict[str, str]]:
        """The session's todo list as last written (empty when none)."""
        rows = self._read("SELECT value FROM state_meta WHERE key = ?", (_TODO_KEY + session_id,))
        return _todo_items(rows[0]["value"] if rows else None)

    def update_todo(self, session_id: str,
                    change: Callable[[list[dict[str, str]]], list[dict[str, str]]]) -> list[dict[str, str]]:
        """Replace the session's todo list with ``change(current)`` in one transaction (no write between the read
        and the write is lost); the new list."""
        _check_id(session_id)
        key = _TODO_KEY + session_id

        def work(conn: sqlite3.Connection) -> list[dict[str, str]]:
            row = conn.execute("SELECT value FROM state_meta WHERE key = ?", (key,)).fetchone()
            items = change(_todo_items(row[0] if row else None))
            conn.execute("INSERT OR REPLACE INTO state_meta (key, value) VALUES (?, ?)",
                         (key, json.dumps(items, ensure_ascii=False)))
            return items

        return self._write(work)

    # -- reading ------------------------------------------------------------------------------------

    def session(self, session_id: str) -> dict[str, Any] | None:
        rows = self._read("SELECT * FROM sessions WHERE id = ?", (session_id,))
        return rows[0] if rows else None

    def sessions(self, limit: int = 20, offset: int = 0, *, source: str | None = None,
                 exclude_sources: Iterable[str] = (), children: bool = True) -> list[dict[str, Any]]:
        """Sessions, the most recently active first, each with ``preview`` (its first user message, 60
        characters) and ``last_active``."""
        where, params = _session_filter(source, exclude_sources, children)
        rows = self._read(
            "SELECT s.*, COALESCE((SELECT SUBSTR(REPLACE(REPLACE(m.content, X'0A', ' '), X'0D', ' '), 1, 63) FROM "
            "messages m WHERE m.session_id = s.id AND m.role = 'user' AND m.content IS NOT NULL ORDER BY m.id LIMIT "
            "1), '') AS preview, COALESCE((SELECT MAX(m.timestamp) FROM messages m WHERE m.session_id = s.id), "
            f"s.started_at) AS last_active FROM sessions s {where} ORDER BY last_active DESC, s.started_at DESC "
            "LIMIT ? OFFSET ?", (*params, limit, offset))
        for row in rows:
            preview = row["preview"].strip()
            row["preview"] = preview[:60] + ("..." if len(preview) > 60 else "")
        return rows

    def session_count(self) -> int:
        return int(self._read("SELECT COUNT(*) AS n FROM sessions")[0]["n"])

    def messages(self, session_id: str, *, limit: int | None = None, offset: int = 0,
                 include_inactive: bool = False) -> list[dict[str, Any]]:
        """The session's messages in the order they were recorded (content and tool calls decoded)."""
        active = "" if include_inactive else " AND active = 1"
        rows = self._read(f"SELECT * FROM messages WHERE session_id = ?{active} ORDER BY id LIMIT ? OFFSET ?",
                          (session_id, -1 if limit is None else limit, offset))
        return [_decoded(row) for row in rows]

    def messages_around(self, session_id: str, message_id: int, window: int = 5) -> dict[str, Any]:
        """``window`` messages either side of ``message_id`` (and it), with how many of each side there were
        (fewer than ``window``: an end of the session); an empty window when the message is not the session's."""
        window = max(window, 0)
        with self._lock:
            if self._conn.execute("SELECT 1 FROM messages WHERE id = ? AND session_id = ?",
                                  (message_id, session_id)).fetchone() is None:
                return {"window": [], "messages_before": 0, "messages_after": 0}
            before = self._conn.execute("SELECT * FROM messages WHERE session_id = ? AND id <= ? ORDER BY id DESC "
                                        "LIMIT ?", (session_id, message_id, window + 1)).fetchall()
            after = self._conn.execute("SELECT * FROM messages WHERE session_id = ? AND id > ? ORDER BY id LIMIT ?",
                                       (session_id, message_id, window)).fetchall()
        return {"window": [_decoded(dict(row)) for row in [*reversed(before), *after]],
                "messages_before": max(0, len(before) - 1), "messages_after": len(after)}

    def anchored_view(self, session_id: str, message_id: int, window: int = 5, bookend: int = 3,
                      roles: tuple[str, ...] = ("user", "assistant")) -> dict[str, Any]:
        """:meth:`messages_around` kept to ``roles`` (the anchor always kept), with the session's first and last
        ``bookend`` messages of those roles outside the window: its goal and its resolution."""
        view = self.messages_around(session_id, message_id, window)
        rows = view["window"]
        if not rows:
            return {**view, "bookend_start": [], "bookend_end": []}
        marks = ",".join("?" * len(roles))
        start = self._read(f"SELECT * FROM messages WHERE session_id = ? AND id < ? AND role IN ({marks}) AND "
                           "length(content) > 0 ORDER BY id LIMIT ?", (session_id, rows[0]["id"], *roles, bookend))
        end = self._read(f"SELECT * FROM messages WHERE session_id = ? AND id > ? AND role IN ({marks}) AND "
                         "length(content) > 0 ORDER BY id DESC LIMIT ?", (session_id, rows[-1]["id"], *roles,
                                                                           bookend))
        return {"window": [row for row in rows if row["id"] == message_id or row["role"] in roles],
                "messages_before": view["messages_before"], "messages_after": view["messages_after"],
                "bookend_start": [_decoded(row) for row in start],
                "bookend_end": [_decoded(row) for row in reversed(end)]}

    def lineage_root(self, session_id: str) -> str:
        """The first ancestor of the session (its ``parent_session_id`` chain followed up)."""
        seen = {session_id}
        current = session_id
        while True:
            session = self.session(current)
            parent = session.get("parent_session_id") if session else None
            if not parent or parent in seen:
                return current
            seen.add(parent)
            current = parent

    def session_by_title(self, title: str) -> str | None:
        rows = self._read("SELECT id FROM sessions WHERE title = ? ORDER BY started_at DESC LIMIT 1", (title,))
        return rows[0]["id"] if rows else None

    def search(self, query: str, *, roles: Sequence[str] | None = None, exclude_sources: Sequence[str] = (),
               source: str | None = None, limit: int = 20, offset: int = 0,
               sort: str | None = None) -> list[dict[str, Any]]:
        """Messages matching ``query`` (FTS5 syntax: words, "phrases", OR, NOT, prefix*), best first (or by time,
        ``sort``: ``newest`` / ``oldest``); each with ``snippet`` (the match between ``>>>`` and ``<<<``), its
        session's ``source``, ``model`` and ``session_started``. Messages taken back (rewound) are left out."""
        expression = fts_query(query) if query and query.strip() else ""
        if not expression:
            return []
        filters, params = ["(m.active = 1 OR m.compacted = 1)"], []
        if source is not None:
            filters.append("s.source = ?")
            params.append(source)
        if exclude_sources:
            filters.append(f"s.source NOT IN ({','.join('?' * len(exclude_sources))})")
            params.extend(exclude_sources)
        if roles:
            filters.append(f"m.role IN ({','.join('?' * len(roles))})")
            params.extend(roles)
        order = {"newest": "m.timestamp DESC, rank", "oldest": "m.timestamp ASC, rank"}.get(sort or "", "rank")
        if has_cjk(expression):
            return self._search_cjk(expression, filters, params, order, limit, offset)
        if not self.fts:
            return self._search_like([expression], filters, params, limit, offset)
        return self._matches("messages_fts", expression, filters, params, order, limit, offset)

    def _matches(self, table: str, expression: str, filters: list[str], params: list[Any], order: str, limit: int,
                 offset: int) -> list[dict[str, Any]]:
        sql = (f"SELECT m.id, m.session_id, m.role, snippet({table}, 0, '>>>', '<<<', '...', 40) AS snippet, "
               "m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started "
               f"FROM {table} JOIN messages m ON m.id = {table}.rowid JOIN sessions s ON s.id = m.session_id "
               f"WHERE {table} MATCH ? AND {' AND '.join(filters)} ORDER BY {order} LIMIT ? OFFSET ?")
        try:
            return self._read(sql, (expression, *params, limit, offset))
        except sqlite3.OperationalError as exc:  # what the sanitiser let through and FTS5 still refuses
            log.debug("search %r failed: %s", expression, exc)
            return []

    def _search_cjk(self, expression: str, filters: list[str], params: list[Any], order: str, limit: int,
                    offset: int) -> list[dict[str, Any]]:
        """Chinese, Japanese, Korean: the trigram index for terms of three characters or more, else a scan."""
        terms = cjk_terms(expression)
        if self.trigram and all(count_cjk(term) >= 3 for term in terms if has_cjk(term)) and count_cjk(expression) >= 3:
            quoted = " ".join(term if term.upper() in ("AND", "OR", "NOT") else '"' + term.replace('"', '""') + '"'
                              for term in expression.strip('"').split())
            return self._matches("messages_fts_trigram", quoted, filters, params, order, limit, offset)
        return self._search_like(terms, filters, params, limit, offset)

    def _search_like(self, terms: list[str], filters: list[str], params: list[Any], limit: int,
                     offset: int) -> list[dict[str, Any]]:
        likes = []
        values: list[Any] = []
        for term in terms:
            escaped = "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            likes.append("(m.content LIKE ? ESCAPE '\\' OR m.tool_name LIKE ? ESCAPE '\\' OR m.tool_calls LIKE ? "
                         "ESCAPE '\\')")
            values += [escaped] * 3
        sql = ("SELECT m.id, m.session_id, m.role, substr(m.content, max(1, instr(m.content, ?) - 40), 120) AS "
               "snippet, m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started FROM messages m "
               f"JOIN sessions s ON s.id = m.session_id WHERE ({' OR '.join(likes)}) AND {' AND '.join(filters)} "
               "ORDER BY m.timestamp DESC LIMIT ? OFFSET ?")
        return self._read(sql, (terms[0], *values, *params, limit, offset))

    def export(self, session_id: str) -> dict[str, Any] | None:
        """The session and all its messages, as Hermes Agent's ``export_session`` gives them."""
        session = self.session(session_id)
        return None if session is None else {**session, "messages": self.messages(session_id, include_inactive=True)}


def _insert_session(conn: sqlite3.Connection, session_id: str, source: str, model: str | None,
                    parent: str | None, cwd: str | None) -> None:
    conn.execute("INSERT INTO sessions (id, source, model, parent_session_id, cwd, started_at) VALUES (?, ?, ?, ?, "
                 "?, ?) ON CONFLICT(id) DO UPDATE SET model = COALESCE(sessions.model, excluded.model), "
                 "parent_session_id = COALESCE(sessions.parent_session_id, excluded.parent_session_id), "
                 "cwd = COALESCE(sessions.cwd, excluded.cwd)",
                 (session_id, source or DEFAULT_SOURCE, model, parent, cwd, time.time()))


def _session_filter(source: str | None, exclude: Iterable[str], children: bool) -> tuple[str, list[Any]]:
    clauses, params = [], []
    if source is not None:
        clauses.append("s.source = ?")
        params.append(source)
    excluded = list(exclude)
    if excluded:
        clauses.append(f"s.source NOT IN ({','.join('?' * len(excluded))})")
        params.extend(excluded)
    if not children:
        clauses.append("s.parent_session_id IS NULL")
    return ("WHERE " + " AND ".join(clauses)) if clauses else "", params


def _todo_items(value: str | None) -> list[dict[str, str]]:
    try:
        items = json.loads(value) if value else []
    except ValueError:
        return []
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []


def _check_id(session_id: Any) -> None:
    if not isinstance(session_id, str) or not session_id.strip() or len(session_id) > 256:
        raise SessionStoreError(f"a session id is text of 1 to 256 characters, not {session_id!r:.80}")


def _title(title: str) -> str:
    return " ".join(title.split())[:100]


def _encoded(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    return _JSON_PREFIX + json.dumps(content, ensure_ascii=False, default=str)


def _valid(text: str) -> str:
    """Lone surrogates (from text scraped off the web) cannot be stored: they become U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    return text


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    content = row.get("content")
    if isinstance(content, str) and content.startswith(_JSON_PREFIX):
        with contextlib.suppress(ValueError):
            row["content"] = json.loads(content[len(_JSON_PREFIX):])
    if row.get("tool_calls"):
        try:
            row["tool_calls"] = json.loads(row["tool_calls"])
        except ValueError:
            row["tool_calls"] = []
    return row

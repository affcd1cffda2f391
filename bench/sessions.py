"""The session store and the state tools, as ratios against a floor measured in the same run:

- recording one message (``runtime.sessions.record``) against the same SQLite statements run directly on a
  connection of the same file (the session upsert, the insert, the counter update, in one transaction)
  (target ≤ 1.3 ×);
- searching 100 000 messages (``runtime.sessions.search``) against the same FTS5 statement run directly
  (target ≤ 1.3 ×), and the whole ``session_search`` tool call (search, lineage, windows, bookends) beside it;
- the dispatch overhead of ``todo`` (read) and ``memory`` (an add of an entry that exists: both locks, one read)
  beside a no-op tool.

Run: python bench/sessions.py   (prints figures; asserts nothing)
"""

from __future__ import annotations

import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from hermes_core import Runtime

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "hermes_plugins" / "agent"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from dispatch import best_of

MESSAGES = 100_000
PER_SESSION = 100
WORDS = ("deploy", "staging", "cluster", "docker", "network", "kubernetes", "migration", "billing", "postgres",
         "replica", "backup", "queue", "worker", "latency", "cache", "invoice", "rollout", "canary", "secret",
         "rotation", "friday", "schema", "index", "vacuum")


def fill(path: Path) -> None:
    """100 000 messages of random words in 1 000 sessions, written in one transaction (the setup, not measured)."""
    rng = random.Random(39)
    sessions = MESSAGES // PER_SESSION
    with sqlite3.connect(str(path)) as conn:
        conn.executemany("INSERT INTO sessions (id, source, started_at, message_count) VALUES (?, 'cli', ?, ?)",
                         [(f"bench-{s:04d}", 1_700_000_000 + s * PER_SESSION, PER_SESSION) for s in range(sessions)])
        conn.executemany("INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)",
                         [(f"bench-{s:04d}", "user" if n % 2 == 0 else "assistant",
                           " ".join(rng.choices(WORDS, k=12)), 1_700_000_000 + s * PER_SESSION + n)
                          for s in range(sessions) for n in range(PER_SESSION)])


def direct_record(path: Path) -> tuple[sqlite3.Connection, object]:
    conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA synchronous=NORMAL")

    def record() -> None:
        conn.execute("BEGIN IMMEDIATE")
        now = time.time()
        conn.execute("INSERT INTO sessions (id, source, model, parent_session_id, cwd, started_at) VALUES (?, ?, ?, "
                     "?, ?, ?) ON CONFLICT(id) DO UPDATE SET model = COALESCE(sessions.model, excluded.model), "
                     "parent_session_id = COALESCE(sessions.parent_session_id, excluded.parent_session_id), "
                     "cwd = COALESCE(sessions.cwd, excluded.cwd)", ("direct", "hermes", None, None, None, now))
        conn.execute("INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, "
                     "finish_reason, reasoning, observed, active) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 1)",
                     ("direct", "user", "the canary rollout is done", None, None, None, now, None, None))
        conn.execute("UPDATE sessions SET message_count = message_count + ?, tool_call_count = tool_call_count + ? "
                     "WHERE id = ?", (1, 0, "direct"))
        conn.execute("COMMIT")

    return conn, record


SEARCH_SQL = ("SELECT m.id, m.session_id, m.role, snippet(messages_fts, 0, '>>>', '<<<', '...', 40) AS snippet, "
              "m.timestamp, m.tool_name, s.source, s.model, s.started_at AS session_started FROM messages_fts JOIN "
              "messages m ON m.id = messages_fts.rowid JOIN sessions s ON s.id = m.session_id WHERE messages_fts "
              "MATCH ? AND (m.active = 1 OR m.compacted = 1) AND s.source NOT IN (?,?) AND m.role IN (?,?) "
              "ORDER BY rank LIMIT ? OFFSET ?")


def main() -> None:
    home = Path(tempfile.mkdtemp(prefix="hermes-bench-sessions-"))
    runtime = Runtime(home=home, entry_points=())
    runtime.load_plugin_from_path(Path(__file__).resolve().parents[1] / "hermes_plugins" / "agent" /
                                  "hermes_plugin_agent", "agent")
    runtime.register_tool("noop", "bench", {"description": "Do nothing", "parameters": {"type": "object"}},
                          lambda args, **kwargs: "{}")
    started = time.perf_counter()
    fill(runtime.sessions.path)
    print(f"filled {MESSAGES:,} messages in {time.perf_counter() - started:.1f} s")
    store = runtime.sessions
    conn, record_directly = direct_record(store.path)
    query = '"canary rollout" friday'
    direct_args = ("\"canary rollout\" friday", "subagent", "tool", "user", "assistant", 300, 0)
    runtime.memory.add("memory", "the bench entry")
    calls = {"noop": {}, "todo": {}, "memory": {"action": "add", "target": "memory", "content": "the bench entry"}}
    for name, args in calls.items():
        runtime.handle_function_call(name, args, session_id="bench-calls")
    times = best_of({
        "record direct": (record_directly, 200),
        "record": (lambda: store.record("bench-record", "user", "the canary rollout is done"), 200),
        "search direct": (lambda: conn.execute(SEARCH_SQL, direct_args).fetchall(), 20),
        "search": (lambda: store.search(query, roles=["user", "assistant"], exclude_sources=("subagent", "tool"),
                                        limit=300), 20),
        "session_search tool": (lambda: runtime.handle_function_call("session_search", {"query": query}), 20),
        **{f"{name} call": (lambda n=name, a=args: runtime.handle_function_call(n, a, session_id="bench-calls"),
                            200) for name, args in calls.items()},
    }, rounds=7)
    us = {name: seconds * 1e6 for name, seconds in times.items()}
    print(f"record a message:        {us['record']:8.1f} µs, the statements directly {us['record direct']:8.1f} µs: "
          f"{us['record'] / us['record direct']:.2f} × (target ≤ 1.3 ×)")
    print(f"search {MESSAGES:,} messages: {us['search']:8.1f} µs, the statement directly "
          f"{us['search direct']:8.1f} µs: "
          f"{us['search'] / us['search direct']:.2f} × (target ≤ 1.3 ×)")
    print(f"session_search tool call: {us['session_search tool']:8.1f} µs (search, lineage, windows and bookends of 3 "
          f"sessions): {us['session_search tool'] / us['search direct']:.2f} × the search statement")
    for name in ("todo", "memory"):
        print(f"{name} call:  {us[f'{name} call']:8.1f} µs beside a no-op tool's {us['noop call']:8.1f} µs: "
              f"+{us[f'{name} call'] - us['noop call']:.1f} µs")
    conn.close()
    runtime.close()


if __name__ == "__main__":
    main()

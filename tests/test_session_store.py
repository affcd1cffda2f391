"""The session store: ``state.db`` in Hermes Agent's schema, what is recorded (capped, secrets masked), full-text
search over hostile queries, and writers in threads and processes that lose nothing."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
import threading
from pathlib import Path

import pytest

from hermes_core.errors import SessionStoreError
from hermes_core.state.fts import fts_query
from hermes_core.state.redact import redact_secrets
from hermes_core.state.schema import SCHEMA_VERSION
from hermes_core.state.store import SessionStore


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    made = SessionStore(tmp_path / "state.db")
    yield made
    made.close()


def conversation(store: SessionStore) -> None:
    store.record("s1", "user", "How do I configure docker networking for the staging cluster?")
    store.record("s1", "assistant", None, tool_calls=[{"id": "c1", "type": "function", "function": {
        "name": "terminal", "arguments": '{"command": "docker network ls"}'}}])
    store.record("s1", "tool", "bridge host none", tool_name="terminal", tool_call_id="c1")
    store.record("s1", "assistant", "Use a user-defined bridge network.")
    store.record("s2", "user", "Plan the kubernetes migration", source="cli")


def test_the_database_has_hermes_agents_tables_triggers_and_version(store):
    conn = sqlite3.connect(store.path)
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_master")}
    assert {"sessions", "messages", "schema_version", "state_meta", "messages_fts", "messages_fts_trigram",
            "messages_fts_insert", "messages_fts_delete", "messages_fts_update", "messages_fts_trigram_insert",
            "messages_fts_trigram_delete", "messages_fts_trigram_update"} <= names
    assert conn.execute("SELECT version FROM schema_version").fetchall() == [(SCHEMA_VERSION,)]
    assert conn.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    columns = {row[1] for row in conn.execute("PRAGMA table_info(messages)")}
    assert {"tool_calls", "tool_name", "active", "compacted", "api_content", "reasoning_details"} <= columns


def test_recording_counts_messages_and_tool_calls_per_session(store):
    conversation(store)
    s1 = store.session("s1")
    assert (s1["message_count"], s1["tool_call_count"], s1["source"]) == (4, 1, "hermes")
    assert store.session("s2")["source"] == "cli"
    assert [m["role"] for m in store.messages("s1")] == ["user", "assistant", "tool", "assistant"]
    assert store.messages("s1")[1]["tool_calls"][0]["function"]["name"] == "terminal"


def test_search_finds_content_tool_names_and_call_arguments_with_a_snippet(store):
    conversation(store)
    assert [(m["session_id"], m["role"]) for m in store.search("staging")] == [("s1", "user")]
    assert ">>>docker network<<<" in store.search('"docker network" ls')[0]["snippet"]
    assert {m["role"] for m in store.search("terminal")} == {"assistant", "tool"}
    assert [m["session_id"] for m in store.search("kubernetes", roles=["user"])] == ["s2"]
    assert store.search("kubernetes", exclude_sources=["cli"]) == []


def test_search_by_time_and_prefix(store):
    for number in range(3):
        store.record(f"t{number}", "user", f"deployment step {number}", timestamp=1000.0 + number)
    assert [m["session_id"] for m in store.search("deploy*", sort="newest")] == ["t2", "t1", "t0"]
    assert [m["session_id"] for m in store.search("deploy*", sort="oldest")] == ["t0", "t1", "t2"]


def test_cjk_text_is_found_by_substring(store):
    store.record("zh", "user", "大别山项目的进度怎么样")
    assert [m["session_id"] for m in store.search("大别山")] == ["zh"]
    assert [m["session_id"] for m in store.search("进度")] == ["zh"]  # two characters: a plain scan


@pytest.mark.parametrize("query", ['"unbalanced', "(group", "content:secret", "NOT", "AND OR", "a^b", "***",
                                   "col:x OR (y", "x" * 10_000, "chat-send", "P2.2", "{}"])
def test_a_hostile_query_never_raises(store, query):
    conversation(store)
    assert isinstance(store.search(query), list)


def test_the_query_keeps_phrases_and_operators_and_quotes_dotted_words():
    assert fts_query('"exact phrase" OR deploy*') == '"exact phrase" OR deploy*'
    assert fts_query("chat-send P2.2") == '"chat-send" "P2.2"'
    assert fts_query("TODO: fix (it)") == "TODO  fix  it"
    assert fts_query("OR alpha AND") == "alpha"


def test_the_window_around_a_message_and_the_sessions_bookends(store):
    for number in range(20):
        store.record("long", "user" if number % 2 == 0 else "assistant", f"message number {number}")
    view = store.anchored_view("long", 10, window=2, bookend=3)
    assert [m["id"] for m in view["window"]] == [8, 9, 10, 11, 12]
    assert (view["messages_before"], view["messages_after"]) == (2, 2)
    assert [m["id"] for m in view["bookend_start"]] == [1, 2, 3]
    assert [m["id"] for m in view["bookend_end"]] == [18, 19, 20]
    assert store.messages_around("long", 999)["window"] == []


def test_sessions_are_listed_most_recent_first_with_a_preview(store):
    conversation(store)
    listed = store.sessions()
    assert [s["id"] for s in listed] == ["s2", "s1"]
    assert listed[1]["preview"] == "How do I configure docker networking for the staging cluster..."


def test_secrets_are_masked_before_they_are_stored(store):
    secrets = ["sk-proj-abcdefghijklmnopqrstuv", "ghp_abcdefghijklmnopqrstuvwxyz0123", "hunter2hunter2",
               "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.sig", "AKIAABCDEFGHIJKLMNOP", "s3cr3tvalue99"]
    store.record("leak", "tool", f"key {secrets[0]} and token {secrets[1]}\nDB_PASSWORD={secrets[2]}\n"
                                 f"Authorization: Bearer {secrets[3]}\n{secrets[4]}\n"
                                 f'{{"api_key": "{secrets[5]}"}}\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n'
                                 "-----END RSA PRIVATE KEY-----\npostgres://app:pa55word@db/x", tool_name="terminal")
    store.record("leak", "assistant", None, tool_calls=[{"id": "c", "function": {
        "name": "web_extract", "arguments": json.dumps({"url": "https://x/?q=1", "token": secrets[1]})}}])
    raw = Path(store.path).read_bytes() + b"".join(p.read_bytes() for p in store.path.parent.glob("state.db-*"))
    for secret in [*secrets, "pa55word", "MIIE"]:
        assert secret.encode() not in raw, secret
    assert "«redacted" in store.messages("leak")[0]["content"]


def test_redaction_leaves_ordinary_text_alone():
    text = "The password rules: at least 12 characters. Set TOKEN_LIMIT in the docs; see os.environ['API_KEY']."
    assert redact_secrets(text) == text


def test_long_messages_are_cut_with_a_marker(tmp_path):
    store = SessionStore(tmp_path / "state.db", max_message_chars=100)
    store.record("big", "tool", "x" * 1000)
    assert store.messages("big")[0]["content"] == "x" * 100 + "… [900 more characters not recorded]"


@pytest.mark.parametrize(("session", "role"), [("s", "robot"), ("", "user"), (None, "user"), ("x" * 300, "user")])
def test_a_bad_role_or_session_id_is_refused(store, session, role):
    with pytest.raises(SessionStoreError):
        store.record(session, role, "text")
    assert store.session_count() == 0


def test_multimodal_content_round_trips(store):
    parts = [{"type": "text", "text": "look at this"}, {"type": "image_url", "image_url": {"url": "data:..."}}]
    store.record("mm", "user", parts)
    assert store.messages("mm")[0]["content"] == parts


def test_export_prune_and_delete(store):
    conversation(store)
    store.record("old", "user", "ancient history", timestamp=1.0)
    store.update_todo("old", lambda items: [{"id": "1", "content": "x", "status": "pending"}])
    assert store.export("s1")["messages"][0]["content"].startswith("How do I")
    with sqlite3.connect(store.path) as conn:
        conn.execute("UPDATE sessions SET started_at = 1.0 WHERE id = 'old'")
    assert store.prune(30) == ["old"]
    assert store.session("old") is None and store.todo("old") == [] and store.search("ancient") == []
    assert store.delete_session("s2") and not store.delete_session("s2")


def test_a_read_only_store_reads_and_refuses_writes(store, tmp_path):
    conversation(store)
    reader = SessionStore(store.path, read_only=True)
    assert [m["session_id"] for m in reader.search("staging")] == ["s1"]
    with pytest.raises(SessionStoreError, match="read-only"):
        reader.record("s1", "user", "more")
    reader.close()


def test_threads_writing_at_once_lose_nothing(store):
    def write(worker: int) -> None:
        for number in range(100):
            store.record(f"thread-{worker}", "user", f"thread {worker} message {number}")

    threads = [threading.Thread(target=write, args=(worker,)) for worker in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(s["message_count"] for s in store.sessions(100)) == 800
    assert len(store.search("message")) == 20  # the default limit; the index holds all of them
    assert len(store.search("message", limit=1000)) == 800


def _record_in_a_process(path: str, worker: int, count: int) -> None:
    store = SessionStore(Path(path))
    for number in range(count):
        store.record(f"process-{worker}", "user", f"process {worker} message {number}")
    store.close()


def test_four_processes_times_200_recorded_messages_lose_nothing(tmp_path):
    path = tmp_path / "state.db"
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_record_in_a_process, args=(str(path), worker, 200)) for worker in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert [worker.exitcode for worker in workers] == [0, 0, 0, 0]
    store = SessionStore(path)
    assert sorted((s["id"], s["message_count"]) for s in store.sessions()) == [(f"process-{n}", 200)
                                                                               for n in range(4)]
    assert len(store.search("process", limit=1000)) == 800
    ids = [m["id"] for worker in range(4) for m in store.messages(f"process-{worker}")]
    assert len(set(ids)) == 800

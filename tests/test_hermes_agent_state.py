"""A Hermes Agent home used as it is: Hermes Agent 0.19 itself (installed from PyPI in a venv of its own, driven
without a model) writes ``state.db``, ``MEMORY.md`` and ``USER.md``, and Hermes reads them (sessions searchable,
memories listed, the same prompt block); what Hermes writes, Hermes Agent's ``SessionDB``, ``session_search`` and
``MemoryStore`` read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import hermes_plugin_agent
import pytest

from hermes_core import Runtime

pytestmark = pytest.mark.network

WRITE = """
import json
from hermes_state import SessionDB
from tools.memory_tool import MemoryStore, memory_tool

db = SessionDB()
db.create_session("ha-1", "cli", model="ha-model")
db.append_message("ha-1", "user", "Which database did we pick for invoices?")
db.append_message("ha-1", "assistant", None, tool_calls=[{"id": "t1", "type": "function", "function": {
    "name": "terminal", "arguments": json.dumps({"command": "grep -r CockroachDB docs/"})}}])
db.append_message("ha-1", "tool", "docs/adr-7.md: use CockroachDB", tool_name="terminal", tool_call_id="t1")
db.append_message("ha-1", "assistant", "We picked CockroachDB for invoices (ADR 7).")
db.set_session_title("ha-1", "Invoice database")
db.close()
store = MemoryStore()
store.load_from_disk()
added = [json.loads(memory_tool(action="add", target="user", content="The user is Ada, an SRE", store=store)),
         json.loads(memory_tool(action="add", target="memory", content="Invoices live in CockroachDB", store=store))]
fresh = MemoryStore()
fresh.load_from_disk()
print(json.dumps({"added": added, "blocks": [fresh.format_for_system_prompt("memory"),
                                             fresh.format_for_system_prompt("user")]}))
"""

READ = """
import json
from hermes_state import SessionDB
from tools.memory_tool import MemoryStore
from tools.session_search_tool import session_search

db = SessionDB()
store = MemoryStore()
store.load_from_disk()
print(json.dumps({
    "session": db.get_session("hermes-1"),
    "messages": db.get_messages("hermes-1"),
    "search": db.search_messages("zeppelin"),
    "listed": [s["id"] for s in db.list_sessions_rich()],
    "tool": json.loads(session_search(query="zeppelin", db=db)),
    "memory_block": store.format_for_system_prompt("memory"),
    "user_block": store.format_for_system_prompt("user"),
}, default=str))
"""


def run_agent(venv: Any, code: str, home: Path) -> Any:
    done = venv.run(venv.python, "-c", code, env={"HERMES_HOME": str(home)}, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def runtime_of(home: Path) -> Runtime:
    runtime = Runtime(home=home, entry_points=())
    runtime.load_plugin_from_path(Path(hermes_plugin_agent.__file__).parent, "agent")
    return runtime


def record_in_hermes(runtime: Runtime) -> None:
    runtime.sessions.ensure_session("hermes-1", "cli", model="local", title="Airship plans")
    runtime.sessions.record("hermes-1", "user", "Book the zeppelin tour for Friday")
    runtime.answer_tool_calls([{"id": "c1", "type": "function", "function": {
        "name": "todo", "arguments": json.dumps({"todos": [{"id": "1", "content": "book the zeppelin",
                                                            "status": "pending"}]})}}], session_id="hermes-1")
    runtime.sessions.record("hermes-1", "assistant", "The zeppelin tour is booked.")


def test_a_hermes_agent_home_is_read_as_it_is_and_hermes_agent_reads_what_hermes_adds(hermes_agent, tmp_path):
    home = tmp_path / "home"
    written = run_agent(hermes_agent, WRITE, home)
    assert [answer["success"] for answer in written["added"]] == [True, True]

    runtime = runtime_of(home)
    try:
        found = runtime.sessions.search("CockroachDB")
        assert {(m["session_id"], m["role"]) for m in found} == {("ha-1", "assistant"), ("ha-1", "tool")}
        tool = json.loads(runtime.handle_function_call("session_search", {"query": "invoices CockroachDB"},
                                                       session_id="another"))
        assert [r["session_id"] for r in tool["results"]] == ["ha-1"]
        assert tool["results"][0]["title"] == "Invoice database" and tool["results"][0]["model"] == "ha-model"
        titled = json.loads(runtime.handle_function_call("session_search", {"query": "Invoice database"}))
        assert titled["results"][0]["matched_role"] == "session_title"
        assert runtime.memory.entries("user") == ["The user is Ada, an SRE"]
        assert runtime.memory.entries("memory") == ["Invoices live in CockroachDB"]
        # the block Hermes puts in a system prompt is the one Hermes Agent builds from the same files
        assert runtime.memory_prompt() == "\n\n".join(written["blocks"])
        record_in_hermes(runtime)
        assert json.loads(runtime.handle_function_call("memory", {"action": "add", "target": "memory",
                                                                  "content": "Zeppelins leave from hangar 3"}))[
            "success"]
    finally:
        runtime.close()

    seen = run_agent(hermes_agent, READ, home)
    assert seen["session"]["title"] == "Airship plans" and seen["session"]["message_count"] == 4
    assert [m["role"] for m in seen["messages"]] == ["user", "assistant", "tool", "assistant"]
    assert seen["messages"][1]["tool_calls"][0]["function"]["name"] == "todo"
    assert {m["session_id"] for m in seen["search"]} == {"hermes-1"}
    assert seen["listed"][:2] == ["hermes-1", "ha-1"]
    assert [r["session_id"] for r in seen["tool"]["results"]] == ["hermes-1"]
    assert seen["memory_block"].endswith("Invoices live in CockroachDB\n§\nZeppelins leave from hangar 3")


def test_a_state_db_hermes_creates_is_opened_by_hermes_agent(hermes_agent, tmp_path):
    home = tmp_path / "fresh"
    runtime = runtime_of(home)
    try:
        record_in_hermes(runtime)
        runtime.memory.add("memory", "Hermes wrote this first")
    finally:
        runtime.close()
    seen = run_agent(hermes_agent, READ, home)
    assert [m["content"] for m in seen["messages"] if m["role"] == "user"] == ["Book the zeppelin tour for Friday"]
    assert [r["session_id"] for r in seen["tool"]["results"]] == ["hermes-1"]
    assert "Hermes wrote this first" in seen["memory_block"]
    again = Runtime(home=home, entry_points=())  # and Hermes reads the file after Hermes Agent upgraded it
    try:
        assert [m["session_id"] for m in again.sessions.search("zeppelin")][:1] == ["hermes-1"]
    finally:
        again.close()


def test_a_published_memory_provider_plugin_loads_and_runs(make_venv, package_index, tmp_path):
    """hermes-local-memory 0.3.1 from PyPI: its installer writes a shim into the home's plugins folder that calls
    ``ctx.register_memory_provider``; with ``memory.provider: local`` its tools are offered and its prompt block is
    in ``memory_prompt()``, and a fact it stores in one process is found from another."""
    venv = make_venv("local-memory")
    venv.install("hermes-tools-agent", extra=("--no-deps",))
    installed = venv.run(venv.python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                         "hermes-local-memory==0.3.1", timeout=600)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    home = tmp_path / "home"
    env = {"HERMES_HOME": str(home)}
    shim = venv.run(str(Path(venv.python).parent / "hermes-local-memory"), "install-shim", "--hermes-home",
                    str(home), env=env)
    assert shim.returncode == 0, shim.stdout + shim.stderr
    (home / "config.yaml").write_text("memory:\n  provider: local\n")

    listed = venv.hermes_cli("plugins", "list", "--json", env=env)
    record = next(r for r in json.loads(listed.stdout) if r["id"] == "local_memory")
    assert record["state"] == "loaded" and record["memory_providers"] == ["local"]
    assert {"memory_conclude", "memory_search"} <= set(record["tools"])
    stored = venv.hermes_cli("tools", "call", "memory_conclude", '{"content": "Ada prefers metric units"}', env=env)
    assert json.loads(stored.stdout)["success"] is True, stored.stdout + stored.stderr
    found = venv.hermes_cli("tools", "call", "memory_search", '{"query": "metric"}', env=env)
    assert [fact["content"] for fact in json.loads(found.stdout)["results"]] == ["Ada prefers metric units"]
    prompt = venv.py("from hermes_core import Runtime; r = Runtime(); r.load_plugins(); print(r.memory_prompt())",
                     env=env)
    assert "# Local Memory" in prompt.stdout, prompt.stdout + prompt.stderr

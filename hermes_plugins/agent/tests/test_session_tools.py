"""``sessions_list``, ``sessions_history`` and ``sessions_send`` over a real ``state.db`` in the test's home."""

from __future__ import annotations

import json
from typing import Any

from hermes_core import Runtime


def call(runtime: Runtime, name: str, args: dict[str, Any], session: str = "here") -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(runtime.handle_function_call(name, args, session_id=session))
    return answer


def seeded(agent_runtime: Any) -> Runtime:
    runtime = agent_runtime({})
    store = runtime.agent_state.sessions
    store.record("here", "user", "what is up")
    store.record("there", "user", "plan the trip")
    store.record("there", "assistant", "x" * 5000)
    store.record("hidden", "user", "a sub-agent's work", source="subagent")
    return runtime


def test_list_and_history(agent_runtime):
    runtime = seeded(agent_runtime)
    listed = {row["session_id"]: row for row in call(runtime, "sessions_list", {})["sessions"]}
    assert set(listed) == {"here", "there"}  # sub-agents' sessions are not the user's
    assert listed["here"]["current"] and not listed["there"]["current"]
    assert listed["there"]["preview"] == "plan the trip"
    history = call(runtime, "sessions_history", {"session_id": "there", "limit": 1})
    assert history["total_messages"] == 2
    [message] = history["messages"]
    assert message["role"] == "assistant" and message["content"].endswith("[... 1000 more characters]")
    assert "No session 'nope'" in call(runtime, "sessions_history", {"session_id": "nope"})["error"]


def test_send_records_a_message_for_the_other_sessions_host(agent_runtime):
    runtime = seeded(agent_runtime)
    sent = call(runtime, "sessions_send", {"session_id": "there", "message": "the tickets are booked"})
    assert sent["sent"] is True
    last = runtime.agent_state.sessions.messages("there")[-1]
    assert last["id"] == sent["message_id"] and last["role"] == "user"
    assert last["content"] == "[message from session here]\nthe tickets are booked"


def test_send_refuses_what_it_cannot_deliver(agent_runtime):
    runtime = seeded(agent_runtime)
    before = len(runtime.agent_state.sessions.messages("there"))
    assert "No session 'ghost'" in call(runtime, "sessions_send", {"session_id": "ghost", "message": "hi"})["error"]
    assert "this session" in call(runtime, "sessions_send", {"session_id": "here", "message": "hi"})["error"]
    assert "at most 4000" in call(runtime, "sessions_send", {"session_id": "there", "message": "y" * 4001})["error"]
    assert "'message' is required" in call(runtime, "sessions_send", {"session_id": "there", "message": " "})["error"]
    assert runtime.agent_state.sessions.session("ghost") is None
    assert len(runtime.agent_state.sessions.messages("there")) == before

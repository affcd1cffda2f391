"""Background sub-agents (``delegate_task`` with ``background: true``, ``spawn_agent``, ``subagent_list``,
``subagent_status``): the real ``openai`` client against a scripted endpoint on 127.0.0.1 held at a gate, durable
records in the home's ``state.db``, a real subprocess killed mid-run, and each completion delivered exactly once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout

fakes = sys.modules["hermes_fake_provider"]  # loaded by conftest.py
AGENT = ("hermes_plugin_agent", "agent")


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "test-key")


def delegation(fake: Any, **settings: Any) -> dict[str, Any]:
    return {"delegation": {"base_url": f"{fake.url}/v1", "model": "fake-model", "api_key_env": "FAKE_KEY",
                           **settings}}


class Gate:
    """Holds every model request of ``fake`` until opened; ``arrived`` is set by the first one."""

    def __init__(self, fake: Any) -> None:
        self.open, self.arrived = threading.Event(), threading.Event()
        answer = fake.answer

        def gated(path: str, body: dict[str, Any]) -> dict[str, Any]:
            self.arrived.set()
            self.open.wait(scaled_timeout(60.0))
            return answer(path, body)

        fake.answer = gated


def call(runtime: Runtime, name: str, args: dict[str, Any], session: str = "s1") -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(runtime.handle_function_call(name, args, session_id=session))
    return answer


def ping(runtime: Runtime, session: str = "s1") -> str:
    """One tool call answered for ``session`` the way an agent loop answers them; the reply's content."""
    [reply] = runtime.answer_tool_calls([{"id": "c1", "type": "function",
                                          "function": {"name": "ping", "arguments": "{}"}}], session_id=session)
    return str(reply["content"])


def with_tools(runtime: Runtime) -> Runtime:
    runtime.register_tool("lookup", "lookup", {"description": "Look the answer up"},
                          lambda args, **kw: "the answer is 42", annotations={"read_only": True})
    runtime.register_tool("scribble", "lookup", {"description": "Write"}, lambda args, **kw: "written")
    runtime.register_tool("ping", "ping", {"description": "Ping"}, lambda args, **kw: "pong")
    return runtime


def wait_for_status(runtime: Runtime, run_id: str, wanted: str) -> dict[str, Any]:
    done = threading.Event()
    deadline = scaled_timeout(30.0)
    status: dict[str, Any] = {}
    for _ in range(int(deadline * 10)):
        status = runtime.background_runs.status(run_id, deliver=False) or {}
        if status.get("status") == wanted:
            return status
        done.wait(0.1)
    raise AssertionError(f"{run_id} never became {wanted}: {status}")


def test_delegate_in_the_background_returns_at_once_then_delivers_once(pack_runtime):
    with fakes.fake_provider([("lookup", {})]) as fake:
        gate = Gate(fake)
        runtime = with_tools(pack_runtime(delegation(fake), AGENT))
        dispatched = call(runtime, "delegate_task", {"goal": "Find the answer", "toolsets": ["lookup"],
                                                     "background": True})
        # it answered while the sub-agent's model request is still held at the gate
        assert dispatched["status"] == "dispatched" and dispatched["mode"] == "background"
        run_id = dispatched["delegation_id"]
        assert gate.arrived.wait(scaled_timeout(30.0)) and not gate.open.is_set()
        running = call(runtime, "subagent_status", {"runId": run_id})
        assert running["status"] == "running" and "result" not in running
        assert [run["runId"] for run in call(runtime, "subagent_list", {})["runs"]] == [run_id]
        assert ping(runtime) == "pong"  # nothing to deliver yet
        gate.open.set()
        wait_for_status(runtime, run_id, "completed")
    delivered = ping(runtime)
    assert delivered.startswith("pong\n\n[Background sub-agent run " + run_id + " finished: completed]")
    assert "Goal: Find the answer" in delivered and "the answer is 42" in delivered
    # exactly once: neither the next batch, another session nor subagent_status gets it again
    assert ping(runtime) == "pong" and ping(runtime, "s2") == "pong"
    status = call(runtime, "subagent_status", {"runId": run_id})
    assert status["status"] == "completed" and "the answer is 42" in status["result"]
    assert status["delivered"] == "earlier"


def test_subagent_status_delivers_first_and_the_host_callback_otherwise(pack_runtime):
    with fakes.fake_provider([("lookup", {})]) as fake:
        runtime = with_tools(pack_runtime(delegation(fake), AGENT))
        first = call(runtime, "spawn_agent", {"prompt": "Find it", "background": True, "tools": ["lookup"]})["runId"]
        wait_for_status(runtime, first, "completed")
        status = call(runtime, "subagent_status", {"runId": first})
        assert status["delivered"] == "now" and "the answer is 42" in status["result"]
        assert ping(runtime) == "pong"

        heard: list[dict[str, Any]] = []
        runtime.set_subagent_callback(heard.append)
        second = call(runtime, "spawn_agent", {"prompt": "Again", "background": True, "tools": ["lookup"]})["runId"]
        wait_for_status(runtime, second, "completed")
    for _ in range(int(scaled_timeout(30.0) * 10)):  # the callback runs just after the record is written
        if heard:
            break
        threading.Event().wait(0.1)
    assert [completion["delegation_id"] for completion in heard] == [second]
    assert "the answer is 42" in heard[0]["results"][0]["summary"]
    assert ping(runtime) == "pong" and call(runtime, "subagent_status", {"runId": second})["delivered"] == "earlier"


def test_spawn_agent_in_the_foreground_with_a_read_only_mode_and_bad_arguments(pack_runtime):
    with fakes.fake_provider([("lookup", {})]) as fake:
        runtime = with_tools(pack_runtime(delegation(fake), AGENT))
        result = call(runtime, "spawn_agent", {"prompt": "Find it", "tools": ["lookup"], "permissionMode": "plan"})
        assert result["status"] == "completed" and "the answer is 42" in result["result"]
        assert {tool["function"]["name"] for tool in fake.bodies("/chat/completions")[0]["tools"]} == {"lookup"}
        # plan mode: only read-only tools, even when named
        call(runtime, "spawn_agent", {"prompt": "Write", "tools": ["lookup", "scribble"], "permissionMode": "plan"})
        assert {tool["function"]["name"] for tool in fake.bodies("/chat/completions")[-1]["tools"]} == {"lookup"}
        assert "'permissionMode' must be one of" in call(runtime, "spawn_agent", {"prompt": "x",
                                                                               "permissionMode": "yolo"})["error"]
        assert "not among the tools" in call(runtime, "spawn_agent", {"prompt": "x", "tools": ["clarify"]})["error"]
        assert "'prompt' is required" in call(runtime, "spawn_agent", {"prompt": " "})["error"]
        assert "No background run 'deleg_nope'" in call(runtime, "subagent_status", {"runId": "deleg_nope"})["error"]
        too_many = call(runtime, "delegate_task", {"tasks": [{"goal": "a"}, {"goal": "b"}], "background": True})
    assert "Too many tasks" not in too_many.get("error", "")  # two fit the default limit of three


def test_a_run_whose_process_was_killed_is_reported_failed_once_never_lost(pack_runtime, isolated_home: Path,
                                                                          workspace: Path, tmp_path: Path):
    with fakes.fake_provider([("lookup", {})]) as fake:
        gate = Gate(fake)
        runtime = with_tools(pack_runtime(delegation(fake), AGENT))  # writes config.yaml; the child reads it
        script = tmp_path / "parent.py"
        script.write_text(textwrap.dedent(f"""
            import sys
            from hermes_core import Runtime
            from hermes_core.plugins.discovery import candidate_from_module
            runtime = Runtime(home={str(isolated_home)!r}, workspace={str(workspace)!r}, entry_points=())
            runtime.load_candidate(candidate_from_module("hermes_plugin_agent", "agent"))
            print(runtime.handle_function_call("delegate_task", {{"goal": "Slow work", "background": True}},
                                               session_id="s1"), flush=True)
            sys.stdin.read()
        """))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        parent = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  env=env, text=True)
        try:
            line = parent.stdout.readline() if parent.stdout else ""
            run_id = json.loads(line)["delegation_id"]
            assert gate.arrived.wait(scaled_timeout(60.0))  # the child is mid-run, waiting for its model
            assert runtime.background_runs.status(run_id, deliver=False)["status"] == "running"  # type: ignore[index]
        finally:
            parent.kill()
            parent.wait(scaled_timeout(30.0))
            gate.open.set()
    restarted = with_tools(Runtime(home=isolated_home, workspace=workspace, entry_points=()))
    try:
        from hermes_core.plugins.discovery import candidate_from_module

        restarted.load_candidate(candidate_from_module(*AGENT))
        delivered = ping(restarted)
        assert f"[Background sub-agent run {run_id} finished: failed]" in delivered
        assert "Goal: Slow work" in delivered and "exited before it finished" in delivered
        assert ping(restarted) == "pong"
        status = call(restarted, "subagent_status", {"runId": run_id})
        assert status["status"] == "failed" and status["delivered"] == "earlier"
        assert "exited before it finished" in status["error"]
    finally:
        restarted.close()

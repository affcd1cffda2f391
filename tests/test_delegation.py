"""``delegate_task`` and ``Runtime.delegate``: sub-agents driven by the real ``openai`` client against a scripted
OpenAI-compatible endpoint on 127.0.0.1, on a filtered view of the parent's tools (hooks, approvals and Hermes
Agent 0.19's rules apply)."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_core import ApprovalRequest, ModelReply, ModelToolCall, Runtime, SubAgentTask
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.errors import DelegationError, NoAnswer
from hermes_core.plugin import block, tool_context

fakes = sys.modules["hermes_fake_provider"]  # loaded by conftest.py
PACKS = (("hermes_plugin_agent", "agent"), ("hermes_plugin_file", "file"), ("hermes_plugin_terminal", "terminal"))


def delegation(fake: Any, **settings: Any) -> dict[str, Any]:
    """A config whose ``delegation`` endpoint is ``fake``, the key in ``FAKE_KEY``."""
    return {"delegation": {"base_url": f"{fake.url}/v1", "model": "fake-model", "api_key_env": "FAKE_KEY",
                           **settings}}


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "test-key")


def delegate(runtime: Runtime, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(runtime.handle_function_call("delegate_task", args, session_id="s1"))
    return result


def offered(body: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in body.get("tools", [])}


def test_a_sub_agent_reads_is_blocked_by_the_parents_hook_and_reports_back(pack_runtime, workspace: Path):
    (workspace / "notes.txt").write_text("the answer is 42\n")
    with fakes.fake_provider([("read_file", {"path": "notes.txt"}),
                              ("write_file", {"path": "out.txt", "content": "x"})]) as fake:
        runtime = pack_runtime(delegation(fake), *PACKS)
        runtime.context().register_hook(
            "pre_tool_call", lambda tool_name, **kw: block("no writes here") if tool_name == "write_file" else None)
        report = delegate(runtime, goal="Find the answer", context="It is in notes.txt")
    [result] = report["results"]
    assert result["status"] == "completed" and result["exit_reason"] == "completed"
    assert "the answer is 42" in result["summary"] and "no writes here" in result["summary"]
    assert [(step["tool"], step["status"]) for step in result["tool_trace"]] == [("read_file", "ok"),
                                                                                ("write_file", "error")]
    assert not (workspace / "out.txt").exists()
    first = fake.bodies("/chat/completions")[0]
    assert first["model"] == "fake-model"
    assert {"read_file", "write_file", "terminal"} <= offered(first)
    assert not offered(first) & {"delegate_task", "clarify", "memory", "execute_code"}
    assert "Find the answer" in first["messages"][0]["content"] and "notes.txt" in first["messages"][0]["content"]


def test_a_batch_of_three_runs_side_by_side_within_the_limit(pack_runtime):
    meeting = threading.Barrier(3, timeout=scaled_timeout(30.0))
    with fakes.fake_provider([("meet", {})]) as fake:
        runtime = pack_runtime(delegation(fake), *PACKS)
        # each sub-agent's call waits for the other two: it returns only if all three run at once
        runtime.register_tool("meet", "meeting", {"description": "Wait for the others"},
                              lambda args, **kw: f"met as {meeting.wait()}")
        report = delegate(runtime, tasks=[{"goal": f"Meet {n}", "toolsets": ["meeting"]} for n in "abc"])
    assert [result["status"] for result in report["results"]] == ["completed"] * 3
    assert [result["task_index"] for result in report["results"]] == [0, 1, 2]
    assert all("met as" in result["summary"] for result in report["results"])
    assert all(offered(body) == {"meet"} for body in fake.bodies("/chat/completions"))


def test_more_tasks_than_the_limit_are_refused_before_any_runs(pack_runtime):
    with fakes.fake_provider([]) as fake:
        runtime = pack_runtime(delegation(fake, max_concurrent_children=2), *PACKS)
        report = delegate(runtime, tasks=[{"goal": "a"}, {"goal": "b"}, {"goal": "c"}])
    assert "Too many tasks: 3 given, but delegation.max_concurrent_children is 2" in report["error"]
    assert fake.requests == []


def test_depth_two_is_refused_by_default(pack_runtime):
    with fakes.fake_provider([("spawn", {}), ("delegate_task", {"goal": "deeper"})]) as fake:
        runtime = pack_runtime(delegation(fake), *PACKS)

        def spawn(args: dict[str, Any], **kwargs: Any) -> str:
            try:
                return tool_context().delegate("deeper").summary or ""
            except DelegationError as exc:
                return f"refused: {exc}"

        runtime.register_tool("spawn", "spawning", {"description": "Start a sub-agent"}, spawn)
        report = delegate(runtime, goal="Try to nest", role="orchestrator")
    [result] = report["results"]
    assert "refused: Delegation depth limit reached (depth=1, max_spawn_depth=1)" in result["summary"]
    # an orchestrator gets delegate_task only when the depth limit lets it use it
    assert "delegate_task" not in offered(fake.bodies("/chat/completions")[0])


def test_an_orchestrator_nests_when_the_depth_limit_allows(pack_runtime):
    with fakes.fake_provider([("delegate_task", {"goal": "the inner task"})]) as fake:
        runtime = pack_runtime(delegation(fake, max_spawn_depth=2), *PACKS)
        report = delegate(runtime, goal="Organise", role="orchestrator")
    [result] = report["results"]
    assert result["status"] == "completed"
    bodies = fake.bodies("/chat/completions")
    assert "delegate_task" in offered(bodies[0])  # the orchestrator may delegate...
    inner = json.loads(result["summary"].removeprefix("Tool results: "))["results"][0]
    assert inner["api_calls"] == 1  # its own sub-agent ran (and, a leaf, could not delegate: nothing to call)
    assert any("the inner task" in body["messages"][0]["content"] and "delegate_task" not in offered(body)
               for body in bodies)


def test_the_iteration_budget_ends_with_a_summary_turn_without_tools(pack_runtime, workspace: Path):
    (workspace / "a.txt").write_text("alpha\n")
    with fakes.fake_provider([("read_file", {"path": "a.txt"})]) as fake:
        runtime = pack_runtime(delegation(fake), *PACKS)
        report = delegate(runtime, goal="Read a.txt", max_iterations=1)
    [result] = report["results"]
    # (the scripted model answers a request that ends without tool results with nothing: no summary)
    assert (result["status"], result["exit_reason"], result["api_calls"]) == ("failed", "max_iterations", 2)
    assert result["error"] == "the sub-agent did not produce a summary"
    last = fake.bodies("/chat/completions")[-1]
    assert "tools" not in last and "used all your tool-calling turns" in last["messages"][-1]["content"]


def test_a_sub_agents_approval_question_reaches_the_parents_user(pack_runtime, workspace: Path):
    (workspace / "victim" / "inner").mkdir(parents=True)
    asked: list[ApprovalRequest] = []
    with fakes.fake_provider([("terminal", {"command": "rm -r victim"})]) as fake:
        runtime = pack_runtime(delegation(fake), *PACKS)
        runtime.set_approval_callback(lambda request: asked.append(request) or "once")
        report = delegate(runtime, goal="Clean up")
    assert report["results"][0]["status"] == "completed"
    assert [request.rule_key for request in asked] == ["recursive_delete"]
    assert not (workspace / "victim").exists()


def test_the_hosts_model_callback_comes_first_and_may_be_async(pack_runtime, workspace: Path):
    (workspace / "notes.txt").write_text("hello\n")
    seen: list[Any] = []

    async def model(request: Any) -> ModelReply:
        seen.append(request)
        if request.messages[-1]["role"] == "tool":
            return ModelReply("done: " + request.messages[-1]["content"][:80], model="host-model")
        return ModelReply(tool_calls=(ModelToolCall("c1", "read_file", {"path": "notes.txt"}),))

    with fakes.fake_provider([]) as fake:
        runtime = pack_runtime(delegation(fake), *PACKS)
        runtime.set_model_callback(model)
        result = runtime.delegate("Read notes.txt", toolsets=["file"])
    assert (result.status, result.model) == ("completed", "host-model") and "hello" in (result.summary or "")
    assert fake.requests == []
    assert {tool["function"]["name"] for tool in seen[0].tools} == {"read_file", "write_file", "patch",
                                                                    "search_files"}
    assert seen[0].purpose == "delegate_task"


def test_no_model_to_ask_is_an_error_naming_every_source(pack_runtime):
    runtime = pack_runtime({}, *PACKS)
    report = delegate(runtime, goal="anything")
    assert report["error"].startswith("no model can be asked here: the program running Hermes set no model callback")
    assert "no model endpoint is configured (delegation.base_url)" in report["error"]
    with pytest.raises(NoAnswer):
        runtime.delegate("anything")


@pytest.mark.parametrize(("settings", "why"), [
    ({"base_url": "http://127.0.0.1:9/v1"}, "delegation.model (the model to ask there) is not"),
    ({"base_url": "file:///etc", "model": "m"}, "must be an http(s) URL"),
    ({"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key_env": "HERMES_TEST_NO_SUCH_KEY"},
     "HERMES_TEST_NO_SUCH_KEY, which is not set"),
])
def test_a_misconfigured_endpoint_is_never_asked_and_says_why(pack_runtime, settings, why):
    runtime = pack_runtime({"delegation": settings}, *PACKS)
    assert why in delegate(runtime, goal="anything")["error"]


def test_rules_are_checked_before_any_model_is_asked(pack_runtime):
    with fakes.fake_provider([]) as fake:
        runtime = pack_runtime(delegation(fake), *PACKS)
        assert "Unknown toolset 'nope'" in delegate(runtime, goal="x", toolsets=["nope"])["error"]
        assert "Task 1 is missing a 'goal'" in delegate(runtime, tasks=[{"goal": "a"}, {"goal": " "}])["error"]
        with pytest.raises(DelegationError, match="role 'boss'"):
            runtime.delegate_batch([SubAgentTask("x", role="boss")])
    assert fake.requests == []


def test_a_filtered_view_delegates_only_its_own_tools(pack_runtime):
    with fakes.fake_provider([]) as fake:
        runtime = pack_runtime(delegation(fake), *PACKS)
        runtime.filtered(read_only=True).delegate("Look around")
    tools = offered(fake.bodies("/chat/completions")[0])
    assert "read_file" in tools and not tools & {"write_file", "terminal", "patch"}

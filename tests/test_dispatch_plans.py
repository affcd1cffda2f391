"""Each tool's plan is made once per registry generation, hook state and policy, for the sync and the async API
alike; a blocked call runs no step after the one that blocked it (only the closing ones: ``post_tool_call``)."""

from __future__ import annotations

import asyncio
import json

import pytest

import hermes_core.calls.dispatch as dispatch
import hermes_core.calls.plan as plan
from hermes_core import Runtime

ECHO = {"description": "echo", "parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tools whose plans are made, one item per plan."""
    made: list[str] = []

    class Counted(plan.Plan):
        __slots__ = ()

        def __init__(self, dispatcher, entry, *args) -> None:
            made.append(entry.name)
            super().__init__(dispatcher, entry, *args)

    monkeypatch.setattr(dispatch, "Plan", Counted)
    return made


def echo_runtime(*, hooks: bool) -> Runtime:
    runtime = Runtime()
    runtime.register_tool("echo", "t", ECHO, lambda args, **kw: args.get("text", ""))
    if hooks:
        runtime.context("watch").register_hook("pre_tool_call", lambda tool_name, args: None)
        runtime.context("watch").register_hook("post_tool_call", lambda tool_name, result: None)
    return runtime


@pytest.mark.parametrize("hooks", [False, True], ids=["plain", "hooked"])
def test_100_sync_calls_make_one_plan(builds, hooks):
    runtime = echo_runtime(hooks=hooks)
    results = [runtime.handle_function_call("echo", {"text": str(n)}) for n in range(100)]
    assert results == [str(n) for n in range(100)]
    assert builds == ["echo"]


@pytest.mark.parametrize("hooks", [False, True], ids=["plain", "hooked"])
def test_100_async_calls_make_one_plan(builds, hooks):
    runtime = echo_runtime(hooks=hooks)

    async def calls() -> list[str]:
        return [await runtime.ahandle_function_call("echo", {"text": str(n)}) for n in range(100)]

    assert asyncio.run(calls()) == [str(n) for n in range(100)]
    assert builds == ["echo"]


def test_sync_and_async_calls_share_the_plan_and_a_change_makes_a_new_one(builds):
    runtime = echo_runtime(hooks=False)
    runtime.handle_function_call("echo", {})
    asyncio.run(runtime.ahandle_function_call("echo", {}))
    assert builds == ["echo"]

    runtime.context("late").register_hook("pre_tool_call", lambda tool_name: None)  # the hooks changed
    runtime.handle_function_call("echo", {})
    runtime.register_tool("other", "t", ECHO, lambda args, **kw: "")  # the registry changed
    runtime.handle_function_call("echo", {})
    runtime.set_policy("writes")  # the policy changed
    runtime.set_approval_callback(lambda request: "once")
    runtime.handle_function_call("echo", {})
    runtime.handle_function_call("echo", {})
    assert builds == ["echo"] * 4


@pytest.fixture
def reached(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The plan steps after ``pre_tool_call`` that a call reached, in order (each records itself, then runs)."""
    steps: list[str] = []

    def recorded(name: str):
        step = getattr(plan.Plan, name)

        def recording(self, call, *args):
            steps.append(name)
            return step(self, call, *args)

        return recording

    for name in ("approval", "destructive_arguments", "handle"):
        monkeypatch.setattr(plan.Plan, name, recorded(name))
    return steps


def guarded(answer: dict | None, ran: list[str], seen: list[tuple[str, str]]) -> Runtime:
    """A ``writes`` runtime whose tool is guarded by a hook answering ``answer``, recording what ran and what the
    post_tool_call hook saw."""
    runtime = Runtime(policy="writes")
    runtime.register_tool("write", "t", ECHO, lambda args, **kw: ran.append("handler") or "wrote")
    runtime.set_approval_callback(lambda request: ran.append("approval asked") or "once")
    plugin = runtime.context("guard")
    plugin.register_hook("pre_tool_call", lambda tool_name: answer)
    plugin.register_hook("pre_tool_call", lambda tool_name: ran.append("a later pre_tool_call hook"))
    plugin.register_middleware("tool_execution",
                               lambda next_call, args, **kw: ran.append("tool_execution middleware") or next_call(args))
    plugin.register_hook("post_tool_call", lambda status, result: seen.append((status, result)))
    return runtime


def test_a_blocked_call_reaches_no_later_step_and_post_tool_call_sees_it(reached):
    ran: list[str] = []
    seen: list[tuple[str, str]] = []
    runtime = guarded({"action": "block", "message": "not today"}, ran, seen)

    assert json.loads(runtime.handle_function_call("write", {"text": "x"})) == {"error": "not today"}
    assert reached == [] and ran == []  # no step after the block: the approval, the handler and what they run
    assert seen == [("blocked", '{"error": "not today"}')]


def test_the_steps_record_when_they_are_reached(reached):
    ran: list[str] = []
    seen: list[tuple[str, str]] = []
    runtime = guarded(None, ran, seen)

    assert runtime.handle_function_call("write", {"text": "x"}) == "wrote"
    assert reached == ["approval", "handle"]
    assert ran == ["a later pre_tool_call hook", "approval asked", "tool_execution middleware", "handler"]
    assert seen == [("ok", "wrote")]


def test_a_refused_call_keeps_the_steps_after_the_approval_from_running():
    runtime = Runtime(policy="writes")
    ran: list[str] = []
    runtime.register_tool("write", "t", ECHO, lambda args, **kw: ran.append("handler") or "wrote")
    runtime.set_approval_callback(lambda request: "deny")
    runtime.context("mw").register_middleware(
        "tool_execution", lambda next_call, args, **kw: ran.append("tool_execution middleware") or next_call(args))

    assert json.loads(runtime.handle_function_call("write", {}))["error"].startswith(
        "Blocked by the approval policy 'writes'")
    assert ran == []

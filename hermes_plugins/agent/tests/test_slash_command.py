"""``slash_command``: the model runs a command a plugin registered; the command's tool calls run on a view filtered
to its ``allowed_tools`` (read-only ones unless it declares otherwise), and what it may not do is refused."""

from __future__ import annotations

import json
from typing import Any

from hermes_core import ApprovalRequest, Runtime


def slash(runtime: Runtime, command: str, args: str = "") -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(runtime.handle_function_call(
        "slash_command", {"command": command, "args": args}, session_id="s1"))
    return answer


def runtime_with_commands(agent_runtime: Any, config: dict[str, Any] | None = None) -> Runtime:
    runtime = agent_runtime(config or {})
    ctx = runtime.context("reports")
    runtime.register_tool("peek", "reading", {"description": "Read"}, lambda args, **kw: "peeked",
                          annotations={"read_only": True})
    runtime.register_tool("poke", "writing", {"description": "Write"}, lambda args, **kw: "poked",
                          annotations={"read_only": False, "destructive": True})

    def both(raw: str) -> str:
        return f"{raw}: {ctx.dispatch_tool('peek', {})} / {ctx.dispatch_tool('poke', {})}"

    ctx.register_command("inspect", both, "Look around", allowed_tools=["peek"])
    ctx.register_command("tidy", both, "Read and write", allowed_tools=["peek", "poke"])
    ctx.register_command("fix", both, "Change things", allowed_tools=["peek", "poke"], read_only=False)
    ctx.register_command("reset", lambda raw: "reset!", "Only for the user")
    return runtime


def test_a_command_runs_and_a_tool_outside_its_allowed_tools_is_refused(agent_runtime):
    runtime = runtime_with_commands(agent_runtime)
    output = slash(runtime, "/inspect", "now")["output"]
    assert output.startswith("now: peeked / ")
    assert "poke" in output and "poked" not in output  # outside allowed_tools: refused inside the command
    assert slash(runtime, "fix")["output"] == ": peeked / poked"
    # the host still runs its commands without any view
    assert runtime.run_command("tidy", "x") == "x: peeked / poked"


def test_read_only_unless_declared_and_asked_under_writes(agent_runtime):
    runtime = runtime_with_commands(agent_runtime, {"approvals": {"policy": "writes"}})
    output = slash(runtime, "tidy")["output"]
    assert "peeked" in output and "poked" not in output  # read-only by default: its write is refused
    asked: list[ApprovalRequest] = []
    runtime.set_approval_callback(lambda request: asked.append(request) or "deny")
    assert "/fix was not approved" in slash(runtime, "fix")["error"]
    assert [request.tool_name for request in asked] == ["slash_command"]


def test_what_the_model_may_not_run(agent_runtime):
    runtime = runtime_with_commands(agent_runtime)
    assert "declares no allowed_tools: only the user can run it" in slash(runtime, "reset")["error"]
    unknown = slash(runtime, "nope")["error"]
    assert "Unknown command /nope" in unknown and "/inspect" in unknown and "/reset" not in unknown
    assert "'command' is required" in slash(runtime, "/")["error"]
    read_only = runtime.filtered(policy="read-only")
    answer = json.loads(read_only.handle_function_call("slash_command", {"command": "fix"}))
    assert "may change things" in answer["error"]

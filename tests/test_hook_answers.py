"""``pre_tool_call`` answers are checked: ``None`` or a documented shape, exactly, else the call is blocked naming
the plugin and quoting the answer (and doctor says so); ``modify`` arguments are validated again; ``async def``
hooks and hooks that return awaitables are awaited, in the sync and the async API."""

from __future__ import annotations

import asyncio
import json
import textwrap
import threading

import pytest
from click.testing import CliRunner

from hermes_core import HermesHome, Runtime, default_runtime
from hermes_core.cli import cli

SCHEMA = {"description": "read", "parameters": {"type": "object", "properties": {
    "path": {"type": "string"}, "limit": {"type": "integer"}}}}


@pytest.fixture(params=[0, 30], ids=["inline", "deadline"])
def runtime(request) -> Runtime:
    HermesHome.from_env().edit_config(lambda data: data.update({"plugins": {"hook_timeout": request.param}}))
    runtime = Runtime()
    runtime.ran = []
    runtime.register_tool("read", "t", SCHEMA, lambda args, **kw: runtime.ran.append(args) or json.dumps(args))
    return runtime


def guard(runtime: Runtime, answer, plugin: str = "guard") -> None:
    runtime.context(plugin).register_hook("pre_tool_call", lambda tool_name, args: answer)


BAD_ANSWERS = [{"action": "BLOCK"}, "block ", "deny", ["block"], {"action": "block "}, {"action": "allow"}, {},
               {"action": "block", "message": 5}, {"action": "modify"}, {"action": "modify", "args": "x"},
               {"action": "block", "reason": "no"}, True, 0, ("block",), {"action": None}, {1: "block"},
               {"action": "approve", "rule_key": 3}]


@pytest.mark.parametrize("answer", BAD_ANSWERS, ids=repr)
def test_an_answer_that_is_not_a_documented_shape_blocks_the_call_naming_the_plugin_and_quoting_it(runtime, answer):
    guard(runtime, answer)
    result = json.loads(runtime.handle_function_call("read", {"path": "a"}))
    assert result["error"].startswith("Blocked: the pre_tool_call hook of plugin 'guard' gave an answer that is not "
                                      "valid (")
    assert result["error"].endswith(repr(answer))
    assert runtime.ran == []
    [problem] = runtime.hooks.problems_of("guard")
    assert problem.startswith(f"pre_tool_call gave an answer that is not valid, which blocked the call: {answer!r} (")


def test_a_quoted_answer_is_cut(runtime):
    guard(runtime, "x" * 100_000)
    error = json.loads(runtime.handle_function_call("read", {}))["error"]
    assert len(error) < 500 and "more characters" in error


@pytest.mark.parametrize("answer", [None, {"action": "block"}, {"action": "block", "message": "m"},
                                    {"action": "modify", "args": {"path": "b"}},
                                    {"action": "approve", "message": "ok?", "rule_key": None}], ids=repr)
def test_the_documented_shapes_are_accepted(runtime, answer):
    from hermes_core import set_approval_callback

    set_approval_callback(lambda request: "once")
    guard(runtime, answer)
    result = json.loads(runtime.handle_function_call("read", {"path": "a"}))
    if answer and answer["action"] == "block":
        assert result["error"] == answer.get("message", "Blocked by plugin 'guard'")
    else:
        assert result == ({"path": "b"} if answer and answer["action"] == "modify" else {"path": "a"})
    assert runtime.hooks.problems_of("guard") == []


def test_modified_arguments_are_validated_against_the_schema_again(runtime):
    guard(runtime, {"action": "modify", "args": {"path": "a", "limit": "abc"}})
    error = json.loads(runtime.handle_function_call("read", {"path": "a"}))["error"]
    assert error.startswith("Blocked: the pre_tool_call hook of plugin 'guard' changed the arguments into ones tool "
                            "'read' does not accept: ") and "limit" in error
    assert runtime.ran == []


def test_modified_arguments_are_coerced_as_the_models_are(runtime):
    guard(runtime, {"action": "modify", "args": {"path": "a", "limit": "5"}})
    assert json.loads(runtime.handle_function_call("read", {})) == {"path": "a", "limit": 5}


# -- async hooks ----------------------------------------------------------------------------------------------

def test_an_async_def_hook_is_awaited_in_the_sync_api(runtime):
    async def block(tool_name):
        await asyncio.sleep(0)
        return {"action": "block", "message": "async says no"}

    runtime.context("a").register_hook("pre_tool_call", block)
    assert json.loads(runtime.handle_function_call("read", {}))["error"] == "async says no"
    assert runtime.ran == []


def test_a_hook_that_returns_an_awaitable_is_awaited(runtime):
    async def later():
        return {"action": "block", "message": "awaited"}

    runtime.context("a").register_hook("pre_tool_call", lambda tool_name: later())
    assert json.loads(runtime.handle_function_call("read", {}))["error"] == "awaited"


def test_async_hooks_run_on_the_callers_loop_in_the_async_api(runtime):
    seen = {}

    async def block(tool_name):
        seen["pre"] = asyncio.get_running_loop()
        return {"action": "block", "message": "no"}

    async def observe(status):
        seen["post"] = (asyncio.get_running_loop(), status)

    runtime.context("a").register_hook("pre_tool_call", block)
    runtime.context("a").register_hook("post_tool_call", observe)

    async def main():
        result = await runtime.ahandle_function_call("read", {})
        return result, asyncio.get_running_loop()

    result, loop = asyncio.run(main())
    assert json.loads(result)["error"] == "no"
    assert seen == {"pre": loop, "post": (loop, "blocked")}


def test_an_async_hook_that_returns_a_bad_answer_blocks_too(runtime):
    async def wrong(tool_name):
        return {"action": "Block"}

    runtime.context("a").register_hook("pre_tool_call", wrong)
    assert "gave an answer that is not valid" in json.loads(runtime.handle_function_call("read", {}))["error"]
    assert "gave an answer that is not valid" in json.loads(
        asyncio.run(runtime.ahandle_function_call("read", {})))["error"]


def test_an_async_hook_that_hangs_misses_its_deadline_and_fails_closed(isolated_home):
    HermesHome.from_env().edit_config(lambda data: data.update({"plugins": {"hook_timeout": 0.2}}))
    runtime = Runtime()
    runtime.register_tool("read", "t", SCHEMA, lambda args, **kw: "ran")
    never = threading.Event()

    async def hang(tool_name):
        while not never.is_set():
            await asyncio.sleep(0.01)

    runtime.context("slow").register_hook("pre_tool_call", hang)
    try:
        assert json.loads(runtime.handle_function_call("read", {}))["error"] == (
            "Blocked: the pre_tool_call hook of plugin 'slow' did not answer within 0.2 s")
    finally:
        never.set()


# -- doctor -----------------------------------------------------------------------------------------------------

def test_doctor_list_and_info_report_a_bad_answer(isolated_home):
    folder = isolated_home / "plugins" / "sloppy"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(textwrap.dedent("""
        def register(ctx):
            ctx.register_tool("noop", "n", {"description": "x"}, lambda args, **kw: "ran")
            ctx.register_hook("pre_tool_call", lambda tool_name: {"action": "BLOCK"})
    """))
    (folder / "plugin.yaml").write_text("name: sloppy\n")
    runtime = default_runtime()
    assert "gave an answer that is not valid" in json.loads(runtime.handle_function_call("noop", {}))["error"]
    [row] = json.loads(CliRunner().invoke(cli, ["plugins", "doctor", "--json"]).output)["plugins"]
    expected = ("pre_tool_call gave an answer that is not valid, which blocked the call: {'action': 'BLOCK'} "
                "(no action 'block', 'approve', 'modify')")
    assert expected in row["problems"]
    assert json.loads(CliRunner().invoke(cli, ["plugins", "list", "--json"]).output)[0]["hook_problems"] == [expected]
    assert expected in CliRunner().invoke(cli, ["plugins", "info", "sloppy"]).output

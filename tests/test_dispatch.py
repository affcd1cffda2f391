"""handle_function_call and run_tool_calls: arguments, errors, async handlers, budgets and parallelism."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading

import pytest

from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.plugin import UNLIMITED

ADD_SCHEMA = {
    "description": "Add two numbers",
    "parameters": {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "number"}, "verbose": {"type": "boolean"},
                       "tags": {"type": "array", "items": {"type": "string"}}, "label": {"type": "string"}},
        "required": ["a", "b"],
    },
}


def add(args, **kwargs):
    return json.dumps({"sum": args["a"] + args["b"], "args": args})


@pytest.fixture
def runtime() -> Runtime:
    runtime = Runtime()
    runtime.register_tool("add", "math", ADD_SCHEMA, add)
    return runtime


def call(runtime, name, args):
    return json.loads(runtime.handle_function_call(name, args))


def test_dict_arguments(runtime):
    assert call(runtime, "add", {"a": 2, "b": 3})["sum"] == 5


def test_json_string_arguments(runtime):
    assert call(runtime, "add", '{"a": 2, "b": 0.5}')["sum"] == 2.5


def test_invalid_json_is_an_error_naming_the_position(runtime):
    error = call(runtime, "add", '{"a": 2,')["error"]
    assert "not valid JSON" in error and "line 1" in error


def test_missing_and_mistyped_arguments_are_reported_together(runtime):
    result = call(runtime, "add", {"a": "two", "verbose": "maybe"})
    assert result["problems"] == [
        "missing required argument 'b'",
        "argument 'a' must be integer, got string 'two'",
        "argument 'verbose' must be boolean, got string 'maybe'",
    ]
    assert "Invalid arguments for tool 'add'" in result["error"]


def test_safe_coercions(runtime):
    result = call(runtime, "add", {"a": "42", "b": "0.5", "verbose": "true", "tags": '["x", "y"]', "label": 7})
    assert result["sum"] == 42.5
    assert result["args"] == {"a": 42, "b": 0.5, "verbose": True, "tags": ["x", "y"], "label": "7"}


def test_nested_rules_are_checked_by_jsonschema(runtime):
    result = call(runtime, "add", {"a": 1, "b": 2, "tags": [1, "ok"]})
    assert result["problems"] == ["argument tags.0: 1 is not of type 'string'"]


def test_unknown_tool_names_the_closest(runtime):
    result = call(runtime, "ad", {})
    assert result["error"].startswith("Unknown tool 'ad'") and result["suggestions"] == ["add"]


@pytest.mark.parametrize("tool", ["todo", "memory", "session_search", "clarify", "delegate_task"])
def test_the_agent_tools_run_their_handlers(runtime, tool):
    runtime.register_tool(tool, "agent", {"description": tool}, lambda a, **k: '{"ran": true}')
    assert call(runtime, tool, {}) == {"ran": True}


def test_handler_that_raises_becomes_an_error(runtime):
    def boom(args, **kwargs):
        raise ValueError("bad state")

    runtime.register_tool("boom", "x", {"description": "x"}, boom)
    result = call(runtime, "boom", {})
    assert result["error"] == "Tool 'boom' failed: ValueError: bad state" and result["error_type"] == "ValueError"


def test_handler_returning_a_dict_is_encoded(runtime):
    runtime.register_tool("d", "x", {"description": "x"}, lambda a, **k: {"ok": True})
    assert runtime.handle_function_call("d", {}) == '{"ok": true}'


def test_handler_returning_something_unencodable_is_an_error(runtime):
    runtime.register_tool("o", "x", {"description": "x"}, lambda a, **k: object())
    assert "returned object, not a string" in call(runtime, "o", {})["error"]


def test_handler_receives_context_keywords(runtime):
    seen = {}
    runtime.register_tool("ctx", "x", {"description": "x"}, lambda a, **k: seen.update(k) or "ok")
    runtime.handle_function_call("ctx", {}, task_id="t1", session_id="s1", user_task="u")
    assert seen == {"task_id": "t1", "session_id": "s1", "user_task": "u"}


async def async_handler(args, **kwargs):
    await asyncio.sleep(0)
    return json.dumps({"thread": threading.current_thread().name})


def test_async_handler_without_a_running_loop(runtime):
    runtime.register_tool("aio", "x", {"description": "x"}, async_handler, is_async=True)
    assert call(runtime, "aio", {})["thread"] == threading.current_thread().name


def test_async_handler_inside_a_running_loop(runtime):
    runtime.register_tool("aio", "x", {"description": "x"}, async_handler, is_async=True)

    async def main():
        return runtime.handle_function_call("aio", {})

    assert json.loads(asyncio.run(main()))["thread"].startswith("hermes-async")


def test_unavailable_tool_says_why(runtime):
    def check():
        raise RuntimeError("SEARXNG_URL is not set")

    runtime.register_tool("s", "x", {"description": "x"}, lambda a, **k: "ok", check_fn=check)
    assert call(runtime, "s", {})["error"] == "Tool 's' is unavailable: SEARXNG_URL is not set"


def test_enabled_tools_limits_what_may_run(runtime):
    assert "not enabled" in json.loads(runtime.handle_function_call("add", {"a": 1, "b": 1},
                                                                     enabled_tools=["other"]))["error"]


def test_result_over_budget_is_persisted_with_a_preview(runtime, isolated_home):
    runtime.register_tool("big", "x", {"description": "x"}, lambda a, **k: "x" * 5000, max_result_size_chars=1000)
    result = runtime.handle_function_call("big", {})
    assert "5,000 characters" in result and len(result) < 5000
    [saved] = (isolated_home / "results").iterdir()
    assert saved.read_text() == "x" * 5000 and str(saved) in result


def test_result_over_budget_is_truncated_when_it_cannot_be_saved(runtime, isolated_home):
    (isolated_home / "results").write_text("a file where the results folder should be")
    runtime.register_tool("big", "x", {"description": "x"}, lambda a, **k: "y" * 5000, max_result_size_chars=1000)
    result = runtime.handle_function_call("big", {})
    assert len(result) <= 1000 and "truncated" in result and "could not be saved" in result


SAVE_ON_A_FULL_DISK = """
import sys
from pathlib import Path
from hermes_core.calls.budget import ResultBudget
print(ResultBudget(Path(sys.argv[1])).fit("big", "x" * 1_000_000, 1000))
"""


@pytest.mark.skipif(sys.platform == "win32", reason="a file size limit (RLIMIT_FSIZE) stands in for a full disk")
def test_a_result_that_cannot_be_saved_whole_leaves_no_partial_file(tmp_path):
    def small_disk() -> None:  # in the child: a write past 64 KiB fails (EFBIG), as it would on a full disk
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))

    results = tmp_path / "results"
    run = subprocess.run([sys.executable, "-c", SAVE_ON_A_FULL_DISK, str(results)], capture_output=True, text=True,
                         preexec_fn=small_disk, timeout=scaled_timeout(120))
    assert "could not be saved" in run.stdout and "truncated" in run.stdout, run.stderr
    assert list(results.iterdir()) == []  # no partial result, no temporary file


def test_unlimited_budget_keeps_the_whole_result(runtime):
    runtime.register_tool("whole", "x", {"description": "x"}, lambda a, **k: "z" * 150_000,
                          max_result_size_chars=UNLIMITED)
    assert len(runtime.handle_function_call("whole", {})) == 150_000


def test_the_configured_budget_applies_to_declared_and_registered_tools(plugins, isolated_home):
    (isolated_home / "config.yaml").write_text("tool_output: {max_result_size_chars: 5000}\n")
    plugins.folder("big", manifest="name: big\ntools:\n  - {name: declared_big, toolset: big, description: x, "
                                   "handler: .tools:run}\n  - {name: declared_own, toolset: big, description: x, "
                                   "handler: .tools:run, max_result_size_chars: 30000}\n",
                   init="", files={"tools.py": "def run(args, **kw):\n    return 'd' * 20000\n"})
    runtime = plugins.runtime()
    runtime.load_plugins()
    runtime.register_tool("registered_big", "x", {"description": "x"}, lambda a, **k: "r" * 20000)
    for name in ("declared_big", "registered_big"):
        result = runtime.handle_function_call(name, {})
        assert "more than its budget of 5,000" in result and len(result) < 5000, name
    assert len(runtime.handle_function_call("declared_own", {})) == 20000


def test_default_budget_is_100000(runtime):
    runtime.register_tool("big", "x", {"description": "x"}, lambda a, **k: "q" * 100_001)
    assert len(runtime.handle_function_call("big", {})) < 100_001


def test_turn_budget_persists_the_largest_first(runtime, isolated_home):
    results = ["a" * 150_000, "b" * 90_000, "c" * 1_000]
    kept = runtime.enforce_turn_budget(results)
    assert sum(map(len, kept)) <= 200_000
    assert kept[1:] == results[1:]  # only the largest had to go
    [saved] = (isolated_home / "results").iterdir()
    assert saved.read_text() == results[0]


# -- run_tool_calls ---------------------------------------------------------------------------------


def openai_call(name, args, call_id):
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}


def test_results_come_back_in_call_order(runtime):
    calls = [openai_call("add", {"a": i, "b": 0}, f"c{i}") for i in range(10)]
    results = runtime.run_tool_calls(calls)
    assert [json.loads(r)["sum"] for r in results] == list(range(10))


def test_plain_name_arguments_dicts_are_accepted(runtime):
    assert json.loads(runtime.run_tool_calls([{"name": "add", "arguments": {"a": 1, "b": 1}}])[0])["sum"] == 2


def test_parallel_safe_calls_run_concurrently(runtime):
    barrier = threading.Barrier(3, timeout=scaled_timeout(10))

    def meet(args, **kwargs):
        barrier.wait()  # only returns when three calls are in flight at once
        return "met"

    runtime.register_tool("meet", "x", {"description": "x"}, meet, parallel_safe=True)
    assert runtime.run_tool_calls([{"name": "meet", "arguments": {}}] * 3) == ["met"] * 3


class Overlap:
    """Counts how many calls are inside the handler at the same time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.inside = 0
        self.most = 0

    def __call__(self, args, **kwargs):
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        threading.Event().wait(0.05)
        with self.lock:
            self.inside -= 1
        return args["path"]


PATH_SCHEMA = {"description": "x", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}


def test_overlapping_paths_are_serialised(runtime):
    writer = Overlap()
    runtime.register_tool("w", "x", PATH_SCHEMA, writer, path_args=["path"])
    calls = [{"name": "w", "arguments": {"path": p}} for p in ("src", "src/a.py", "src")]
    assert runtime.run_tool_calls(calls) == ["src", "src/a.py", "src"]
    assert writer.most == 1


def test_disjoint_paths_run_in_parallel(runtime):
    barrier = threading.Barrier(2, timeout=scaled_timeout(10))

    def write(args, **kwargs):
        barrier.wait()
        return args["path"]

    runtime.register_tool("w", "x", PATH_SCHEMA, write, path_args=["path"])
    assert runtime.run_tool_calls([{"name": "w", "arguments": {"path": "a"}},
                                   {"name": "w", "arguments": {"path": "b"}}]) == ["a", "b"]


def test_clarify_is_never_parallelised(runtime):
    reader = Overlap()
    runtime.register_tool("r", "x", PATH_SCHEMA, reader, parallel_safe=True)
    calls = [{"name": "r", "arguments": {"path": str(i)}} for i in range(4)]
    runtime.register_tool("clarify", "clarify", {"description": "asks"}, lambda a, **k: "answered")
    results = runtime.run_tool_calls([*calls, {"name": "clarify", "arguments": {}}])
    assert reader.most == 1
    assert results[-1] == "answered"


def test_unsafe_tools_run_in_order(runtime):
    order = []
    runtime.register_tool("u", "x", {"description": "x"}, lambda a, **k: order.append(a["n"]) or "ok")
    runtime.run_tool_calls([{"name": "u", "arguments": {"n": i}} for i in range(5)])
    assert order == list(range(5))


def test_the_short_path_follows_every_change_after_the_first_call(runtime):
    """A call with nothing to hook runs from a plan made at its first call; each later change (a hook, middleware,
    the policy, a replaced tool, a check, a tool removed) is honoured by the very next call."""
    assert call(runtime, "add", {"a": 1, "b": 1})["sum"] == 2
    assert call(runtime, "add", {"a": 1, "b": 1, "label": None})["sum"] == 2  # a null optional argument is absent

    seen = []
    context = runtime.context("watcher")
    context.register_hook("pre_tool_call", lambda tool_name, args: seen.append(tool_name))
    assert call(runtime, "add", {"a": 1, "b": 2})["sum"] == 3 and seen == ["add"]

    context.register_middleware("tool_request", lambda tool_name, args, **kw: {"args": {**args, "a": 10}})
    assert call(runtime, "add", {"a": 1, "b": 2})["sum"] == 12

    runtime.set_policy("read-only")
    assert "refused by the approval policy 'read-only'" in call(runtime, "add", {"a": 1, "b": 2})["error"]
    runtime.set_policy(None)

    other = Runtime()
    other.register_tool("add", "math", ADD_SCHEMA, lambda args, **kw: "replaced")
    assert other.handle_function_call("add", {"a": 1, "b": 2}) == "replaced"
    other.register_tool("add", "math", ADD_SCHEMA, lambda args, **kw: "again", check_fn=lambda: False)
    assert "is unavailable" in call(other, "add", {"a": 1, "b": 2})["error"]
    # missing only a variable its plugin declared, the call reaches the handler: it may say how to set it up
    other.register_tool("add", "math", ADD_SCHEMA, lambda args, **kw: json.dumps({"error": "set the key: see x"}),
                        requires_env=["HERMES_TEST_NEVER_SET"])
    assert other.registry.check("add").reason == "environment variable HERMES_TEST_NEVER_SET is not set"
    assert call(other, "add", {"a": 1, "b": 2})["error"] == "set the key: see x"

    def needs_login() -> bool:
        raise RuntimeError("log in with `add login` first")

    other.register_tool("add", "math", ADD_SCHEMA, lambda args, **kw: "again", requires_env=["HERMES_TEST_NEVER_SET"],
                        check_fn=needs_login)
    assert call(other, "add", {"a": 1, "b": 2})["error"] == "Tool 'add' is unavailable: log in with `add login` first"
    other.registry.deregister("add")
    assert "Unknown tool 'add'" in call(other, "add", {"a": 1, "b": 2})["error"]

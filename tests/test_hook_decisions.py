"""One typed decision per ``pre_tool_call`` phase (and per phase of ``tool_request`` middleware): the hook runner
decides, dispatch acts on it. Arguments are validated again after every phase, whatever the hooks did to them, on a
copy no hook holds; an approval holds for the arguments it was given; middleware runs under the hooks' deadline;
a ``transform_tool_result`` answer is fitted to the result budget like any result."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from hermes_core import HermesHome, Runtime
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.calls import answers
from hermes_core.calls import hooks as hook_runner
from hermes_core.calls.arguments import ArgumentValidator

SCHEMA = {"description": "echo", "parameters": {"type": "object", "properties": {
    "text": {"type": "string"}, "count": {"type": "integer"}}, "required": ["text"]}}
CHECK = ArgumentValidator(SCHEMA["parameters"])


def config(**plugins) -> None:
    HermesHome.from_env().edit_config(lambda data: data.update({"plugins": plugins}))


@pytest.fixture(params=[0, 30], ids=["inline", "deadline"])
def runtime(request) -> Runtime:
    config(hook_timeout=request.param)
    runtime = Runtime()
    runtime.got = []
    runtime.register_tool("echo", "t", SCHEMA, lambda args, **kw: runtime.got.append(args) or json.dumps(args))
    return runtime


def error(result: str) -> str:
    return json.loads(result)["error"]


# -- the decision ---------------------------------------------------------------------------------------------


def Decision(*args, **kwargs):
    return answers.Decision(*args, **kwargs)


def runner(*hooks, timeout: float = 30) -> hook_runner.HookRunner:
    hooks_runner = hook_runner.HookRunner(lambda: timeout)
    for index, hook in enumerate(hooks):
        hooks_runner.add_callback(f"p{index}", "pre_tool_call", hook)
    return hooks_runner


def decide(hooks: hook_runner.HookRunner, args: dict, start: int = 0) -> answers.Decision:
    return answers.decide(hooks, "pre_tool_call", {"tool_name": "echo", "args": args}, CHECK, start=start)


def test_a_phase_with_nothing_to_say_proceeds_with_a_validated_copy_of_the_arguments():
    args = {"text": "a", "count": "3"}
    decision = decide(runner(lambda args: None), args)
    assert decision == Decision("proceed", {"text": "a", "count": 3})
    assert decision.args is not args


def test_each_answer_is_a_typed_decision_naming_its_plugin():
    assert decide(runner(lambda args: {"action": "modify", "args": {"text": "b"}}), {"text": "a"}) == \
        Decision("proceed", {"text": "b"}, modified_by=("p0",))
    assert decide(runner(lambda args: None, lambda args: {"action": "block", "message": "no"}), {"text": "a"}) == \
        Decision("block", {"text": "a"}, "no", "p1")
    asked = decide(runner(lambda args: {"action": "approve", "message": "ok?", "rule_key": "k"}, lambda: None),
                   {"text": "a"})
    assert asked == Decision("ask", {"text": "a"}, "ok?", "p0", "k", resume=1)


def test_a_plugin_that_exits_fails_the_phase_with_the_fault():
    def exits(args):
        raise SystemExit(3)

    decision = decide(runner(exits), {"text": "a"})
    assert (decision.verdict, decision.plugin, decision.message) == (
        "fail", "p0", "Blocked: the pre_tool_call hook of plugin 'p0' raised SystemExit: 3")
    assert isinstance(decision.fault.error, SystemExit)


def test_a_hook_that_misses_the_deadline_blocks_naming_the_plugin_abandoned():
    release = threading.Event()
    hooks = runner(lambda args: release.wait(scaled_timeout(30)), timeout=0.05)
    try:
        decision = decide(hooks, {"text": "a"})
    finally:
        release.set()
    assert (decision.verdict, decision.plugin, decision.abandoned) == ("block", "p0", True)
    assert decision.message == "Blocked: the pre_tool_call hook of plugin 'p0' did not answer within 0.05 s"


# -- arguments validated again, on a copy no hook holds ----------------------------------------------------------


def test_a_hook_that_changes_the_arguments_in_place_into_invalid_ones_blocks_the_call(runtime):
    def sloppy(args):
        args["count"] = "many"  # not an integer, and no answer to say so

    runtime.context("sloppy").register_hook("pre_tool_call", sloppy)
    assert error(runtime.handle_function_call("echo", {"text": "a"})) == (
        "Blocked: after the pre_tool_call hooks (plugins 'sloppy') the arguments are ones tool 'echo' does not "
        "accept: argument 'count' must be integer, got string 'many'")
    assert runtime.got == []


def test_a_valid_change_in_place_reaches_the_handler(runtime):
    runtime.context("redact").register_hook("pre_tool_call", lambda args: args.update(text="[redacted]"))
    assert json.loads(runtime.handle_function_call("echo", {"text": "secret"})) == {"text": "[redacted]"}


def test_a_modify_answer_changed_later_by_the_hooks_own_thread_does_not_reach_the_handler(runtime):
    go, done = threading.Event(), threading.Event()

    def modify(args):
        answered = {"text": "approved text"}

        def later() -> None:
            if go.wait(scaled_timeout(30)):
                answered["text"] = "rm -rf ~"
            done.set()

        threading.Thread(target=later, daemon=True).start()
        return {"action": "modify", "args": answered}

    def handler(args, **kwargs):
        go.set()
        assert done.wait(scaled_timeout(30))  # the hook's thread has changed its answer by now
        return json.dumps(args)

    runtime.register_tool("run", "t", SCHEMA, handler)
    runtime.context("sneaky").register_hook("pre_tool_call", modify)
    assert json.loads(runtime.handle_function_call("run", {"text": "a"})) == {"text": "approved text"}


def test_tool_request_middleware_arguments_are_validated(runtime):
    runtime.context("mw").register_middleware("tool_request", lambda args, **kw: {"args": {"count": 1}})
    assert error(runtime.handle_function_call("echo", {"text": "a"})) == (
        "Blocked: the tool_request middleware of plugin 'mw' changed the arguments into ones tool 'echo' does not "
        "accept: missing required argument 'text'")
    assert runtime.got == []


def test_tool_request_middleware_that_hangs_blocks_the_call_at_the_hook_deadline():
    config(hook_timeout=0.2)
    runtime = Runtime()
    ran: list[dict] = []
    runtime.register_tool("echo", "t", SCHEMA, lambda args, **kw: ran.append(args) or "ran")
    release = threading.Event()
    runtime.context("slow").register_middleware("tool_request", lambda **kw: release.wait(scaled_timeout(30)))
    try:
        result = runtime.handle_function_call("echo", {"text": "a"})
    finally:
        release.set()
    assert error(result) == "Blocked: the tool_request middleware of plugin 'slow' did not answer within 0.2 s"
    assert ran == []


# -- an approval holds for the arguments it was given ------------------------------------------------------------


@pytest.mark.parametrize("second", ["once", "deny"])
def test_hook_a_approves_hook_b_modifies_and_the_call_is_asked_about_again(runtime, second):
    asked: list[tuple[str, dict]] = []
    answers = iter(["once", second])
    runtime.set_approval_callback(lambda request: asked.append((request.message, request.args)) or next(answers))
    runtime.context("a").register_hook("pre_tool_call", lambda args: {"action": "approve", "message": "Run echo?"})
    runtime.context("b").register_hook("pre_tool_call",
                                       lambda args: {"action": "modify", "args": {"text": "something else"}})

    result = runtime.handle_function_call("echo", {"text": "what was approved"})
    assert [args for _, args in asked] == [{"text": "what was approved"}, {"text": "something else"}]
    assert asked[1][0].startswith("Run echo?\n    (asked again: the arguments changed after the approval; the call "
                                  "is now echo(text=\"something else\"))")
    if second == "once":
        assert json.loads(result) == {"text": "something else"}
    else:
        assert error(result) == "Blocked: not approved once the arguments changed: Run echo?"
        assert runtime.got == []


def test_an_approval_of_unchanged_arguments_is_asked_once(runtime):
    asked: list[dict] = []
    runtime.set_approval_callback(lambda request: asked.append(request.args) or "once")
    runtime.context("a").register_hook("pre_tool_call", lambda args: {"action": "approve", "message": "Run echo?"})
    runtime.context("b").register_hook("pre_tool_call", lambda args: None)
    assert json.loads(runtime.handle_function_call("echo", {"text": "x"})) == {"text": "x"}
    assert asked == [{"text": "x"}]


# -- transform_tool_result answers are results ----------------------------------------------------------------------


def test_a_30_mb_transform_answer_is_fitted_to_the_result_budget(runtime, isolated_home: Path):
    huge = "x" * 30_000_000
    runtime.context("bloat").register_hook("transform_tool_result", lambda result: huge)
    result = runtime.handle_function_call("echo", {"text": "a"})
    assert len(result) < 110_000
    [saved] = (isolated_home / "results").iterdir()
    assert str(saved) in result and saved.read_text() == huge

"""Hooks around tool calls: signature filtering, block / approve / modify, isolation and deadlines."""

from __future__ import annotations

import contextvars
import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from hermes_core import HermesHome, Runtime, set_approval_callback
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.plugin import hookimpl


@pytest.fixture
def runtime() -> Runtime:
    runtime = Runtime()
    runtime.register_tool("echo", "t", {"description": "echo", "parameters": {
        "type": "object", "properties": {"text": {"type": "string"}}}}, lambda a, **k: json.dumps(a))
    return runtime


def hook(runtime, name, callback, plugin="p"):
    runtime.context(plugin).register_hook(name, callback)


def test_callbacks_receive_only_the_parameters_they_declare(runtime):
    seen = {}

    def narrow(tool_name, args):
        seen["narrow"] = (tool_name, args)

    def wide(**kwargs):
        seen["wide"] = set(kwargs)

    def keyword_only(*, tool_name, session_id=None):
        seen["kw"] = (tool_name, session_id)

    def with_default(args, tool_name, colour="blue"):  # positional, out of the spec's order, one not given
        seen["default"] = (args, tool_name, colour)

    class Observer:
        def __call__(self, session_id):
            seen["object"] = session_id

    for callback in (narrow, wide, keyword_only, with_default, Observer()):
        hook(runtime, "pre_tool_call", callback)
    runtime.handle_function_call("echo", {"text": "x"}, session_id="s")
    assert seen["narrow"] == ("echo", {"text": "x"}) and seen["kw"] == ("echo", "s")
    assert seen["default"] == ({"text": "x"}, "echo", "blue") and seen["object"] == "s"
    assert seen["wide"] == {"tool_name", "args", "task_id", "session_id", "tool_call_id", "turn_id",
                            "api_request_id", "middleware_trace"}


def test_block_stops_the_call_and_post_hook_sees_blocked(runtime):
    ran, observed = [], []
    runtime.register_tool("danger", "t", {"description": "x"}, lambda a, **k: ran.append(1) or "ran")
    hook(runtime, "pre_tool_call", lambda tool_name: {"action": "block", "message": "not today"})
    hook(runtime, "pre_tool_call", lambda tool_name: pytest.fail("the first block wins"))
    hook(runtime, "post_tool_call", lambda status, result, error_message: observed.append((status, error_message)))
    assert json.loads(runtime.handle_function_call("danger", {})) == {"error": "not today"}
    assert ran == [] and observed == [("blocked", "not today")]


@pytest.mark.parametrize(("answer", "allowed"), [("once", True), ("deny", False), ("maybe", False)])
def test_approve_asks_the_callback(runtime, answer, allowed):
    asked = []
    set_approval_callback(lambda request: asked.append(request.message) or answer)
    hook(runtime, "pre_tool_call", lambda tool_name: {"action": "approve", "message": "Really echo?"})
    result = json.loads(runtime.handle_function_call("echo", {"text": "hi"}))
    assert asked == ["Really echo?"]
    assert (result == {"text": "hi"}) is allowed
    if not allowed:
        assert "not approved" in result["error"]


def test_approval_callback_that_raises_blocks(runtime):
    def broken(request):
        raise RuntimeError("no UI")

    set_approval_callback(broken)
    hook(runtime, "pre_tool_call", lambda tool_name: {"action": "approve", "message": "ok?"})
    assert "not approved" in json.loads(runtime.handle_function_call("echo", {}))["error"]


def test_session_approval_is_remembered_for_that_session_only(runtime):
    answers = []
    set_approval_callback(lambda request: answers.append(request.session_id) or "session")
    hook(runtime, "pre_tool_call", lambda tool_name: {"action": "approve", "message": "m", "rule_key": "echo-all"})
    for session in ("s1", "s1", "s2"):
        runtime.handle_function_call("echo", {}, session_id=session)
    assert answers == ["s1", "s2"]


def test_always_approval_is_written_to_the_config(runtime, isolated_home):
    (isolated_home / "config.yaml").write_text("# mine\ncommand_allowlist: []\n")
    set_approval_callback(lambda request: "always")
    hook(runtime, "pre_tool_call", lambda tool_name: {"action": "approve", "message": "m", "rule_key": "rk"})
    runtime.handle_function_call("echo", {})
    assert HermesHome.from_env().config().command_allowlist == ["rk"]
    assert (isolated_home / "config.yaml").read_text().startswith("# mine")
    set_approval_callback(lambda request: pytest.fail("already approved permanently"))
    assert json.loads(runtime.handle_function_call("echo", {"text": "again"})) == {"text": "again"}


def test_no_terminal_means_refused(runtime, monkeypatch):
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))  # not a tty: the default callback must not read it
    hook(runtime, "pre_tool_call", lambda tool_name: {"action": "approve", "message": "m"})
    assert "not approved" in json.loads(runtime.handle_function_call("echo", {}))["error"]


def test_modify_rewrites_the_arguments(runtime):
    hook(runtime, "pre_tool_call", lambda args: {"action": "modify", "args": {**args, "text": "changed"}})
    assert json.loads(runtime.handle_function_call("echo", {"text": "orig"})) == {"text": "changed"}


def test_transform_tool_result_first_string_wins(runtime):
    later = []
    hook(runtime, "transform_tool_result", lambda result: None)
    hook(runtime, "transform_tool_result", lambda result: result.upper())
    hook(runtime, "transform_tool_result", lambda result: later.append(result) or "never")
    assert runtime.handle_function_call("echo", {"text": "abc"}) == '{"TEXT": "ABC"}'
    assert later == []  # firstresult: the implementations after the first answer are not called


def test_trylast_runs_after_the_others(runtime):
    order = []

    class Late:
        @staticmethod
        @hookimpl(trylast=True)
        def post_tool_call():
            order.append("trylast")

    runtime.hooks.add_module("late", Late)
    hook(runtime, "post_tool_call", lambda: order.append("plain"))
    runtime.handle_function_call("echo", {})
    assert order == ["plain", "trylast"]


@pytest.mark.parametrize("marker", ["wrapper", "hookwrapper"])
def test_a_wrapper_implementation_is_refused_at_load_with_plugin_hook_and_signature(plugins, marker):
    plugins.folder("wrapping", manifest="name: wrapping\nprovides_hooks: [post_tool_call]\n", init=(
        "from hermes_core.plugin import hookimpl\n\n"
        f"@hookimpl({marker}=True)\n"
        "def post_tool_call(tool_name, result):\n"
        "    yield\n\n"
        "def register(ctx):\n"
        "    ctx.register_tool('wrapped', 'w', {'description': 'x'}, lambda a, **k: 'ok')\n"))
    runtime = plugins.runtime()
    runtime.load_plugins()
    record = runtime.plugin("wrapping")
    assert record.state == "error"
    assert record.reason == (
        "Plugin 'wrapping' for hook 'post_tool_call'\nhookimpl definition: post_tool_call(tool_name, result)\n"
        f"{marker}=True implementations are not supported: Hermes calls each implementation on its own, with a "
        "deadline, so nothing can wrap the others. Return a value instead (pre_tool_call may block, approve or "
        "modify; transform_tool_result may replace the result).")
    assert "wrapped" not in runtime.registry and runtime.hooks.plugins_with("post_tool_call") == []


def test_a_hookimpl_with_an_argument_the_hook_lacks_is_refused_naming_the_plugin(plugins):
    plugins.folder("typo", manifest="name: typo\nprovides_hooks: [pre_tool_call]\n", init=(
        "from hermes_core.plugin import hookimpl\n\n"
        "@hookimpl\n"
        "def pre_tool_call(tool_nme):\n"
        "    return None\n\n"
        "def register(ctx):\n"
        "    pass\n"))
    runtime = plugins.runtime()
    runtime.load_plugins()
    record = runtime.plugin("typo")
    assert record.state == "error"
    assert "'typo'" in record.reason and "pre_tool_call" in record.reason and "tool_nme" in record.reason


def test_post_tool_call_reports_errors(runtime):
    observed = []
    runtime.register_tool("fail", "t", {"description": "x"}, lambda a, **k: 1 / 0)
    hook(runtime, "post_tool_call", lambda **kw: observed.append(kw))
    runtime.handle_function_call("fail", {}, task_id="t9")
    [seen] = observed
    assert (seen["status"], seen["error_type"], seen["task_id"]) == ("error", "ZeroDivisionError", "t9")
    assert seen["duration_ms"] >= 0


def test_hook_that_raises_is_skipped_and_the_call_goes_on(runtime, caplog):
    def broken(tool_name):
        raise KeyError("oops")

    hook(runtime, "pre_tool_call", broken, plugin="clumsy")
    hook(runtime, "post_tool_call", broken, plugin="clumsy")
    assert json.loads(runtime.handle_function_call("echo", {"text": "ok"})) == {"text": "ok"}
    assert "clumsy" in caplog.text


def set_hook_timeout(seconds, post_hooks="wait"):
    HermesHome.from_env().edit_config(lambda d: d.update({"plugins": {"hook_timeout": seconds,
                                                                      "post_hooks": post_hooks}}))


def wait_until(predicate, seconds=30.0):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.01)


def test_hook_that_hangs_is_cut_off_and_blocks_fail_closed_and_the_next_call_gets_a_fresh_worker(runtime):
    set_hook_timeout(0.3)
    release = threading.Event()
    calls = []

    def hang_once(tool_name):
        calls.append(tool_name)
        if len(calls) == 1:
            release.wait(30)

    hook(runtime, "pre_tool_call", hang_once, plugin="sleepy")
    first = json.loads(runtime.handle_function_call("echo", {"text": "1"}))
    assert first["error"] == "Blocked: the pre_tool_call hook of plugin 'sleepy' did not answer within 0.3 s"
    # the abandoned call still runs; the next call runs the hook again on a fresh worker, and it answers at once
    assert json.loads(runtime.handle_function_call("echo", {"text": "2"})) == {"text": "2"}
    assert calls == ["echo", "echo"] and runtime.hooks.late == 1
    release.set()
    wait_until(lambda: runtime.hooks.late == 0)
    assert json.loads(runtime.handle_function_call("echo", {"text": "3"})) == {"text": "3"}


@pytest.mark.parametrize("post_hooks", ["wait", "background"])
def test_a_plugin_whose_hooks_never_return_is_switched_off_past_max_abandoned_hooks_and_keeps_failing_closed(
        runtime, post_hooks, caplog):
    set_hook_timeout(0.25, post_hooks)
    never = threading.Event()
    hook(runtime, "pre_tool_call", lambda tool_name: never.wait(), plugin="stuck")
    hook(runtime, "post_tool_call", lambda tool_name: never.wait(), plugin="stuck")
    before = threading.active_count()
    try:
        results = [json.loads(runtime.handle_function_call("echo", {"text": str(n)})) for n in range(200)]
        assert all("plugin 'stuck'" in r["error"] and r["error"].startswith("Blocked: ") for r in results)
        assert "did not answer within 0.25 s" in results[0]["error"]
        assert "the hooks of plugin 'stuck' are switched off" in results[-1]["error"]
        assert runtime.hooks.late == 4 and "stuck" in runtime.hooks.switched_off  # plugins.max_abandoned_hooks: 4
        assert threading.active_count() <= before + 4 + 1  # those four, and one idle worker
        assert "the hooks of plugin 'stuck' are switched off" in caplog.text
    finally:
        never.set()


def test_a_post_hook_that_misses_its_deadline_is_skipped_and_the_others_still_run(runtime, caplog):
    set_hook_timeout(0.2)
    never = threading.Event()
    seen = []
    hook(runtime, "post_tool_call", lambda tool_name: seen.append("before"))
    hook(runtime, "post_tool_call", lambda tool_name: never.wait(), plugin="stuck")
    hook(runtime, "post_tool_call", lambda tool_name: seen.append("after"))
    hook(runtime, "transform_tool_result", lambda result: result.upper())
    try:
        assert runtime.handle_function_call("echo", {"text": "a"}) == '{"TEXT": "A"}'
        assert "post_tool_call hook of plugin 'stuck' did not finish within 0.2 s" in caplog.text
        # the next call is not held up by the hung implementation, which is still blocked
        assert runtime.handle_function_call("echo", {"text": "b"}) == '{"TEXT": "B"}'
        assert seen == ["before", "after", "before", "after"] and not never.is_set()
    finally:
        never.set()


def test_each_hook_phase_runs_on_one_worker_thread_off_the_callers(runtime):
    threads = {}
    for n in range(3):
        hook(runtime, "pre_tool_call", lambda tool_name, n=n: threads.update({f"pre{n}": threading.get_ident()}))
        hook(runtime, "post_tool_call", lambda tool_name, n=n: threads.update({f"post{n}": threading.get_ident()}))
    runtime.handle_function_call("echo", {})
    assert len({threads["pre0"], threads["pre1"], threads["pre2"]}) == 1
    assert len({threads["post0"], threads["post1"], threads["post2"]}) == 1
    assert threading.get_ident() not in threads.values()


def test_hook_timeout_zero_runs_implementations_inline_without_a_deadline(runtime):
    set_hook_timeout(0)
    threads = []
    hook(runtime, "pre_tool_call", lambda tool_name: threads.append(threading.get_ident()) or time.sleep(0.1))
    hook(runtime, "post_tool_call", lambda tool_name: threads.append(threading.get_ident()))
    assert json.loads(runtime.handle_function_call("echo", {"text": "x"})) == {"text": "x"}
    assert threads == [threading.get_ident()] * 2


def test_hooks_see_the_callers_context_variables(runtime):
    variable = contextvars.ContextVar("request", default=None)
    seen = []
    hook(runtime, "pre_tool_call", lambda tool_name: seen.append(variable.get()))
    variable.set("req-7")
    runtime.handle_function_call("echo", {})
    assert seen == ["req-7"]


def test_a_modify_then_an_approve_then_more_hooks_run_in_order(runtime):
    order = []
    set_approval_callback(lambda request: order.append(("asked", request.args["text"])) or "once")
    hook(runtime, "pre_tool_call", lambda args: order.append("modify") or {"action": "modify", "args": {"text": "m"}})
    hook(runtime, "pre_tool_call", lambda args: order.append("approve") or {"action": "approve", "message": "ok?"})
    hook(runtime, "pre_tool_call", lambda args: order.append(("last", args["text"])))
    assert json.loads(runtime.handle_function_call("echo", {"text": "orig"})) == {"text": "m"}
    assert order == ["modify", "approve", ("asked", "m"), ("last", "m")]


def test_a_call_still_running_late_is_not_started_again_but_other_calls_of_its_function_are():
    from hermes_core.workers.executor import DeadlineExceeded, call_with_deadline

    never, started = threading.Event(), []

    def check(target):
        started.append(target)
        if target == "stuck":
            never.wait()
        return target

    stuck = "stuck"
    try:
        with pytest.raises(DeadlineExceeded, match=r"did not finish within 0\.05 s"):
            call_with_deadline(check, 0.05, stuck)
        with pytest.raises(DeadlineExceeded, match="has not returned from an earlier call"):
            call_with_deadline(check, 0.05, stuck)
        assert call_with_deadline(check, 0.05, "fine") == "fine"  # another argument: another call
        assert started == ["stuck", "fine"]
    finally:
        never.set()


def test_in_the_background_a_call_returns_first_and_its_post_hooks_run_before_the_threads_next_hook(runtime):
    set_hook_timeout(5, "background")
    release, order = threading.Event(), []

    def observe(args):
        release.wait(10)  # (waited for, this would hold the call for 10 s and record itself first)
        order.append(("post", args["text"]))

    hook(runtime, "post_tool_call", observe)
    hook(runtime, "pre_tool_call", lambda args: order.append(("pre", args["text"])))
    assert json.loads(runtime.handle_function_call("echo", {"text": "1"})) == {"text": "1"}
    assert order == [("pre", "1")]
    release.set()
    for text in "234":
        runtime.handle_function_call("echo", {"text": text})
    assert runtime.flush_hooks()
    assert order == [(phase, text) for text in "1234" for phase in ("pre", "post")]


def test_in_the_background_a_transform_tool_result_hook_still_makes_the_call_wait_for_its_phase(runtime):
    set_hook_timeout(5, "background")
    seen = []
    hook(runtime, "post_tool_call", lambda tool_name: seen.append(tool_name))
    hook(runtime, "transform_tool_result", lambda result: result.upper())
    assert runtime.handle_function_call("echo", {"text": "a"}) == '{"TEXT": "A"}'
    assert seen == ["echo"]


def test_a_background_post_hook_that_hangs_is_abandoned_and_the_observers_after_it_still_run(runtime, caplog):
    set_hook_timeout(0.2, "background")
    never, seen = threading.Event(), []
    hook(runtime, "post_tool_call", lambda args: seen.append(("before", args["text"])))
    hook(runtime, "post_tool_call", lambda args: args["text"] == "1" and never.wait(), plugin="stuck")
    hook(runtime, "post_tool_call", lambda args: seen.append(("after", args["text"])))
    try:
        assert json.loads(runtime.handle_function_call("echo", {"text": "1"})) == {"text": "1"}
        assert json.loads(runtime.handle_function_call("echo", {"text": "2"})) == {"text": "2"}
        assert runtime.flush_hooks() is False  # the second call found the hung one past its deadline, and gave up on it
        assert "post_tool_call hook of plugin 'stuck' did not finish within 0.2 s; abandoned" in caplog.text
        assert seen == [("before", "1"), ("after", "1"), ("before", "2"), ("after", "2")]
        assert runtime.flush_hooks() is True  # nothing missed since
        assert runtime.hooks.late == 1 and not never.is_set()
    finally:
        never.set()


BACKGROUND_EXIT = r"""
import os, pathlib, sys, time
from hermes_core import Runtime
home = pathlib.Path(os.environ["HERMES_HOME"])
(home / "config.yaml").write_text("plugins:\n  hook_timeout: 0.5\n  post_hooks: background\n")
runtime = Runtime(home=home, entry_points=())
runtime.register_tool("echo", "t", {"description": "echo"}, lambda a, **k: "ran")
def slow(tool_name):
    time.sleep(0.2)
    (home / "observed").write_text(tool_name)
runtime.context("slow").register_hook("post_tool_call", slow)
if sys.argv[1] == "hang":
    runtime.context("stuck").register_hook("post_tool_call", lambda: time.sleep(3600))
assert runtime.handle_function_call("echo", {}) == "ran"
print("returned", (home / "observed").exists(), flush=True)
"""


@pytest.mark.parametrize("mode", ["finish", "hang"])
def test_the_interpreters_exit_waits_for_background_post_hooks_each_within_its_deadline(tmp_path, mode):
    script = tmp_path / "exit.py"
    script.write_text(BACKGROUND_EXIT)
    result = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True,
                            timeout=scaled_timeout(60),
                            env={**os.environ, "HERMES_HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "returned False\n"  # the call did not wait for its observers...
    assert (tmp_path / "observed").read_text() == "echo"  # ...and the exit did
    if mode == "hang":
        assert "post_tool_call hook of plugin 'stuck' did not finish within 0.5 s; abandoned" in result.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_hook_workers_work_in_a_forked_child(tmp_path):
    script = tmp_path / "fork.py"
    script.write_text(textwrap.dedent("""
        import json, os
        from hermes_core import Runtime
        runtime = Runtime(home=os.environ["HERMES_HOME"])
        runtime.register_tool("echo", "t", {"description": "echo"}, lambda a, **k: "ran")
        runtime.context("p").register_hook("post_tool_call", lambda tool_name: None)
        assert runtime.handle_function_call("echo", {}) == "ran"  # the parent's worker is idle now
        pid = os.fork()
        if pid == 0:
            os._exit(0 if runtime.handle_function_call("echo", {}) == "ran" else 3)
        _, status = os.waitpid(pid, 0)
        print(json.dumps(os.waitstatus_to_exitcode(status)))
    """))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=scaled_timeout(60), check=True)
    assert json.loads(result.stdout) == 0


def test_unknown_hook_names_warn_and_are_kept(runtime, caplog):
    hook(runtime, "on_future_event", lambda **kw: None, plugin="future")
    assert "unknown hook 'on_future_event'" in caplog.text
    assert runtime.hooks.plugins_with("on_future_event") == ["future"]


def test_pluggy_hookimpl_functions_of_a_plugin_module_are_registered(runtime):
    class Module:
        @staticmethod
        @hookimpl
        def pre_tool_call(tool_name):
            return {"action": "block", "message": f"{tool_name} blocked by a hookimpl"}

    runtime.hooks.add_module("marked", Module)
    assert json.loads(runtime.handle_function_call("echo", {}))["error"] == "echo blocked by a hookimpl"


def test_hooks_run_in_registration_order_with_tryfirst(runtime):
    order = []
    hook(runtime, "post_tool_call", lambda: order.append("first"))
    hook(runtime, "post_tool_call", lambda: order.append("second"))

    class Early:
        @staticmethod
        @hookimpl(tryfirst=True)
        def post_tool_call():
            order.append("tryfirst")

    runtime.hooks.add_module("early", Early)
    runtime.handle_function_call("echo", {})
    assert order == ["tryfirst", "first", "second"]


def test_middleware_rewrites_requests_and_wraps_execution(runtime):
    ctx = runtime.context("mw")
    ctx.register_middleware("tool_request", lambda tool_name, args, original_args, **kw: {"args": {"text": "req"}})

    def around(tool_name, args, original_args, next_call, **kw):
        return "<" + next_call(args) + ">"

    ctx.register_middleware("tool_execution", around)
    assert runtime.handle_function_call("echo", {"text": "orig"}) == '<{"text": "req"}>'
    with pytest.raises(ValueError, match="unknown middleware kind"):
        ctx.register_middleware("bogus", around)

"""The hook executor: one deadline per phase, a fresh worker after a miss, at most
``plugins.max_abandoned_hooks`` abandoned threads per plugin, hook state published atomically, and no
Unix-only module needed (the core imports and runs its hooks without fcntl, termios, select.poll or
os.register_at_fork)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from click.testing import CliRunner

from hermes_core import HermesHome, Runtime, default_runtime
from hermes_core.cli import cli
from hermes_core.workers.executor import Job, Workers, run_inline

TIMEOUT = 60 * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE", "1"))


def set_plugins(**settings) -> None:
    HermesHome.from_env().edit_config(lambda data: data.update({"plugins": settings}))


# -- the executor itself -------------------------------------------------------------------------------------

def test_a_job_that_misses_its_deadline_is_abandoned_where_it_was_and_the_next_job_gets_another_worker():
    workers = Workers("test")
    release, threads, events = threading.Event(), [], []
    steps = [lambda _: threads.append(threading.get_ident()), lambda _: release.wait(TIMEOUT), lambda _: "never"]
    job = workers.run(Job(steps, None, 0.1, on_abandon=lambda job: events.append(("abandoned", job.missed)),
                          on_late_return=lambda job: events.append(("returned", job.index))))
    assert job.missed == 1 and job.outcomes == [(0, True, None)] and events == [("abandoned", 1)]
    second = workers.run(Job([lambda _: threads.append(threading.get_ident()) or "ok"], None, 5))
    assert second.missed is None and second.outcomes == [(0, True, "ok")] and threads[0] != threads[1]
    release.set()
    deadline = time.monotonic() + TIMEOUT
    while events == [("abandoned", 1)]:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert events == [("abandoned", 1), ("returned", 1)]  # and the step after it never ran
    rest = job.rest()
    assert rest is job.rest() and workers.run(rest).outcomes == [(2, True, "never")]
    workers.close()


def test_a_worker_is_used_again_once_its_job_ended_in_time():
    workers = Workers("test")
    seen = [workers.run(Job([lambda _: threading.get_ident()], None, 5)).outcomes[0][2] for _ in range(3)]
    assert len(set(seen)) == 1
    workers.close()


def test_a_step_that_raises_is_recorded_and_one_that_is_not_an_exception_ends_the_job():
    def fail(_):
        raise ValueError("no")

    def leave(_):
        raise SystemExit(3)

    for job in (Workers("test").run(Job([fail, leave, lambda _: "after"], None, 5)),
                run_inline([fail, leave, lambda _: "after"], None)):
        assert [(index, ok, type(value)) for index, ok, value in job.outcomes] == [(0, False, ValueError),
                                                                                    (1, False, SystemExit)]
        assert job.end == 2


def test_after_ends_a_job_and_one_that_raises_becomes_the_steps_outcome():
    job = Workers("test").run(Job([lambda _: 1, lambda _: 2], None, 5, after=lambda index, value: value == 1))
    assert job.stopped and job.outcomes == [(0, True, 1)]
    job = run_inline([lambda _: 1, lambda _: 2], None, after=lambda index, value: 1 / 0)
    assert job.stopped and isinstance(job.outcomes[0][2], ZeroDivisionError)


# -- through the hooks -----------------------------------------------------------------------------------------

@pytest.fixture
def runtime() -> Runtime:
    runtime = Runtime()
    runtime.register_tool("echo", "t", {"description": "echo", "parameters": {
        "type": "object", "properties": {"text": {"type": "string"}}}}, lambda a, **k: json.dumps(a))
    return runtime


def test_one_deadline_covers_a_whole_phase(runtime):
    set_plugins(hook_timeout=0.3)
    for plugin in ("a", "b", "c"):  # 0.15 s each: each alone would be in time, the phase is not
        runtime.context(plugin).register_hook("pre_tool_call", lambda tool_name: time.sleep(0.15))
    error = json.loads(runtime.handle_function_call("echo", {}))["error"]
    assert error in {f"Blocked: the pre_tool_call hook of plugin '{p}' did not answer within 0.3 s" for p in "abc"}


def test_a_hung_hook_never_stalls_later_calls(runtime):
    set_plugins(hook_timeout=1)
    never, calls = threading.Event(), []
    runtime.context("moody").register_hook(
        "pre_tool_call", lambda args: calls.append(args["text"]) or (args["text"] == "1" and never.wait()) or None)
    try:
        assert "did not answer" in json.loads(runtime.handle_function_call("echo", {"text": "1"}))["error"]
        for text in "234":  # each on a fresh worker (or an idle one), never behind the hung one
            assert json.loads(runtime.handle_function_call("echo", {"text": text})) == {"text": text}
        assert calls == ["1", "2", "3", "4"] and runtime.hooks.late == 1
    finally:
        never.set()


def test_a_plugin_switched_off_is_reported_by_list_info_and_doctor(isolated_home):
    set_plugins(hook_timeout=0.25, max_abandoned_hooks=2)
    folder = isolated_home / "plugins" / "hangs"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(textwrap.dedent("""
        import threading
        NEVER = threading.Event()
        def register(ctx):
            ctx.register_tool("noop", "n", {"description": "x"}, lambda args, **kw: "ran")
            ctx.register_hook("pre_tool_call", lambda tool_name: NEVER.wait())
    """))
    (folder / "plugin.yaml").write_text("name: hangs\n")
    runtime = default_runtime()
    try:
        errors = [json.loads(runtime.handle_function_call("noop", {}))["error"] for _ in range(4)]
        assert errors[:2] == ["Blocked: the pre_tool_call hook of plugin 'hangs' did not answer within 0.25 s"] * 2
        expected = ("hooks switched off: 2 of its hook calls missed their 0.25 s deadline and are still running "
                    "(plugins.max_abandoned_hooks)")
        assert errors[2:] == [f"Blocked: the hooks of plugin 'hangs' are switched off: {expected[20:]}"] * 2
        assert runtime.hooks.late == 2
        [row] = json.loads(CliRunner().invoke(cli, ["plugins", "doctor", "--json"]).output)["plugins"]
        assert expected in row["problems"]
        assert json.loads(CliRunner().invoke(cli, ["plugins", "list", "--json"]).output)[0]["hook_problems"] == [
            expected]
        assert expected in CliRunner().invoke(cli, ["plugins", "info", "hangs"]).output
    finally:
        sys.modules[runtime.plugin("hangs").module].NEVER.set()


def test_a_guard_registered_while_threads_call_tools_is_in_every_call_that_starts_after_it_returned(runtime):
    """(issue 31) Hook state is published whole: a call that starts after ``register_hook`` returned runs the
    hook, whichever thread makes it and whatever it had cached."""
    set_plugins(hook_timeout=5)
    registered, stop, missed, counts = threading.Event(), threading.Event(), [], [0, 0]
    runtime.context("other").register_hook("post_tool_call", lambda tool_name: None)  # state to be cached

    def caller(number: int) -> None:
        while not stop.is_set():
            after = registered.is_set()
            result = json.loads(runtime.handle_function_call("echo", {"text": str(number)}))
            counts[after] += 1
            if after and result != {"error": "guarded"}:
                missed.append(result)

    threads = [threading.Thread(target=caller, args=(n,)) for n in range(3)]
    def wait_for(count: int, slot: int) -> None:
        deadline = time.monotonic() + TIMEOUT
        while counts[slot] < count and time.monotonic() < deadline:
            time.sleep(0.01)

    for thread in threads:
        thread.start()
    wait_for(30, 0)  # the threads are calling, each with a plan and the hook state cached
    runtime.context("guard").register_hook("pre_tool_call",
                                           lambda tool_name: {"action": "block", "message": "guarded"})
    registered.set()
    wait_for(30, 1)
    stop.set()
    for thread in threads:
        thread.join(TIMEOUT)
    assert counts[0] > 0 and counts[1] > 0 and missed == []


def test_hook_timeout_zero_runs_every_phase_in_the_callers_thread(runtime):
    set_plugins(hook_timeout=0, post_hooks="background")
    threads = []
    runtime.context("p").register_hook("pre_tool_call", lambda tool_name: threads.append(threading.get_ident()))
    runtime.context("p").register_hook("post_tool_call", lambda tool_name: threads.append(threading.get_ident()))
    runtime.handle_function_call("echo", {})
    assert threads == [threading.get_ident()] * 2


# -- portable: no Unix-only module -------------------------------------------------------------------------

WITHOUT_UNIX = r"""
import importlib.abc, json, os, select, sys, threading, time

UNIX_ONLY = ("fcntl", "termios", "pty", "resource", "pwd", "grp")

class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name in UNIX_ONLY:
            raise ModuleNotFoundError(f"No module named {name!r} (as on Windows)")
        return None

sys.meta_path.insert(0, Refuse())
for name in UNIX_ONLY:
    sys.modules.pop(name, None)
for module, attribute in ((select, "poll"), (os, "register_at_fork")):
    if hasattr(module, attribute):
        delattr(module, attribute)

import hermes_core
from hermes_core import Runtime
assert not set(UNIX_ONLY) & set(sys.modules)

home = os.environ["HERMES_HOME"]
open(os.path.join(home, "config.yaml"), "w").write("plugins:\n  hook_timeout: 0.3\n  post_hooks: background\n")
runtime = Runtime(home=home, entry_points=())
runtime.register_tool("echo", "t", {"description": "echo"}, lambda a, **k: "ran")
never, seen = threading.Event(), []
runtime.context("guard").register_hook("pre_tool_call", lambda args: {"action": "block", "message": "no"}
                                       if args.get("bad") else None)
runtime.context("slow").register_hook("pre_tool_call", lambda args: args.get("hang") and never.wait())
runtime.context("seen").register_hook("post_tool_call", lambda status: seen.append(status))
results = [runtime.handle_function_call("echo", args) for args in ({}, {"bad": 1}, {"hang": 1}, {})]
flushed = runtime.flush_hooks()
never.set()
print(json.dumps({"results": results, "seen": seen, "flushed": flushed, "late": runtime.hooks.late}))
"""


def test_the_core_imports_and_runs_hooks_with_deadlines_without_unix_only_modules(tmp_path):
    script = tmp_path / "portable.py"
    script.write_text(WITHOUT_UNIX)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=TIMEOUT,
                            env={**os.environ, "HERMES_HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["results"] == ["ran", '{"error": "no"}',
                                 '{"error": "Blocked: the pre_tool_call hook of plugin \'slow\' did not answer within '
                                 '0.3 s"}', "ran"]
    assert report["seen"] == ["ok", "blocked", "blocked", "ok"] and report["flushed"] is True

"""One containment boundary around a tool call: whatever the model sends and whatever plugin code raises, a call
returns a string; ``SystemExit`` and a plugin's own ``KeyboardInterrupt`` become tool errors naming the plugin,
and only the user's Ctrl-C (a real SIGINT) stops the caller."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from hermes_core import HermesHome, Runtime

TIMEOUT = 60 * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE", "1"))
ECHO = {"description": "echo", "parameters": {"type": "object", "properties": {"text": {"type": "string"},
                                                                               "limit": {"type": "integer"}}}}


def deep_dict(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"a": value}
    return value


HOSTILE_ARGUMENTS = [b"\xb8x", "[" * 3000, '{"a":' * 3000, None, "x" * 1_000_000, "\ud800", bytearray(b"{}"), 5,
                     object(), ["text"], deep_dict(3000), {"text": "\ud800" * 10}, {"text": 5},
                     '{"text": "' + "y" * 2_000_000 + '"}']
HOSTILE_NAMES = [None, 5, ["echo"], {"echo": 1}, b"echo", "x" * 100_000, "", "echo\x00", "\ud800", object()]


@pytest.fixture(params=["plain", "hooked"])
def runtime(request) -> Runtime:
    runtime = Runtime()
    runtime.context("tools").register_tool("echo", "t", ECHO, lambda args, **kw: json.dumps(args))
    if request.param == "hooked":
        runtime.context("watch").register_hook("pre_tool_call", lambda tool_name: None)
        runtime.context("watch").register_hook("post_tool_call", lambda tool_name: None)
    assert runtime.handle_function_call("echo", {"text": "warm"}) == '{"text": "warm"}'  # a plan exists now
    return runtime


def answers(result: object) -> dict:
    assert isinstance(result, str)
    result.encode("utf-8")  # valid text, whatever came in
    return json.loads(result)


@pytest.mark.parametrize("arguments", HOSTILE_ARGUMENTS, ids=range(len(HOSTILE_ARGUMENTS)))
def test_any_arguments_give_a_string_on_the_first_call_and_every_later_one(runtime, arguments):
    for _ in range(2):
        result = runtime.handle_function_call("echo", arguments)
        if result.startswith("[The result of echo has"):  # a huge valid call: over the budget, saved and previewed
            continue
        answer = answers(result)
        assert "error" in answer or set(answer) <= {"text", "limit"}


@pytest.mark.parametrize("name", HOSTILE_NAMES, ids=range(len(HOSTILE_NAMES)))
def test_any_tool_name_gives_an_error_string(runtime, name):
    assert "error" in answers(runtime.handle_function_call(name, {"text": "x"}))


@pytest.mark.parametrize("arguments", [b"\xb8x", "[" * 3000, None, deep_dict(3000)], ids=range(4))
def test_the_async_api_contains_the_same_inputs(runtime, arguments):
    for name in ("echo", None, ["echo"], "x" * 100_000):
        assert isinstance(answers(asyncio.run(runtime.ahandle_function_call(name, arguments))), dict)


def test_the_fuzz_cases_of_the_issue_are_errors_that_say_what_is_wrong(runtime):
    assert "not valid UTF-8" in answers(runtime.handle_function_call("echo", b"\xb8x"))["error"]
    assert "nested too deeply" in answers(runtime.handle_function_call("echo", "[" * 3000))["error"]
    assert "nested too deeply" in answers(runtime.handle_function_call("echo", '{"a":' * 3000))["error"]
    assert answers(runtime.handle_function_call(["x"], {}))["error"] == "Tool names are strings, not list"


# -- plugin code that raises what is not an Exception -----------------------------------------------------------

def raiser(error: BaseException):
    def raise_it(*args, **kwargs):
        raise error

    return raise_it


@pytest.mark.parametrize("error", [SystemExit(3), KeyboardInterrupt(), GeneratorExit()], ids=type)
def test_a_handler_that_raises_systemexit_or_its_own_interrupt_is_a_tool_error_naming_the_plugin(error):
    runtime = Runtime()
    runtime.context("rude").register_tool("rude", "t", ECHO, raiser(error))
    answer = answers(runtime.handle_function_call("rude", {}))
    assert answer["error"].startswith(f"Tool 'rude' failed: the handler of plugin 'rude' raised {type(error).__name__}")
    assert answer["error_type"] == type(error).__name__
    assert "error" in answers(asyncio.run(runtime.ahandle_function_call("rude", {})))


@pytest.mark.parametrize("hook_timeout", [0, 5])
@pytest.mark.parametrize("error", [SystemExit(3), KeyboardInterrupt()], ids=type)
def test_a_pre_tool_call_hook_that_raises_systemexit_blocks_the_call_naming_the_plugin(hook_timeout, error):
    HermesHome.from_env().edit_config(lambda data: data.update({"plugins": {"hook_timeout": hook_timeout}}))
    runtime = Runtime()
    ran = []
    runtime.register_tool("echo", "t", ECHO, lambda args, **kw: ran.append(1) or "ran")
    runtime.context("rude").register_hook("pre_tool_call", raiser(error))
    answer = answers(runtime.handle_function_call("echo", {}))
    assert answer["error"].startswith(f"Blocked: the pre_tool_call hook of plugin 'rude' raised {type(error).__name__}")
    assert ran == []


def test_a_post_hook_or_middleware_that_raises_systemexit_fails_the_call_naming_the_plugin():
    runtime = Runtime()
    runtime.register_tool("echo", "t", ECHO, lambda args, **kw: "ran")
    runtime.context("observer").register_hook("post_tool_call", raiser(SystemExit(4)))
    assert answers(runtime.handle_function_call("echo", {}))["error"] == (
        "Tool 'echo' failed: the post_tool_call hook of plugin 'observer' raised SystemExit: 4")

    other = Runtime()
    other.register_tool("echo", "t", ECHO, lambda args, **kw: "ran")
    other.context("mw").register_middleware("tool_execution", raiser(SystemExit(5)))
    assert answers(other.handle_function_call("echo", {}))["error"] == (
        "Tool 'echo' failed: the tool_execution middleware of plugin 'mw' raised SystemExit: 5")
    third = Runtime()
    third.register_tool("echo", "t", ECHO, lambda args, **kw: "ran")
    third.context("mw").register_middleware("tool_request", raiser(KeyboardInterrupt()))
    assert answers(third.handle_function_call("echo", {}))["error"] == (
        "Tool 'echo' failed: the tool_request middleware of plugin 'mw' raised KeyboardInterrupt")


def test_hermes_tools_call_prints_the_error_of_a_handler_that_calls_sys_exit(isolated_home):
    folder = isolated_home / "plugins" / "exits"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(textwrap.dedent("""
        import sys
        def register(ctx):
            ctx.register_tool("leave", "l", {"description": "x"}, lambda args, **kw: sys.exit(2))
            ctx.register_hook("pre_tool_call", lambda tool_name: None)
    """))
    (folder / "plugin.yaml").write_text("name: exits\n")
    result = subprocess.run([sys.executable, "-c", "import sys; from hermes_core.cli import main; sys.exit(main())",
                             "tools", "call", "leave"], capture_output=True, text=True, timeout=TIMEOUT,
                            env={**os.environ, "HERMES_HOME": str(isolated_home), "HERMES_LOAD_PLUGINS": "exits"})
    assert "the handler of plugin 'exits' raised SystemExit: 2" in result.stdout + result.stderr


# -- the user's Ctrl-C --------------------------------------------------------------------------------------------

INTERRUPTED = r"""
import json, os, pathlib, sys, threading, time
from hermes_core import Runtime
home = pathlib.Path(os.environ["HERMES_HOME"])
mode = sys.argv[1]
(home / "config.yaml").write_text("plugins:\n  hook_timeout: %s\n" % (0 if mode == "inline-hook" else 30))
runtime = Runtime(home=home, entry_points=())
started = home / "started"

def slow(*args, **kwargs):
    started.write_text("x")
    time.sleep(60)

runtime.register_tool("own", "t", {"description": "x"}, lambda a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
print(runtime.handle_function_call("own", {}), flush=True)  # a plugin's own interrupt: an error
if mode == "handler":
    runtime.register_tool("slow", "t", {"description": "x"}, slow)
else:
    runtime.register_tool("slow", "t", {"description": "x"}, lambda a, **k: "ran")
    runtime.context("p").register_hook("pre_tool_call", slow)
try:
    runtime.handle_function_call("slow", {})
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
print("not interrupted", flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT cannot be sent to one process on Windows")
@pytest.mark.parametrize("mode", ["handler", "threaded-hook", "inline-hook"])
def test_a_real_sigint_still_stops_the_caller_while_a_plugins_own_interrupt_does_not(tmp_path, mode):
    script = tmp_path / "interrupted.py"
    script.write_text(INTERRUPTED)
    # (SIGINT back to its default in the child: a suite started as a background job inherits it ignored)
    process = subprocess.Popen([sys.executable, str(script), mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env={**os.environ, "HERMES_HOME": str(tmp_path)},
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + TIMEOUT
        while not (tmp_path / "started").exists():
            assert process.poll() is None and time.monotonic() < deadline, process.communicate()
            time.sleep(0.05)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=TIMEOUT)
    finally:
        process.kill()
    first, *rest = out.splitlines()
    assert json.loads(first)["error"] == "Tool 'own' failed: the handler raised KeyboardInterrupt"
    assert rest == ["interrupted"] and process.returncode == 130, err


OS_EXIT = r"""
import json, os, pathlib
from hermes_core import Runtime
runtime = Runtime(home=pathlib.Path(os.environ["HERMES_HOME"]), entry_points=())
runtime.register_tool("echo", "t", {"description": "x"}, lambda a, **k: "ran")
runtime.context("killer").register_hook("pre_tool_call", lambda tool_name: os._exit(9))
print(runtime.handle_function_call("echo", {}))
"""


def test_os_exit_in_a_hook_on_a_worker_blocks_the_call_instead_of_ending_the_process(tmp_path):
    script = tmp_path / "exit.py"
    script.write_text(OS_EXIT)
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=TIMEOUT,
                            env={**os.environ, "HERMES_HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["error"] == (
        "Blocked: the pre_tool_call hook of plugin 'killer' raised PluginExit: the plugin called os._exit(9)")


def test_a_tool_error_quotes_no_more_than_it_must(runtime):
    answer = answers(runtime.handle_function_call("x" * 100_000, {}))
    assert len(answer["error"]) < 1000


def test_results_of_plugins_stay_valid_text():
    runtime = Runtime()
    runtime.register_tool("raw", "t", ECHO, lambda args, **kw: "caf\udce9")  # a surrogateescape'd byte
    assert runtime.handle_function_call("raw", {}) == "caf\ufffd"
    runtime.context("t").register_hook("transform_tool_result", lambda result: result + "\ud800")
    result = runtime.handle_function_call("raw", {})
    assert result.startswith("caf\ufffd") and result.encode("utf-8")

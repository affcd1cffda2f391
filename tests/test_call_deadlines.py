"""A plugin's handler runs under a deadline (``tools.call_timeout``, or its tool's own ``call_timeout``), in the
call's containment: a synchronous handler that misses it answers with a timeout error and its thread is abandoned,
an async one is cancelled, and the next call works; ``os._exit`` or ``sys.exit`` in a handler is a tool error;
``hermes`` exits within ``plugins.exit_timeout`` whatever a plugin's ``atexit`` function does."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time

import hermes_mcp_test_support as support
import pytest

from hermes_core import HermesHome, Runtime
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.calls.dispatch import MAX_LATE_CALLS

SCHEMA = {"description": "t", "parameters": {"type": "object", "properties": {}}}
TIMEOUT = 0.3


def configure(**sections) -> None:
    HermesHome.from_env().edit_config(lambda data: data.update(sections))


@pytest.fixture
def release():
    """An event the hanging handlers of a test wait for; set when the test ends, so their threads end too."""
    event = threading.Event()
    yield event
    event.set()


@pytest.fixture
def runtime(release) -> Runtime:
    configure(tools={"call_timeout": TIMEOUT})
    runtime = Runtime()
    plugin = runtime.context("slow")
    plugin.register_tool("hang", "t", SCHEMA, lambda args, **kw: release.wait(scaled_timeout(120)) and "released")
    plugin.register_tool("quick", "t", SCHEMA, lambda args, **kw: threading.current_thread().name)
    return runtime


def error(result: str) -> str:
    return json.loads(result)["error"]


LATE = ("Tool 'hang' failed: DeadlineExceeded: the handler of plugin 'slow' did not finish within 0.3 s "
        "(tools.call_timeout) and its thread was abandoned")


def test_a_handler_that_hangs_answers_a_timeout_error_and_the_next_call_works(runtime):
    assert error(runtime.handle_function_call("hang", {})) == LATE
    assert runtime.handle_function_call("quick", {}).startswith("hermes-handler")  # a plugin's handler: a worker
    assert error(runtime.handle_function_call("hang", {})) == LATE  # and the hung tool again, on a fresh worker


def test_a_handler_that_hangs_answers_a_timeout_error_in_the_async_api_too(runtime):
    async def calls() -> tuple[str, str]:
        return await runtime.ahandle_function_call("hang", {}), await runtime.ahandle_function_call("quick", {})

    late, quick = asyncio.run(calls())
    assert error(late) == LATE and quick.startswith("hermes-handler")


@pytest.mark.parametrize("api", ["sync", "async"])
def test_an_async_handler_that_misses_the_deadline_is_cancelled(runtime, api):
    cancelled = threading.Event()

    async def forever(args, **kwargs):
        try:
            await asyncio.sleep(scaled_timeout(120))
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "woke"

    runtime.context("slow").register_tool("forever", "t", SCHEMA, forever, is_async=True)
    result = runtime.handle_function_call("forever", {}) if api == "sync" else \
        asyncio.run(runtime.ahandle_function_call("forever", {}))
    assert error(result).startswith("Tool 'forever' failed: DeadlineExceeded: the handler of plugin 'slow' did not "
                                    "finish within 0.3 s (tools.call_timeout)")
    assert cancelled.wait(scaled_timeout(30))


def test_a_tool_whose_calls_keep_hanging_is_refused_at_once_past_a_few(runtime):
    for _ in range(MAX_LATE_CALLS):
        assert error(runtime.handle_function_call("hang", {})) == LATE
    assert error(runtime.handle_function_call("hang", {})) == (
        f"Tool 'hang' failed: DeadlineExceeded: {MAX_LATE_CALLS} calls of the tool still run past their 0.3 s "
        "deadline (tools.call_timeout); it is refused until one of them ends")
    assert runtime.handle_function_call("quick", {}).startswith("hermes-handler")


def test_the_manifest_sets_a_tools_own_deadline(plugins):
    configure(tools={"call_timeout": 3600})
    plugins.folder("slowpack", manifest="""
name: slowpack
version: "1.0"
tools:
  - name: wait
    toolset: slow
    description: wait
    parameters: {type: object, properties: {}}
    handler: .tools:wait
    call_timeout: 0.2
""", files={"tools.py": "import threading\nRELEASE = threading.Event()\n\n"
                        "def wait(args, **kwargs):\n    RELEASE.wait(120)\n    return 'released'\n"})
    runtime = plugins.runtime()
    runtime.load_plugins()
    try:
        assert error(runtime.handle_function_call("wait", {})) == (
            "Tool 'wait' failed: DeadlineExceeded: the handler of plugin 'slowpack' did not finish within 0.2 s "
            "(tools.call_timeout) and its thread was abandoned")
    finally:
        sys.modules["hermes_plugins.slowpack.tools"].RELEASE.set()


def test_the_host_programs_own_tools_run_in_its_thread_unless_they_ask_for_a_deadline(release):
    configure(tools={"call_timeout": TIMEOUT})
    runtime = Runtime()
    runtime.register_tool("mine", "t", SCHEMA, lambda args, **kw: threading.current_thread().name)
    runtime.register_tool("bounded", "t", SCHEMA, lambda args, **kw: release.wait(scaled_timeout(120)) and "x",
                          call_timeout=0.2)
    assert runtime.handle_function_call("mine", {}) == threading.current_thread().name
    assert error(runtime.handle_function_call("bounded", {})) == (
        "Tool 'bounded' failed: DeadlineExceeded: the handler did not finish within 0.2 s (tools.call_timeout) and "
        "its thread was abandoned")


def test_a_plugin_may_not_take_its_tools_out_of_the_deadline():
    with pytest.raises(ValueError, match="call_timeout must be a number of seconds above 0, not 0"):
        Runtime().context("sly").register_tool("x", "t", SCHEMA, lambda args, **kw: "", call_timeout=0)


def test_with_call_timeout_0_a_plugins_handler_has_no_deadline():
    configure(tools={"call_timeout": 0})
    runtime = Runtime()
    runtime.context("p").register_tool("nap", "t", SCHEMA, lambda args, **kw: time.sleep(0.5) or "rested")
    assert runtime.handle_function_call("nap", {}) == "rested"


# -- the command line -------------------------------------------------------------------------------------------

EXITS = """
import os
import sys

SCHEMA = {"description": "x", "parameters": {"type": "object", "properties": {}}}


def register(ctx):
    ctx.register_tool("leave", "x", SCHEMA, lambda args, **kw: os._exit(5))
    ctx.register_tool("quit", "x", SCHEMA, lambda args, **kw: sys.exit(5))
"""


@pytest.mark.parametrize(("tool", "raised"), [("leave", "PluginExit: the plugin called os._exit(5)"),
                                              ("quit", "SystemExit: 5")])
def test_a_handler_that_exits_is_a_tool_error_and_hermes_tools_call_exits_1(plugins, isolated_home, tool, raised):
    plugins.folder("exiter", init=EXITS)
    result = subprocess.run([*support.hermes_command(), "tools", "call", tool], capture_output=True, text=True,
                            env={**os.environ, "HERMES_HOME": str(isolated_home)},
                            timeout=scaled_timeout(120))
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout) == {
        "error": f"Tool '{tool}' failed: the handler of plugin 'exiter' raised {raised}",
        "error_type": raised.split(":")[0]}


HANGS_AT_EXIT = """
import atexit
import time

atexit.register(time.sleep, 3600)


def register(ctx):
    ctx.register_tool("ping", "x", {"description": "x", "parameters": {"type": "object", "properties": {}}},
                      lambda args, **kw: "pong")
"""


def test_hermes_exits_within_its_deadline_when_a_plugins_atexit_function_hangs(plugins, isolated_home):
    configure(plugins={"exit_timeout": 0.5})
    plugins.folder("clinger", init=HANGS_AT_EXIT)
    result = subprocess.run([*support.hermes_command(), "tools", "call", "ping"], capture_output=True, text=True,
                            env={**os.environ, "HERMES_HOME": str(isolated_home)},
                            timeout=scaled_timeout(120))
    assert (result.returncode, result.stdout) == (0, "pong\n")
    assert "the exit handlers did not finish within 0.5 s (plugins.exit_timeout)" in result.stderr

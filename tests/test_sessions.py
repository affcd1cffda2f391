"""The host commands run sessions: ``hermes tools call`` and ``hermes mcp serve`` fire ``on_session_start`` before
the first call and ``on_session_end`` / ``on_session_finalize`` at exit; approvals fire Hermes Agent's approval
hooks."""

from __future__ import annotations

import json
import sys
from contextlib import AsyncExitStack
from pathlib import Path

import anyio
import hermes_mcp_test_support as support
import pytest
from click.testing import CliRunner

from hermes_core import Runtime, set_approval_callback
from hermes_core.cli import cli

#: A plugin in the shape of sagtask: state made in on_session_start, which its tool needs.
SESSION_PLUGIN = '''
import json
import os

_state = {}


def _log(event, **fields):
    with open(os.environ["SESSION_LOG"], "a") as log:
        log.write(json.dumps([event, fields]) + "\\n")


def on_session_start(session_id, model, platform, **kwargs):
    _state["session"] = session_id
    _log("on_session_start", session_id=session_id, platform=platform)


def on_session_end(session_id, completed, interrupted, **kwargs):
    _log("on_session_end", session_id=session_id, completed=completed, interrupted=interrupted)


def on_session_finalize(session_id, platform, reason):
    _log("on_session_finalize", session_id=session_id, reason=reason)


def whoami(args, **kwargs):
    _log("whoami", session_id=kwargs["session_id"])
    return json.dumps({"session": _state["session"]})


def register(ctx):
    for hook in (on_session_start, on_session_end, on_session_finalize):
        ctx.register_hook(hook.__name__, hook)
    ctx.register_tool(name="whoami", toolset="session", handler=whoami,
                      schema={"name": "whoami", "description": "The session", "parameters": {"type": "object"}})
'''


@pytest.fixture
def session_log(isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = isolated_home / "plugins" / "sessions"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(SESSION_PLUGIN)
    log = tmp_path / "session.log"
    monkeypatch.setenv("SESSION_LOG", str(log))
    yield log
    for name in [n for n in sys.modules if n.startswith("hermes_plugins.")]:
        del sys.modules[name]


def events(log: Path) -> list[list]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_tools_call_runs_the_call_in_a_session(session_log):
    result = CliRunner().invoke(cli, ["tools", "call", "whoami"])
    assert result.exit_code == 0, result.output
    (start, call, end, finalize) = events(session_log)
    sid = start[1]["session_id"]
    assert json.loads(result.output) == {"session": sid}
    assert start == ["on_session_start", {"session_id": sid, "platform": "cli"}]
    assert call == ["whoami", {"session_id": sid}]
    assert end == ["on_session_end", {"session_id": sid, "completed": True, "interrupted": False}]
    assert finalize == ["on_session_finalize", {"session_id": sid, "reason": "shutdown"}]


def test_mcp_serve_is_one_session_for_every_call(session_log, isolated_home):
    async def main() -> list[str]:
        async with AsyncExitStack() as stack:
            from mcp import ClientSession, StdioServerParameters
            from mcp.client.stdio import stdio_client

            command = [*support.hermes_command(), "mcp", "serve"]
            params = StdioServerParameters(command=command[0], args=command[1:],
                                           env={"HERMES_HOME": str(isolated_home), "SESSION_LOG": str(session_log)})
            errlog = stack.enter_context(open(isolated_home / "serve-stderr.log", "a"))  # noqa: SIM115
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            with anyio.fail_after(120):
                await session.initialize()
                answers = [await session.call_tool("whoami", {}) for _ in range(2)]
            return [json.loads(answer.content[0].text)["session"] for answer in answers]

    sessions = anyio.run(main)
    logged = events(session_log)
    names = [event for event, _ in logged]
    assert names == ["on_session_start", "whoami", "whoami", "on_session_end", "on_session_finalize"], (
        (isolated_home / "serve-stderr.log").read_text())
    sid = logged[0][1]["session_id"]
    assert sessions == [sid, sid] and logged[0][1]["platform"] == "mcp"
    assert logged[3][1]["session_id"] == sid


def test_a_session_interrupted_by_ctrl_c_says_so(isolated_home):
    runtime = Runtime()
    seen = []
    runtime.context("watcher").register_hook("on_session_end", lambda **kw: seen.append(kw))
    with pytest.raises(KeyboardInterrupt), runtime.session(platform="cli", model="m", session_id="s-1"):
        raise KeyboardInterrupt
    assert seen == [{"session_id": "s-1", "task_id": None, "turn_id": None, "completed": False,
                     "interrupted": True, "model": "m", "platform": "cli"}]


APPROVING = '''
def guard(tool_name, args, session_id, **kwargs):
    return {"action": "approve", "message": "Run " + args["command"] + "?", "rule_key": "demo:run"}


def register(ctx):
    ctx.register_hook("pre_tool_call", guard)
    ctx.register_tool(name="run", toolset="demo", handler=lambda args, **kw: '"ran"',
                      schema={"name": "run", "description": "Run", "parameters": {"type": "object"}})
'''


@pytest.mark.parametrize("answer", ["session", "deny"])
def test_approvals_fire_hermes_agents_approval_hooks(plugins, answer):
    plugins.folder("approving", init=APPROVING)
    runtime = plugins.runtime()
    runtime.load_plugins()
    observed = []
    watcher = runtime.context("watcher")
    for hook in ("pre_approval_request", "post_approval_response"):
        watcher.register_hook(hook, lambda _hook=hook, **kw: observed.append((_hook, kw)))
    set_approval_callback(lambda request: answer)
    result = runtime.handle_function_call("run", {"command": "rm -r build"}, session_id="s-9")
    assert (result == '"ran"') is (answer == "session")
    asked = {"command": "rm -r build", "description": "Run rm -r build?", "pattern_key": "demo:run",
             "pattern_keys": ["demo:run"], "session_key": "s-9", "surface": "gateway", "tool_name": "run"}
    assert observed == [("pre_approval_request", asked), ("post_approval_response", {**asked, "choice": answer})]
    # answered from the session's memory, nothing is asked and nothing fires; a refusal is asked again
    observed.clear()
    runtime.handle_function_call("run", {"command": "rm -r build"}, session_id="s-9")
    assert len(observed) == (0 if answer == "session" else 2)

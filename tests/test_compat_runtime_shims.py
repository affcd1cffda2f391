"""The shims of the Hermes Agent internals that published plugins still reach for, each backed by the runtime that
loads or calls the plugin: approvals, model_tools, the plugin manager's view, skills roots and workspace,
hermes_state, the gateway's types and ``ctx.register_platform``, and ``call_llm`` against a configured endpoint."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from hermes_core import Runtime

REACHES_IN = '''
import json
from pathlib import Path

def _approval(args, **kwargs):
    from tools.approval import check_dangerous_command
    from tools.approval_context import _get_approval_mode
    return json.dumps({"mode": _get_approval_mode(), "verdict": check_dangerous_command(args["command"], "ssh")})

def _model_tools(args, **kwargs):
    import model_tools
    async def answer():
        return "from a coroutine"
    return json.dumps({"names": [d["function"]["name"] for d in model_tools.get_tool_definitions()],
                       "echo": json.loads(model_tools.handle_function_call("reach_echo", {"text": "hi"})),
                       "async": model_tools._run_async(answer())})

def _manager(args, **kwargs):
    from hermes_cli.plugins import discover_plugins, get_plugin_manager
    manager = get_plugin_manager()
    plugins = {name: [p.enabled, p.tools_registered, p.module is not None] for name, p in manager._plugins.items()}
    try:
        discover_plugins(force=True)
        refused = None
    except RuntimeError as exc:
        refused = str(exc)
    return json.dumps({"plugins": plugins, "hooks": sorted(manager._hooks), "refused": refused,
                       "cli": manager._cli_ref})

def _places(args, **kwargs):
    from agent.runtime_cwd import resolve_agent_cwd
    from agent.skill_utils import get_all_skills_dirs, get_skill_search_roots
    from hermes_constants import get_hermes_home
    from hermes_state import DEFAULT_DB_PATH, SessionDB
    db = SessionDB()
    db.create_session("s-1", "cli")
    db.append_message("s-1", "user", "hello")
    db.set_session_title("s-1", "  A   title  ")
    return json.dumps({"cwd": str(resolve_agent_cwd()), "skills": [str(p) for p in get_all_skills_dirs()],
                       "tiers": [tier for tier, _ in get_skill_search_roots()], "home": str(get_hermes_home()),
                       "db": str(DEFAULT_DB_PATH), "session": db.get_session("s-1"),
                       "conversation": db.get_messages_as_conversation("s-1", include_ancestors=True)})

def _llm(args, **kwargs):
    from agent.auxiliary_client import call_llm
    try:
        response = call_llm(task="title", messages=[{"role": "user", "content": "name it"}], max_tokens=5)
    except RuntimeError as exc:
        return json.dumps({"error": str(exc)})
    return json.dumps({"answer": response.choices[0].message.content})

def _gateway_check():
    from gateway.config import Platform, load_gateway_config
    return bool(load_gateway_config().platforms.get(Platform.TELEGRAM))

def register(ctx):
    from gateway.config import Platform, PlatformConfig
    from gateway.platforms.base import MessageEvent, MessageType
    from gateway.platforms.webhook import WebhookAdapter

    class Adapter(WebhookAdapter):
        pass

    ctx.register_platform(name="reachdeck", label="Reach", adapter_factory=lambda cfg: Adapter(cfg), emoji="x")
    for name, handler in (("reach_approval", _approval), ("reach_model_tools", _model_tools),
                          ("reach_manager", _manager), ("reach_places", _places), ("reach_llm", _llm)):
        ctx.register_tool(name=name, toolset="reach", handler=handler,
                          schema={"name": name, "description": name, "parameters": {"type": "object"}})
    ctx.register_tool(name="reach_telegram", toolset="reach", handler=lambda args, **kw: "{}",
                      check_fn=_gateway_check, schema={"name": "reach_telegram", "description": "t",
                                                       "parameters": {"type": "object"}})
    ctx.register_hook("post_tool_call", lambda **kw: None)
    skill = Path(__file__).parent / "skill"
    skill.mkdir(exist_ok=True)
    (skill / "SKILL.md").write_text("---\\ndescription: a skill\\n---\\nBody\\n")
    ctx.register_skill("guide", skill)
'''


@pytest.fixture
def runtime(isolated_home: Path, tmp_path: Path) -> Iterator[Runtime]:
    folder = isolated_home / "plugins" / "reach"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text("name: reach\nversion: 1.0.0\n")
    (folder / "__init__.py").write_text(REACHES_IN)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    rt = Runtime(workspace=workspace)
    rt.load_plugins()
    rt.register_tool("reach_echo", "host", {"description": "echo", "parameters": {"type": "object"}},
                     lambda args, **kw: json.dumps({"echo": args["text"]}))
    yield rt
    rt.close()


def call(rt: Runtime, name: str, args: dict | None = None) -> dict:
    return json.loads(rt.handle_function_call(name, args or {}, session_id="s-1"))


def test_the_plugin_loads_and_its_platform_is_recorded_not_run(runtime):
    record = runtime.plugin("reach")
    assert (record.state, record.warnings) == ("loaded", [])
    assert runtime.contributions.of_plugin("reach")["platforms"] == ["reachdeck"]
    platform = runtime.contributions.platforms["reachdeck"]
    assert (platform.label, platform.details) == ("Reach", ["emoji"])


@pytest.mark.parametrize(("mode", "answer", "expected_mode", "approved", "asked"), [
    ("ask", "once", "manual", True, True),
    ("ask", "deny", "manual", False, True),
    ("deny", "once", "manual", False, False),
    ("approve", "deny", "off", True, False),
])
def test_check_dangerous_command_asks_the_runtimes_approvals(runtime, isolated_home, mode, answer, expected_mode,
                                                             approved, asked):
    (isolated_home / "config.yaml").write_text(f"approvals:\n  mode: {mode}\n")
    questions = []
    runtime.set_approval_callback(lambda request: questions.append(request) or answer)
    out = call(runtime, "reach_approval", {"command": "rm -r build"})
    assert out["mode"] == expected_mode
    assert out["verdict"]["approved"] is approved
    if not approved:
        assert out["verdict"]["message"].startswith("BLOCKED: this command deletes files recursively")
    assert bool(questions) is asked
    if asked:
        assert questions[0].rule_key == "recursive_delete" and "Plugin reach" in questions[0].message
    assert call(runtime, "reach_approval", {"command": "ls -la"})["verdict"] == {"approved": True, "message": None}


def test_check_dangerous_command_refuses_what_coproc_runs(runtime, isolated_home):
    questions = []
    runtime.set_approval_callback(lambda request: questions.append(request) or "once")
    verdict = call(runtime, "reach_approval", {"command": "coproc rm -rf /"})["verdict"]
    assert (verdict["approved"], verdict["hardline"], verdict["pattern_key"]) == (False, True, "delete_root")
    assert questions == []  # hardline: refused without a question


def test_check_dangerous_command_follows_strict_mode(runtime, isolated_home):
    (isolated_home / "config.yaml").write_text("approvals:\n  mode: strict\n")
    questions = []
    runtime.set_approval_callback(lambda request: questions.append(request) or "deny")
    out = call(runtime, "reach_approval", {"command": "make"})
    assert out["mode"] == "manual"
    assert (out["verdict"]["approved"], out["verdict"]["pattern_key"]) == (False, "not_read_only:make")
    assert call(runtime, "reach_approval", {"command": "ls -la"})["verdict"] == {"approved": True, "message": None}
    assert [question.rule_key for question in questions] == ["not_read_only:make"]


def test_an_approval_for_the_session_is_remembered_for_the_calling_tool_calls_session(runtime, isolated_home):
    questions = []
    runtime.set_approval_callback(lambda request: questions.append(request) or "session")

    def verdict(session_id: str | None) -> dict:
        answer = runtime.handle_function_call("reach_approval", {"command": "rm -r build"}, session_id=session_id)
        return json.loads(answer)["verdict"]

    assert verdict("s-1") == {"approved": True, "message": None}
    assert [q.session_id for q in questions] == ["s-1"]  # asked on behalf of the call's session
    assert verdict("s-1") == {"approved": True, "message": None}
    assert len(questions) == 1  # remembered for s-1: not asked again
    assert verdict("s-2")["approved"] is True and [q.session_id for q in questions] == ["s-1", "s-2"]
    verdict(None)  # a call without a session never inherits a session's approval
    assert [q.session_id for q in questions] == ["s-1", "s-2", None]
    config = isolated_home / "config.yaml"  # a session answer is not written down as "always"
    assert not config.exists() or "command_allowlist" not in config.read_text()


def test_the_tool_context_names_the_calling_tool_calls_session_sync_and_async(runtime):
    import asyncio

    from hermes_core.plugin import tool_context

    async def async_session(args, **kwargs):
        return json.dumps({"session": tool_context().session_id})

    runtime.register_tool("sync_session", "host", {"description": "s", "parameters": {"type": "object"}},
                          lambda args, **kw: json.dumps({"session": tool_context().session_id}))
    runtime.register_tool("async_session", "host", {"description": "a", "parameters": {"type": "object"}},
                          async_session)
    for name in ("sync_session", "async_session"):
        assert json.loads(runtime.handle_function_call(name, {}, session_id="s-9")) == {"session": "s-9"}
        assert json.loads(runtime.handle_function_call(name, {})) == {"session": None}
        answer = asyncio.run(runtime.ahandle_function_call(name, {}, session_id="s-8"))
        assert json.loads(answer) == {"session": "s-8"}


def test_hardline_commands_are_refused_without_asking(runtime):
    runtime.set_approval_callback(lambda request: pytest.fail("a hardline command must not be asked about"))
    verdict = call(runtime, "reach_approval", {"command": "rm -rf /"})["verdict"]
    assert verdict["approved"] is False and verdict["hardline"] is True
    assert verdict["message"].startswith("BLOCKED (hardline): this command deletes or moves away the root")


def test_model_tools_calls_and_lists_through_the_runtime(runtime):
    out = call(runtime, "reach_model_tools")
    assert {"reach_echo", "reach_places"} <= set(out["names"]) and "reach_telegram" not in out["names"]
    assert out["echo"] == {"echo": "hi"}
    assert out["async"] == "from a coroutine"


def test_the_plugin_manager_is_a_read_only_view(runtime):
    out = call(runtime, "reach_manager")
    assert out["plugins"]["reach"][0] is True and "reach_manager" in out["plugins"]["reach"][1]
    assert out["plugins"]["reach"][2] is True
    assert out["hooks"] == ["post_tool_call"]
    assert out["refused"] is None  # force: the runtime reloads what changed (nothing here; see test_plugin_reload)
    assert out["cli"] is None
    assert call(runtime, "reach_echo", {"text": "again"}) == {"echo": "again"}  # the plugin kept, unchanged


def test_skills_workspace_home_and_session_db_are_the_runtimes(runtime, isolated_home, tmp_path):
    out = call(runtime, "reach_places")
    assert out["cwd"] == str(tmp_path / "workspace")
    assert out["skills"] == [str(isolated_home / "skills"), str(isolated_home / "plugins" / "reach" / "skill")]
    assert out["tiers"] == ["local", "plugin"]
    assert out["home"] == str(isolated_home)
    assert out["db"] == str(isolated_home / "state.db")
    assert (out["session"]["title"], out["session"]["message_count"]) == ("A title", 1)
    assert out["conversation"] == [{"role": "user", "content": "hello"}]
    with sqlite3.connect(isolated_home / "state.db") as db:  # a real SQLite file in the home
        assert db.execute("SELECT title FROM sessions").fetchall() == [("A title",)]


def test_a_gateway_check_makes_the_tool_unavailable_naming_the_platform(runtime):
    availability = runtime.registry.check("reach_telegram")
    assert availability.available is False
    assert availability.reason == ("its check reported it unavailable: it needs Hermes Agent's messaging gateway "
                                   "with the telegram platform configured, and Hermes runs no messaging gateway")


def test_call_llm_without_an_endpoint_is_a_clear_error(runtime):
    error = call(runtime, "reach_llm")["error"]
    assert error.startswith("agent.auxiliary_client.call_llm: no model endpoint is configured")


def test_call_llm_asks_the_configured_openai_compatible_endpoint(runtime, isolated_home):
    asked = []

    class Endpoint(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            asked.append((self.path, self.headers.get("Authorization"),
                          json.loads(self.rfile.read(int(self.headers["Content-Length"])))))
            body = json.dumps({"choices": [{"message": {"role": "assistant", "content": "A title"}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Endpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        (isolated_home / "config.yaml").write_text(
            f"model:\n  base_url: http://127.0.0.1:{server.server_address[1]}/v1\n  api_key: k-1\n  default: m-1\n")
        assert call(runtime, "reach_llm") == {"answer": "A title"}
    finally:
        server.shutdown()
        server.server_close()
    [(path, authorization, body)] = asked
    assert (path, authorization) == ("/v1/chat/completions", "Bearer k-1")
    assert (body["model"], body["max_tokens"], body["messages"]) == ("m-1", 5, [{"role": "user", "content": "name it"}])


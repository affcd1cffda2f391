"""Every function and method of the Hermes Agent compatibility shims runs in a test: a plugin written as Hermes Agent
plugins are calls the whole surface of each shim, through the runtime that loads it, and a profile of its calls
shows that no function of a shim module was left out (a new shim function without a test fails here)."""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Runtime
from hermes_core.plugins.compat import SHIMS

fakes = sys.modules["hermes_fake_provider"]  # loaded by conftest.py

USES_EVERYTHING = '''
import asyncio
import json
import threading


def _registry(args, **kwargs):
    from tools.registry import ToolEntry, registry, tool_error, tool_result
    generation = registry._generation
    registry._generation = generation + 1
    registry.register("everything_extra", "everything", {"name": "everything_extra", "description": "extra",
                      "parameters": {"type": "object", "properties": {}}}, lambda args, **kw: "extra", emoji="+",
                      max_result_size_chars=float("inf"))
    entry = registry.get_entry("everything_extra")
    seen = {
        "entry": isinstance(entry, ToolEntry) and entry.name, "names": registry.get_all_tool_names(),
        "schema": registry.get_schema("everything_extra")["description"], "missing_schema": registry.get_schema("x"),
        "toolset": registry.get_toolset_for_tool("everything_extra"), "emoji": registry.get_emoji("everything_extra"),
        "default_emoji": registry.get_emoji("nope"), "map": registry.get_tool_to_toolset_map()["everything_extra"],
        "toolsets": registry.get_registered_toolset_names(),
        "in_toolset": registry.get_tool_names_for_toolset("everything"),
        "available": registry.is_toolset_available("everything"),
        "definitions": [d["function"]["name"] for d in registry.get_definitions(["everything_extra", "nope"])],
        "private_table": sorted(registry._tools), "dispatched": registry.dispatch("everything_extra", {}),
        "error": json.loads(tool_error("no", code=1)), "result": json.loads(tool_result(a=1)),
        "result_data": json.loads(tool_result([1, 2]))}
    registry.deregister("everything_extra")
    seen["after_deregister"] = registry.get_entry("everything_extra")
    return json.dumps(seen)


def _interrupt(args, **kwargs):
    from tools.interrupt import clear_current_thread_interrupt, is_interrupted, set_interrupt
    set_interrupt(True)
    during = is_interrupted()
    clear_current_thread_interrupt()
    set_interrupt(True, threading.get_ident() + 1)  # another thread's flag
    other = is_interrupted()
    set_interrupt(False, threading.get_ident() + 1)
    return json.dumps({"during": during, "after": is_interrupted(), "other": other})


def _config(args, **kwargs):
    from hermes_cli.config import (cfg_get, get_config_path, get_env_path, get_env_value, get_hermes_home, load_config,
                                   load_config_readonly, read_raw_config)
    from hermes_constants import get_hermes_home as constants_home
    from agent.web_search_provider import get_provider_env
    config = load_config()
    config["plugins"]["entries"] = "changed"  # a copy: nothing is saved
    return json.dumps({
        "home": str(get_hermes_home()), "constants_home": str(constants_home()), "config": str(get_config_path()),
        "env_file": str(get_env_path()), "token": get_env_value("EVERYTHING_TOKEN"), "unset": get_env_value("NOPE"),
        "readonly_entries": load_config_readonly()["plugins"]["entries"]["everything"],
        "raw": read_raw_config(), "deep": cfg_get(read_raw_config(), "plugins", "entries", "everything", "flavor"),
        "absent": cfg_get({"a": 1}, "a", "b", default="d"), "provider_env": get_provider_env("EVERYTHING_TOKEN")})


def _model_tools(args, **kwargs):
    import model_tools
    model_tools._clear_tool_defs_cache()

    async def answer():
        return "from a coroutine"

    return json.dumps({
        "defined": "everything_extra" not in [d["function"]["name"] for d in model_tools.get_tool_definitions(
            enabled_toolsets=["everything"])],
        "names": "everything_config" in model_tools.get_all_tool_names(),
        "toolset": model_tools.get_toolset_for_tool("everything_config"),
        "called": json.loads(model_tools.handle_function_call("everything_interrupt", {}))["during"],
        "async": model_tools._run_async(answer())})


def _manager(args, **kwargs):
    from hermes_cli.plugins import (PluginManagerView, discover_plugins, get_plugin_manager, has_hook,
                                    invoke_hook)
    manager = get_plugin_manager()
    refused = []
    for discover in (lambda: discover_plugins(force=True), lambda: manager.discover_and_load(force=True)):
        try:
            discover()
        except RuntimeError as exc:
            refused.append(str(exc).split(":")[0])
    discover_plugins()  # without force: nothing to do
    return json.dumps({
        "view": isinstance(manager, PluginManagerView), "plugins": sorted(manager._plugins),
        "listed": [plugin["name"] for plugin in manager.list_plugins()], "hooks": sorted(manager._hooks),
        "has": [has_hook("on_session_end"), manager.has_hook("pre_llm_call")],
        "invoked": invoke_hook("on_session_end", session_id="s-9"), "refused": refused})


def _places(args, **kwargs):
    from agent.runtime_cwd import resolve_agent_cwd, resolve_context_cwd
    from agent.skill_utils import get_all_skills_dirs, get_skill_search_roots, get_skills_dir
    return json.dumps({"cwd": str(resolve_agent_cwd()), "context_cwd": str(resolve_context_cwd()),
                       "skills_dir": str(get_skills_dir()), "dirs": len(get_all_skills_dirs()),
                       "tiers": [tier for tier, _ in get_skill_search_roots()]})


def _state(args, **kwargs):
    from hermes_state import DEFAULT_DB_PATH, SessionDB
    db = SessionDB()
    db.create_session("parent", "cli", model="m")
    db.ensure_session("child", parent_session_id="parent")
    hello = db.append_message("parent", "user", "hi")
    db.append_message("child", "assistant", None, tool_calls=[{"id": "c1"}])
    db.append_message("child", "tool", "done", tool_name="t", tool_call_id="c1")
    titled = db.set_session_title("child", "  a   title ")
    db.end_session("child", "finished")
    seen = {"db": str(DEFAULT_DB_PATH), "titled": titled, "title": db.get_session_title("child"),
            "no_title": db.get_session_title("nope"), "sanitized": SessionDB.sanitize_title("   "),
            "ended": db.get_session("child")["end_reason"], "messages": len(db.get_messages("child")),
            "conversation": db.get_messages_as_conversation("child", include_ancestors=True)}
    first = hello
    seen["around"] = [m["content"] for m in db.get_messages_around("parent", first)["window"]]
    seen["anchored"] = sorted(db.get_anchored_view("parent", first))
    seen["found"] = [row["session_id"] for row in db.search_messages("hi")]
    seen["listed"] = sorted(row["id"] for row in db.list_sessions_rich(include_children=True))
    seen["exported"] = len(db.export_session("child")["messages"])
    seen["deleted"] = [db.delete_session("child"), db.get_session("child")]
    db.close()
    return json.dumps(seen)


def _gateway(args, **kwargs):
    from gateway.config import GatewayConfig, HomeChannel, Platform, PlatformConfig, load_gateway_config
    from gateway.platforms.base import BasePlatformAdapter
    from gateway.platforms.webhook import WebhookAdapter
    config = load_gateway_config()
    made = []
    for adapter in (lambda: BasePlatformAdapter(PlatformConfig(), Platform.TELEGRAM),
                    lambda: WebhookAdapter(PlatformConfig())):
        try:
            adapter()
        except RuntimeError as exc:
            made.append(str(exc).split(":")[0])
    try:
        config.platforms[Platform.TELEGRAM]
        looked = None
    except KeyError:
        looked = "KeyError"
    return json.dumps({"connected": GatewayConfig().get_connected_platforms(), "made": made, "looked": looked,
                       "contains": Platform.SLACK in config.platforms, "get": config.platforms.get("matrix"),
                       "new_platform": Platform("Brand-New").value, "odd": Platform._missing_(7),
                       "channel": HomeChannel(Platform.TELEGRAM, "1").chat_id})


def _approval(args, **kwargs):
    from tools.approval import _get_approval_mode, check_dangerous_command
    return json.dumps({"mode": _get_approval_mode(), "safe": check_dangerous_command("ls")["approved"],
                       "not_text": check_dangerous_command(5)["approved"]})


def _llm(args, **kwargs):
    from agent.auxiliary_client import LlmEndpointError, call_llm
    answers = []
    for base_url in (None, "ftp://nowhere"):
        try:
            answers.append(call_llm(task="title", base_url=base_url, messages=[{"role": "user", "content": "x"}],
                                    temperature=0.1, max_tokens=5).choices[0].message.content)
        except LlmEndpointError as exc:
            answers.append(str(exc))
    return json.dumps(answers)


def _model_switch(args, **kwargs):
    from hermes_cli.model_switch import parse_model_flags, parse_model_flags_detailed, switch_model
    detailed = parse_model_flags_detailed("small \u2014global --provider p")
    return json.dumps({"flags": list(parse_model_flags("big --session")),
                       "detailed": [detailed.model_input, detailed.explicit_provider, detailed.is_global],
                       "same": switch_model("m-2", "p", "m-1").new_model,
                       "other": switch_model("m-2", "p", "m-1", explicit_provider="q").success})


def _build(task_index, goal, context, toolsets, model, max_iterations, task_count, parent_agent, **rest):
    import tools.delegate_tool as dt
    return dt.ChildAgent(task_index, goal, model="routed-" + goal)


def _delegate(args, **kwargs):
    import tools.delegate_tool as dt
    parent = dt.ParentAgent(next_call=lambda delegated: json.dumps(delegated))
    return json.dumps({"ready": dt.check_delegate_requirements(), "overrides": dt._build_dynamic_schema_overrides(),
                       "delegated": json.loads(dt.delegate_task(goal="g", parent_agent=parent))})


def register(ctx):
    import tools.delegate_tool as dt
    original = dt._build_child_agent

    def build(*args, **kwargs):  # a patch of the plugin's own, as hermes-delegate-routing makes
        original(*args, **kwargs)
        return _build(*args, **kwargs)

    dt._build_child_agent = build
    for name, handler in (("everything_registry", _registry), ("everything_interrupt", _interrupt),
                          ("everything_config", _config), ("everything_model_tools", _model_tools),
                          ("everything_manager", _manager), ("everything_places", _places),
                          ("everything_state", _state), ("everything_gateway", _gateway),
                          ("everything_approval", _approval), ("everything_llm", _llm),
                          ("everything_model_switch", _model_switch), ("everything_delegate", _delegate)):
        ctx.register_tool(name=name, toolset="everything", handler=handler,
                          schema={"name": name, "description": name, "parameters": {"type": "object"}})
    ctx.register_hook("on_session_end", lambda session_id=None, **kw: f"ended {session_id}")
'''


def shim_functions() -> dict[str, str]:
    """Each function and method defined in a shim module (its code object's file and first line) -> its name."""
    found: dict[str, str] = {}
    for module_name in {module for module in SHIMS.values() if module is not None}:
        path = Path(importlib.import_module(module_name).__file__)
        stack = [compile(path.read_text(), str(path), "exec")]
        while stack:
            code = stack.pop()
            for constant in code.co_consts:
                if isinstance(constant, types.CodeType):
                    # functions and methods (not class bodies, which run at import; comprehensions and lambdas are
                    # parts of a function)
                    if constant.co_flags & inspect.CO_NEWLOCALS and not constant.co_name.startswith("<"):
                        found[f"{path.name}:{constant.co_firstlineno}"] = f"{path.stem}.{constant.co_qualname}"
                    stack.append(constant)
    return found


@pytest.fixture
def endpoint() -> Iterator[Any]:
    """A fake OpenAI-compatible endpoint on 127.0.0.1 (its answer to a request offering no tools has no content)."""
    with fakes.fake_provider([]) as provider:
        yield provider


@pytest.fixture
def runtime(isolated_home: Path, tmp_path: Path, endpoint: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runtime]:
    monkeypatch.setenv("EVERYTHING_TOKEN", "from-env")
    # everything inline, in this thread, where the profile sees it
    (isolated_home / "config.yaml").write_text(
        "plugins:\n  hook_timeout: 0\n  load_timeout: 0\n  entries:\n    everything:\n      flavor: plum\n"
        f"tools:\n  call_timeout: 0\nmodel:\n  base_url: {endpoint.url}/v1\n  default: m-1\n")
    folder = isolated_home / "plugins" / "everything"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(USES_EVERYTHING)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    rt = Runtime(workspace=workspace)
    yield rt
    rt.close()
    for name in [n for n in sys.modules if n in SHIMS or n.startswith("hermes_plugins.everything")]:
        del sys.modules[name]


def test_every_shim_function_runs_and_answers_as_hermes_agent_plugins_expect(runtime, isolated_home, tmp_path,
                                                                            endpoint):
    called: set[str] = set()
    defined = shim_functions()

    def profile(frame: types.FrameType, event: str, arg: object) -> None:
        if event == "call":
            code = frame.f_code
            key = f"{Path(code.co_filename).name}:{code.co_firstlineno}"
            if key in defined and "/compat/" in code.co_filename.replace("\\", "/"):
                called.add(key)

    sys.setprofile(profile)
    try:
        runtime.load_plugins()
        answers = {name.removeprefix("everything_"): json.loads(runtime.handle_function_call(name, {}))
                   for name in ("everything_registry", "everything_interrupt", "everything_config",
                                "everything_model_tools", "everything_manager", "everything_places",
                                "everything_state", "everything_gateway", "everything_approval", "everything_llm",
                                "everything_model_switch", "everything_delegate")}
    finally:
        sys.setprofile(None)

    assert answers["registry"] == {
        "entry": "everything_extra", "names": sorted([*(f"everything_{n}" for n in (
            "registry", "interrupt", "config", "model_tools", "manager", "places", "state", "gateway", "approval",
            "llm", "model_switch", "delegate")), "everything_extra"]), "schema": "extra", "missing_schema": None,
        "toolset": "everything",
        "emoji": "+", "default_emoji": "⚡", "map": "everything", "toolsets": ["everything"],
        "in_toolset": answers["registry"]["names"], "available": True, "definitions": ["everything_extra"],
        "private_table": answers["registry"]["names"], "dispatched": "extra", "error": {"error": "no", "code": 1},
        "result": {"a": 1}, "result_data": [1, 2], "after_deregister": None}
    assert answers["interrupt"] == {"during": True, "after": False, "other": False}
    assert answers["config"] == {
        "home": str(isolated_home), "constants_home": str(isolated_home), "config": str(isolated_home / "config.yaml"),
        "env_file": str(isolated_home / ".env"), "token": "from-env", "unset": None,
        "readonly_entries": {"allow_tool_override": False, "settings": {}, "flavor": "plum"},
        "raw": answers["config"]["raw"], "deep": "plum", "absent": "d", "provider_env": "from-env"}
    assert answers["config"]["raw"]["plugins"]["entries"] == {"everything": {"flavor": "plum"}}
    assert answers["model_tools"] == {"defined": True, "names": True, "toolset": "everything", "called": True,
                                      "async": "from a coroutine"}
    assert answers["manager"] == {"view": True, "plugins": ["everything"], "listed": ["everything"],
                                  "hooks": ["on_session_end"], "has": [True, False], "invoked": ["ended s-9"],
                                  "refused": []}  # (forced rediscovery reloads: Runtime.reload_plugins)
    assert answers["places"] == {"cwd": str(tmp_path / "workspace"), "context_cwd": str(tmp_path / "workspace"),
                                 "skills_dir": str(isolated_home / "skills"), "dirs": 1, "tiers": ["local"]}
    assert answers["state"] == {
        "db": answers["state"]["db"], "titled": True, "title": "a title", "no_title": None, "sanitized": None,
        "ended": "finished", "messages": 2, "conversation": [
            {"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
            {"role": "tool", "content": "done", "tool_call_id": "c1", "tool_name": "t"}],
        "around": ["hi"], "anchored": ["bookend_end", "bookend_start", "messages_after", "messages_before", "window"],
        "found": ["parent"], "listed": ["child", "parent"], "exported": 2, "deleted": [True, None]}
    assert answers["state"]["db"].startswith(str(isolated_home))
    assert answers["gateway"] == {
        "connected": [], "made": ["Hermes runs no messaging gateway"] * 2, "looked": "KeyError", "contains": False,
        "get": None, "new_platform": "brand-new", "odd": None, "channel": "1"}
    assert answers["model_switch"] == {"flags": ["big", "", False, False, True], "detailed": ["small", "p", True],
                                       "same": "m-2", "other": False}
    # the plugin's own _build_child_agent was taken up: its runtime's calls go through the shim's route
    assert answers["delegate"] == {"ready": True, "overrides": {}, "delegated": {"goal": "g"}}
    assert answers["approval"] == {"mode": "manual", "safe": True, "not_text": False}
    assert answers["llm"] == [None, "agent.auxiliary_client.call_llm: the model's base_url must be an http(s) URL, "
                              "not 'ftp://nowhere'"]  # (the fake model answered without content)
    [asked] = endpoint.bodies("/chat/completions")
    assert (asked["model"], asked["messages"], asked["max_tokens"]) == ("m-1", [{"role": "user", "content": "x"}], 5)

    missing = sorted(defined[key] for key in defined.keys() - called)
    assert missing == [], "\n".join(missing)

"""Real Hermes Agent plugins load unchanged: the plugin guide's calculator from every source, the whole
``PluginContext`` surface with Hermes Agent's semantics, what published plugins really do, and two
plugins installed from PyPI."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import zipfile
from pathlib import Path

import pytest

from hermes_core import HermesHome, Runtime, set_approval_callback
from hermes_core.calls.hooks import KNOWN_HOOKS

FIXTURES = Path(__file__).parent / "fixtures"
PLUGINS = FIXTURES / "hermes_agent"
GUIDE_FILES = ("plugin.yaml", "__init__.py", "schemas.py", "tools.py")
POST_TOOL_CALL_KEYWORDS = ["api_request_id", "args", "duration_ms", "error_message", "error_type",
                           "middleware_trace", "result", "session_id", "status", "task_id", "tool_call_id",
                           "tool_name", "turn_id"]
#: Published Hermes Agent plugins, pinned; blackwall pulls in its dependency blackwall-sdk.
PUBLISHED = ("hermes-github-app-plugin==0.2.0", "blackwall-hermes-plugin==0.1.0")


@pytest.fixture(autouse=True)
def forget_plugin_modules():
    """Directory plugins import as ``hermes_plugins.<slug>``; no test sees another test's modules."""

    def forget() -> None:
        for name in [n for n in sys.modules if n.startswith("hermes_plugins.")]:
            del sys.modules[name]

    forget()
    yield
    forget()


def add_plugins(root: Path, *names: str) -> None:
    for name in names:
        shutil.copytree(PLUGINS / name, root / name)


def user_plugins(home: Path, *names: str) -> Runtime:
    """Copy fixture plugins into ``$HERMES_HOME/plugins/`` and load them into a fresh runtime."""
    add_plugins(home / "plugins", *names)
    runtime = Runtime()
    runtime.load_plugins()
    return runtime


def call(runtime: Runtime, name: str, args: object, **context: str) -> dict:
    return json.loads(runtime.handle_function_call(name, args, **context))


def plugin_module(runtime: Runtime, plugin_id: str):
    """The module a directory plugin imported as (``hermes_plugins.<slug>``, unless another live runtime
    holds that name for another folder)."""
    module = runtime.plugin(plugin_id).module
    assert module.startswith(f"hermes_plugins.{plugin_id.replace('-', '_')}")
    return sys.modules[module]


# -- the plugin guide's calculator, from each source ------------------------------------------------------


def test_guide_calculator_loads_as_a_user_plugin_and_its_hook_sees_every_call(isolated_home):
    runtime = user_plugins(isolated_home, "calculator")
    record = runtime.plugin("calculator")
    assert (record.source, record.state, record.version, record.warnings) == ("user", "loaded", "1.0.0", [])
    assert (record.tools, record.hooks) == (["calculate", "unit_convert"], ["post_tool_call"])
    definitions = runtime.get_tool_definitions(enabled_toolsets=["calculator"])
    assert [d["function"]["name"] for d in definitions] == ["calculate", "unit_convert"]
    assert definitions[1]["function"]["parameters"]["required"] == ["value", "from_unit", "to_unit"]

    assert call(runtime, "calculate", {"expression": "2**16"}, task_id="t1") == {"expression": "2**16",
                                                                                 "result": 65536}
    converted = call(runtime, "unit_convert", '{"value": 100, "from_unit": "F", "to_unit": "C"}', task_id="t2")
    assert converted["output"] == "37.7778 C"
    assert plugin_module(runtime, "calculator")._call_log == [{"tool": "calculate", "session": "t1"},
                                                     {"tool": "unit_convert", "session": "t2"}]


def test_guide_calculator_loads_as_a_project_plugin_only_when_opted_in(monkeypatch):
    add_plugins(Path.cwd() / ".hermes" / "plugins", "calculator")
    closed = Runtime()
    closed.load_plugins()
    assert closed.plugin("calculator") is None and "hermes_plugins.calculator" not in sys.modules

    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    runtime = Runtime()
    runtime.load_plugins()
    assert (runtime.plugin("calculator").source, runtime.plugin("calculator").state) == ("project", "loaded")
    assert call(runtime, "calculate", {"expression": "sqrt(144)"}, task_id="p1")["result"] == 12.0
    assert plugin_module(runtime, "calculator")._call_log == [{"tool": "calculate", "session": "p1"}]


CALCULATOR_FROM_PIP = """
import json
import hermes_core

definitions = hermes_core.get_tool_definitions(enabled_toolsets=["calculator"])
results = [
    json.loads(hermes_core.handle_function_call("calculate", {"expression": "pi * 5**2"}, task_id="pip-1")),
    json.loads(hermes_core.handle_function_call("unit_convert", {"value": 5, "from_unit": "km", "to_unit": "mi"},
                                                task_id="pip-2")),
]
import hermes_calculator

record = hermes_core.default_runtime().plugin("calculator")
print(json.dumps({
    "record": [record.source, record.state, record.distribution, record.version, record.warnings],
    "manifest": [record.manifest.name, record.manifest.provides_tools, record.manifest.provides_hooks],
    "tools": [d["function"]["name"] for d in definitions],
    "results": results,
    "log": hermes_calculator._call_log,
}))
"""


@pytest.fixture(scope="module")
def compat_venv(make_venv):
    """One venv holding the fixture distributions of Hermes Agent plugins (real pip, real wheels)."""
    venv = make_venv("hermes-agent-compat")
    venv.install("hermes-calculator", "hermes-legacy-units", "hermes-dice")
    return venv


def test_guide_calculator_loads_from_a_pip_distribution(compat_venv):
    data = compat_venv.json(CALCULATOR_FROM_PIP)
    assert data["record"] == ["pip", "loaded", "hermes-calculator", "1.0.0", []]
    assert data["manifest"] == ["calculator", ["calculate", "unit_convert"], ["post_tool_call"]]
    assert data["tools"] == ["calculate", "unit_convert"]
    assert data["results"] == [{"expression": "pi * 5**2", "result": 78.53981633974483},
                               {"input": "5 km", "result": 3.106864, "output": "3.106864 mi"}]
    assert data["log"] == [{"tool": "calculate", "session": "pip-1"}, {"tool": "unit_convert", "session": "pip-2"}]


def test_calculator_wheel_ships_the_guide_files_unchanged(wheelhouse):
    # the distribution's package is a link to the guide's folder; the wheel must hold those very files
    [wheel] = wheelhouse.glob("hermes_calculator-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        for name in GUIDE_FILES:
            assert archive.read(f"hermes_calculator/{name}") == (PLUGINS / "calculator" / name).read_bytes()


# -- tools: async handlers, check_fn, requires_env, emoji ---------------------------------------------------


def test_async_tool_handlers_run_with_or_without_a_running_event_loop(isolated_home, monkeypatch):
    monkeypatch.setenv("FORECAST_API_KEY", "k")
    runtime = user_plugins(isolated_home, "async-forecast")
    result = call(runtime, "forecast", {"city": "Oslo"}, task_id="a1")
    assert (result["city"], result["sky"], result["task_id"]) == ("Oslo", "clear", "a1")

    async def from_a_coroutine() -> str:
        return runtime.handle_function_call("forecast", {"city": "Lima"})

    inside = json.loads(asyncio.run(from_a_coroutine()))
    assert inside["city"] == "Lima" and inside["thread"] != "MainThread"
    assert runtime.run_command("forecast-status", "now") == "forecast ok (now)"


def test_check_fn_requires_env_and_emoji_keep_hermes_agent_meaning(isolated_home, monkeypatch):
    runtime = user_plugins(isolated_home, "async-forecast")
    forecast, radar = runtime.registry.get("forecast"), runtime.registry.get("radar")
    assert (forecast.is_async, forecast.emoji, forecast.requires_env) == (True, "⛅", ["FORECAST_API_KEY"])
    assert (forecast.toolset, radar.toolset, radar.emoji) == ("weather", "weather", "🌧")

    # requires_env passed to register_tool is part of availability, with the variable as the reason; a call still
    # reaches the handler (as in Hermes Agent), which may give the plugin's own set-up hint
    assert runtime.get_tool_definitions() == []
    assert runtime.registry.check("forecast").reason == "environment variable FORECAST_API_KEY is not set"
    assert call(runtime, "forecast", {"city": "Oslo"})["sky"] == "clear"
    assert call(runtime, "radar", {}) == {"error": "Tool 'radar' is unavailable: its check reported it unavailable"}
    monkeypatch.setenv("RADAR_URL", "https://radar.example/now.png")
    monkeypatch.setenv("FORECAST_API_KEY", "k")
    runtime.registry.invalidate_checks()
    assert [d["function"]["name"] for d in runtime.get_tool_definitions()] == ["forecast", "radar"]
    assert call(runtime, "radar", {}) == {"radar": "https://radar.example/now.png"}


def test_handlers_and_schemas_in_other_shapes_still_register():
    runtime = Runtime()
    ctx = runtime.context("shapes")
    wrapped = {"type": "function", "function": {"name": "old", "description": "Old style",
                                                "parameters": {"type": "object", "properties": {}}}}
    ctx.register_tool(name="old", toolset="shapes", schema=wrapped, handler=lambda args: '"no kwargs"')
    assert runtime.get_tool_definitions() == [wrapped]
    assert runtime.handle_function_call("old", {}, task_id="t", session_id="s") == '"no kwargs"'
    with pytest.raises(TypeError, match="handler must be callable"):
        ctx.register_tool(name="broken", toolset="shapes", schema={}, handler="shapes.tools:broken")


# -- hooks ---------------------------------------------------------------------------------------------------


def test_hooks_get_only_the_keywords_they_declare(isolated_home):
    runtime = user_plugins(isolated_home, "hook-styles")
    assert runtime.plugin("hook-styles").hooks == ["on_kanban_event", "on_session_start", "post_tool_call",
                                                   "pre_tool_call", "transform_tool_result"]
    assert call(runtime, "styles_echo", {"text": "hi"}, task_id="t", session_id="s", tool_call_id="c") == {
        "echo": "hi"}
    assert plugin_module(runtime, "hook-styles").calls == [
        ("guard", "styles_echo", {"text": "hi"}),
        ("observe_everything", "styles_echo", POST_TOOL_CALL_KEYWORDS),
        ("count_status", "styles_echo", "ok", True),
    ]


def test_every_hermes_agent_hook_name_is_known_and_unknown_names_warn_but_are_kept(isolated_home, caplog):
    ctx = Runtime().context("all-hooks")
    with caplog.at_level("WARNING", logger="hermes_core.calls.hooks"):
        for name in sorted(KNOWN_HOOKS):
            ctx.register_hook(name, lambda **kwargs: None)
    assert len(KNOWN_HOOKS) == 23 and caplog.records == []

    with caplog.at_level("WARNING", logger="hermes_core.calls.hooks"):
        runtime = user_plugins(isolated_home, "hook-styles")
    [warning] = [r.getMessage() for r in caplog.records]
    assert "unknown hook 'on_kanban_event'" in warning and "'hook-styles'" in warning
    runtime.hooks.call("on_kanban_event", event={"task": 7})
    runtime.hooks.call("on_session_start", session_id="s1", model="m", platform="cli")
    assert plugin_module(runtime, "hook-styles").calls == [("on_kanban_event", {"task": 7}),
                                                  ("on_session_start", "s1", "cli")]


def test_pre_tool_call_block_stops_the_call_and_post_tool_call_sees_it(isolated_home):
    runtime = user_plugins(isolated_home, "hook-styles")
    assert call(runtime, "styles_delete", {"text": "x"}) == {"error": "hook-styles: deleting is not allowed"}
    assert ("count_status", "styles_delete", "blocked", True) in plugin_module(runtime, "hook-styles").calls


@pytest.mark.parametrize(("answer", "allowed"), [("once", True), ("deny", False)])
def test_pre_tool_call_approve_asks_the_approval_callback(isolated_home, answer, allowed):
    runtime = user_plugins(isolated_home, "hook-styles")
    asked = []
    set_approval_callback(lambda request: asked.append((request.message, request.rule_key)) or answer)
    result = call(runtime, "styles_publish", {"text": "draft"})
    assert asked == [("Publish the draft?", "hook-styles:publish")]
    if allowed:
        assert result == {"echo": "draft"}
    else:
        assert list(result) == ["error"] and "not approved" in result["error"]


def test_transform_tool_result_replaces_the_result(isolated_home):
    runtime = user_plugins(isolated_home, "hook-styles")
    assert call(runtime, "styles_secret", {"text": "hunter2"}) == {"echo": "[redacted]"}


# -- commands, skills, middleware, dispatch_tool, get_config, probing --------------------------------------


def test_slash_commands_are_listed_normalized_and_callable(isolated_home):
    runtime = user_plugins(isolated_home, "surface")
    assert sorted(runtime.commands) == ["shout", "surface-status"]
    shout = runtime.commands["shout"]
    assert (shout.description, shout.args_hint, shout.plugin) == ("Echo in capitals through the tool", "<text>",
                                                                  "surface")
    assert runtime.run_command("/Surface Status", " now ") == "surface: all systems nominal (now)"
    with pytest.raises(KeyError, match="unknown command /nope"):
        runtime.run_command("nope")


def test_dispatch_tool_from_a_command_runs_the_full_call_path(isolated_home):
    runtime = user_plugins(isolated_home, "surface", "hook-styles")
    assert json.loads(runtime.run_command("shout", "  quiet please ")) == {
        "wrapped": {"echo": "QUIET PLEASE", "task_id": "from-command"}}
    guard, observed, counted = plugin_module(runtime, "hook-styles").calls
    assert guard == ("guard", "surface_echo", {"text": "QUIET PLEASE"})
    assert observed[:2] == ("observe_everything", "surface_echo") and counted[2] == "ok"


def test_middleware_rewrites_requests_and_wraps_execution(isolated_home):
    runtime = user_plugins(isolated_home, "surface", "hook-styles")
    assert call(runtime, "surface_echo", {"text": "  padded  "}, task_id="m1") == {
        "wrapped": {"echo": "padded", "task_id": "m1"}}
    assert call(runtime, "styles_echo", {"text": "  untouched "}) == {"echo": "  untouched "}
    assert [kind for kind, _ in runtime.middleware.items()] == ["tool_request", "tool_execution"]


def test_skills_from_a_folder_or_a_file_are_listed_and_readable(isolated_home):
    runtime = user_plugins(isolated_home, "surface")
    assert sorted(runtime.skills) == ["surface:checklist", "surface:workflow"]
    workflow, checklist = runtime.skills["surface:workflow"], runtime.skills["surface:checklist"]
    assert workflow.description == "How to use the surface plugin step by step"
    assert "# Surface workflow" in workflow.read()
    assert (checklist.description, checklist.read().splitlines()[0]) == ("Before you enable surface",
                                                                         "# Surface checklist")
    ctx = runtime.context("surface")
    with pytest.raises(ValueError, match="invalid skill name"):
        ctx.register_skill("surface:workflow", workflow.path)
    with pytest.raises(FileNotFoundError, match=r"has no SKILL\.md"):
        ctx.register_skill("empty", isolated_home)


def test_get_config_reads_the_plugin_settings(isolated_home):
    HermesHome.from_env().edit_config(lambda doc: doc.update({"plugins": {"entries": {"surface": {
        "settings": {"greeting": "ahoy", "limits": {"max_items": 3}}}}}}))
    runtime = user_plugins(isolated_home, "surface")
    seen = plugin_module(runtime, "surface").seen
    assert (seen["greeting"], seen["max_items"]) == ("ahoy", 3)


def test_manifest_and_plugin_id_are_on_the_context(isolated_home):
    runtime = user_plugins(isolated_home, "surface")
    seen = plugin_module(runtime, "surface").seen
    assert (seen["manifest"], seen["plugin_id"]) == (("surface", "0.4.2"), "surface")


def test_feature_probing_with_getattr_sees_what_hermes_provides(isolated_home):
    unguarded = isolated_home / "plugins" / "engine-only"
    unguarded.mkdir(parents=True)
    (unguarded / "__init__.py").write_text("def register(ctx):\n    ctx.register_context_engine(object())\n")
    runtime = user_plugins(isolated_home, "surface")
    assert runtime.plugin("surface").state == "loaded"
    probes = plugin_module(runtime, "surface").seen["probes"]
    assert [name for name, present in probes.items() if not present] == ["register_context_engine", "llm"]
    failed = runtime.plugin("engine-only")
    assert failed.state == "error"
    assert failed.reason.startswith("register() raised AttributeError: PluginContext has no "
                                    "'register_context_engine': Hermes provides the tool-layer part")
    assert "getattr(ctx, 'register_context_engine', None)" in failed.reason


def test_cli_command_is_mounted_as_a_hermes_subcommand(compat_venv, isolated_home):
    add_plugins(isolated_home / "plugins", "surface")
    echoed = compat_venv.hermes_cli("surface", "echo", "hello", "there")
    assert (echoed.returncode, echoed.stdout) == (0, "hello there\n"), echoed.stderr
    usage = compat_venv.hermes_cli("surface")
    assert (usage.returncode, usage.stdout) == (2, "Usage: hermes surface <status|echo>\n")
    helped = compat_venv.hermes_cli("--help")
    assert "Manage the surface plugin" in helped.stdout, helped.stderr


# -- what published plugins really do ------------------------------------------------------------------------


def test_manifest_with_extra_and_differently_shaped_fields_loads_with_warnings(isolated_home):
    runtime = user_plugins(isolated_home, "manifest-shapes")
    record = runtime.plugin("manifest-shapes")
    assert record.state == "loaded", record.reason
    assert record.warnings == [f"unknown manifest field {name!r} ignored"
                               for name in ("hooks", "label", "pip_dependencies", "provides")]
    manifest = record.manifest
    assert (manifest.version, manifest.kind, [env.name for env in manifest.requires_env]) == (
        "0.3", "standalone", ["SHAPES_TOKEN", "SHAPES_URL"])
    assert call(runtime, "shapes_echo", {"text": "ok"}) == {"echo": "ok"}
    assert plugin_module(runtime, "manifest-shapes").seen == ["shapes_echo"]


TOLERATED_FROM_PIP = """
import json
import hermes_core

runtime = hermes_core.Runtime()
runtime.load_plugins()
import hermes_dice.plugin
import hermes_legacy_units

out = {pid: [runtime.plugin(pid).state, runtime.plugin(pid).warnings] for pid in ("legacy-units", "dice")}
out["meters"] = json.loads(runtime.handle_function_call("feet_to_meters", {"feet": 10}))
out["rolls"] = json.loads(runtime.handle_function_call("roll_dice", {"count": 3, "sides": 6, "seed": 1}))
out["observed"] = hermes_legacy_units.observed
out["dice_manifest"] = hermes_dice.plugin.seen["manifest_name"]
print(json.dumps(out))
"""


def test_legacy_group_callable_value_and_foreign_wheel_manifest_load_with_warnings(compat_venv):
    out = compat_venv.json(TOLERATED_FROM_PIP)
    legacy_state, (group_warning, *manifest_warnings) = out["legacy-units"]
    assert legacy_state == "loaded"
    assert group_warning == "deprecated: entry-point group 'hermes.plugins'; use 'hermes_agent.plugins'"
    assert manifest_warnings == [f"unknown manifest field {name!r} ignored"
                                 for name in ("hooks", "label", "pip_dependencies", "provides")]
    assert out["dice"] == ["loaded", ["deprecated: entry-point value 'hermes_dice.plugin:register' names a "
                                      "callable; Hermes Agent expects a module that has `register` "
                                      "('hermes_dice.plugin')"]]
    assert out["dice_manifest"] == "dice"
    assert out["meters"] == {"meters": 3.048} and len(out["rolls"]["rolls"]) == 3
    assert out["observed"] == [["feet_to_meters", "ok"], ["roll_dice", "ok"]]


def test_plugins_using_shimmed_internals_load_and_run(isolated_home):
    HermesHome.from_env().edit_config(lambda doc: doc.update({"model": "hermes-4-70b"}))
    runtime = user_plugins(isolated_home, "uses-tools-registry", "uses-hermes-cli")
    assert [runtime.plugin(pid).state for pid in ("uses-tools-registry", "uses-hermes-cli")] == ["loaded", "loaded"]
    assert (runtime.plugin("uses-tools-registry").tools, runtime.registry.get("ping").plugin) == (
        ["ping"], "uses-tools-registry")
    assert call(runtime, "ping", {}) == {"pong": True}
    assert call(runtime, "whoami", {}) == {"model": "hermes-4-70b"}


@pytest.mark.parametrize(("statement", "dotted"), [
    ("from agent.memory_manager import MemoryManager", "agent.memory_manager"),
    ("import gateway.platforms.telegram", "gateway.platforms.telegram"),
    ("from tools.terminal_tool import set_approval_callback", "tools.terminal_tool"),
    ("import json\nfrom hermes_cli.config import (\n    load_config,\n    save_config,\n)",
     "hermes_cli.config.save_config"),
])
def test_an_internal_without_a_shim_is_named_with_the_file_and_line(isolated_home, statement, dotted):
    folder = isolated_home / "plugins" / "internal"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("from . import impl\n\ndef register(ctx):\n    pass\n")
    (folder / "impl.py").write_text(f'"""Uses internals."""\n{statement}\n')
    runtime = Runtime()
    runtime.load_plugins()
    reason = runtime.plugin("internal").reason
    line = 3 if dotted.endswith("save_config") else 2
    assert reason.startswith(f"imports {dotted!r} (internal/impl.py:{line}), ")
    assert ("does not provide (it has cfg_get, get_config_path" if dotted.endswith("save_config") else
            "a Hermes Agent internal module that is not part of the plugin contract and has no compatibility shim"
            ) in reason


WRAPS_THE_MISSING_INTERNAL = '''
class SettingsError(Exception):
    pass

def register(ctx):
    try:
        from agent.context_compressor import ContextCompressor
    except ImportError as exc:
        raise SettingsError("must run inside the Hermes Agent Python environment") from exc
'''


def test_a_register_error_caused_by_a_missing_internal_names_the_internal(isolated_home):
    # incontext==0.0.5 does this: its own error, raised from the ImportError of Hermes Agent's context compressor
    folder = isolated_home / "plugins" / "wrapper"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(WRAPS_THE_MISSING_INTERNAL)
    runtime = Runtime()
    runtime.load_plugins()
    reason = runtime.plugin("wrapper").reason
    assert reason.startswith("register() raised SettingsError: must run inside the Hermes Agent Python environment, "
                             "because it imports 'agent.context_compressor' (wrapper/__init__.py:7), ")
    assert reason.endswith("a Hermes Agent internal module that is not part of the plugin contract and has no "
                           "compatibility shim; the plugin must use only what register(ctx) is given")


# -- published plugins from PyPI -----------------------------------------------------------------------------

PUBLISHED_PLUGINS = """
import json
import hermes_core

runtime = hermes_core.Runtime()
runtime.load_plugins()

import blackwall_hermes

fired = []
for name in ("handle_pre_tool_call", "handle_post_tool_call"):
    def spy(original=getattr(blackwall_hermes, name), name=name, **kwargs):
        fired.append([name, kwargs["tool_name"], kwargs["tool_call_id"]])
        return original(**kwargs)
    setattr(blackwall_hermes, name, spy)

out = {}
for pid in ("github-app", "blackwall"):
    record = runtime.plugin(pid)
    out[pid] = {"state": record.state, "reason": record.reason, "source": record.source,
                "distribution": record.distribution, "version": record.version, "tools": record.tools,
                "hooks": record.hooks}
out["toolsets"] = runtime.registry.toolsets()
out["cli_commands"] = sorted(runtime.cli_commands)
out["skills"] = {name: skill.read() for name, skill in runtime.skills.items()}
out["result"] = runtime.handle_function_call("github_app_status", {}, task_id="pypi-1", tool_call_id="call-1")
out["fired"] = fired
print(json.dumps(out))
"""
NO_CREDENTIALS = {"BLACKWALL_API_KEY": "", "GITHUB_APP_CLIENT_ID": "", "GITHUB_APP_INSTALLATION_ID": "",
                  "GITHUB_APP_INSTALLATION_IDS": "", "GITHUB_APP_PRIVATE_KEY": "", "GITHUB_APP_PRIVATE_KEY_PATH": ""}
GITHUB_APP_TOOLS = ["github_app_status", "github_app_verify_identity", "github_app_api", "github_app_graphql",
                    "github_app_create_issue", "github_app_comment_issue", "github_app_create_pr",
                    "github_app_comment_pr"]


@pytest.mark.network
def test_published_hermes_agent_plugins_from_pypi_load_list_and_run(make_venv, package_index):
    venv = make_venv("published")
    installed = venv.run(venv.python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *PUBLISHED,
                         timeout=900)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    out = venv.json(PUBLISHED_PLUGINS, env=NO_CREDENTIALS)
    github, blackwall = out["github-app"], out["blackwall"]
    assert github == {"state": "loaded", "reason": "", "source": "pip", "distribution": "hermes-github-app-plugin",
                      "version": "0.2.0", "tools": GITHUB_APP_TOOLS, "hooks": []}
    assert blackwall == {"state": "loaded", "reason": "", "source": "pip", "distribution": "blackwall-hermes-plugin",
                         "version": "0.1.0", "tools": [], "hooks": ["post_tool_call", "pre_tool_call"]}
    assert out["toolsets"] == {"github_app": GITHUB_APP_TOOLS}
    assert out["cli_commands"] == ["hermes-github-app"]
    assert "# GitHub App Workflow" in out["skills"]["github-app:github-app-workflow"]

    status = json.loads(out["result"])
    assert status["success"] is False and "client ID" in status["error"]
    assert out["fired"] == [["handle_pre_tool_call", "github_app_status", "call-1"],
                            ["handle_post_tool_call", "github_app_status", "call-1"]]

    cli = venv.hermes_cli("hermes-github-app", "status", env=NO_CREDENTIALS)
    assert cli.returncode == 1 and "missing GitHub App client ID" in cli.stderr, cli.stdout + cli.stderr

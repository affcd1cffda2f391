"""Plugin loading: sources, gating, precedence, declared tools, isolation of bad plugins, rollback."""

from __future__ import annotations

import json
import sys

import pytest

from hermes_core import HermesHome, Runtime, get_tool_definitions, handle_function_call
from hermes_core._version import __version__

DECLARED = """\
name: {id}
version: 1.0
tools:
  - name: {tool}
    toolset: {toolset}
    description: Echo
    parameters: {{type: object, properties: {{text: {{type: string}}}}}}
    handler: {handler}
"""
TOOLS_PY = "import json\n\ndef echo(args, **kwargs):\n    return json.dumps({'echo': args.get('text')})\n"
REGISTERS = """
import json

def register(ctx):
    ctx.register_tool(name="{tool}", toolset="{toolset}", schema={{"description": "x"}},
                      handler=lambda args, **kw: json.dumps({{"from": "{tool}"}}))
"""


def loaded(runtime: Runtime | None = None) -> Runtime:
    runtime = runtime or Runtime()
    runtime.load_plugins()
    return runtime


def state(runtime: Runtime, plugin_id: str) -> tuple[str, str]:
    record = runtime.plugin(plugin_id)
    assert record is not None, f"{plugin_id} not discovered"
    return record.state, record.reason


# -- project plugins need the opt-in -------------------------------------------------------------


@pytest.fixture
def project_plugin(plugins):
    plugins.folder("proj", init=REGISTERS.format(tool="proj_tool", toolset="proj"), source="project")
    return plugins


def test_project_plugin_not_imported_without_opt_in(project_plugin):
    runtime = loaded()
    assert runtime.plugin("proj") is None
    runtime.get_tool_definitions()
    assert "Unknown tool" in runtime.handle_function_call("proj_tool", {})
    assert not project_plugin.imported("proj")
    assert "hermes_plugins.proj" not in sys.modules


@pytest.mark.parametrize("value", ["1", "true", "TRUE", " yes ", "On"])
def test_project_plugin_loads_with_each_truthy_spelling(project_plugin, monkeypatch, value):
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", value)
    runtime = loaded()
    assert state(runtime, "proj") == ("loaded", "")
    assert json.loads(runtime.handle_function_call("proj_tool", {})) == {"from": "proj_tool"}
    assert project_plugin.imported("proj")


@pytest.mark.parametrize("value", ["0", "false", "", "no", "off", "2"])
def test_project_plugin_stays_out_with_falsy_values(project_plugin, monkeypatch, value):
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", value)
    runtime = loaded()
    assert runtime.plugin("proj") is None and not project_plugin.imported("proj")


# -- declared tools are lazy ---------------------------------------------------------------------


def test_declared_only_plugin_is_imported_by_its_first_call_only(plugins):
    plugins.folder("lazy", manifest=DECLARED.format(id="lazy", tool="lazy_echo", toolset="lazy",
                                                    handler=".tools:echo"),
                   init="", files={"tools.py": TOOLS_PY})
    runtime = loaded()
    assert state(runtime, "lazy")[0] == "declared"
    assert [d["function"]["name"] for d in runtime.get_tool_definitions()] == ["lazy_echo"]
    assert not plugins.imported("lazy") and "hermes_plugins.lazy" not in sys.modules
    assert json.loads(runtime.handle_function_call("lazy_echo", {"text": "hi"})) == {"echo": "hi"}
    assert plugins.imported("lazy") and "hermes_plugins.lazy.tools" in sys.modules


def test_declared_pip_plugin_manifest_is_read_without_import(plugins):
    plugins.distribution("pipdecl", "pipdecl_pkg", manifest=DECLARED.format(
        id="pipdecl", tool="pip_echo", toolset="pipdecl", handler="pipdecl_pkg.tools:echo"),
        files={"tools.py": TOOLS_PY})
    runtime = loaded()
    record = runtime.plugin("pipdecl")
    assert (record.state, record.source, record.version, record.tools) == ("declared", "pip", "1.0", ["pip_echo"])
    assert not plugins.imported("pipdecl") and "pipdecl_pkg" not in sys.modules
    assert json.loads(runtime.handle_function_call("pip_echo", {"text": "x"})) == {"echo": "x"}
    assert plugins.imported("pipdecl")


def test_module_level_api_uses_the_default_runtime(plugins):
    plugins.folder("modapi", manifest=DECLARED.format(id="modapi", tool="mod_echo", toolset="m",
                                                      handler=".tools:echo"),
                   init="", files={"tools.py": TOOLS_PY})
    assert [d["function"]["name"] for d in get_tool_definitions()] == ["mod_echo"]
    assert json.loads(handle_function_call("mod_echo", {"text": "a"})) == {"echo": "a"}


def test_handler_that_does_not_import_is_a_tool_error_naming_plugin_and_handler(plugins):
    plugins.folder("broken-handler", manifest=DECLARED.format(id="broken-handler", tool="bh", toolset="bh",
                                                              handler=".missing:echo"), init="")
    runtime = loaded()
    error = json.loads(runtime.handle_function_call("bh", {}))["error"]
    assert "plugin 'broken-handler'" in error and "'.missing:echo'" in error


# -- pip entry points ----------------------------------------------------------------------------


def test_pip_plugin_with_register_loads(plugins):
    plugins.distribution("pipreg", "pipreg_pkg", init=REGISTERS.format(tool="pipreg_tool", toolset="pr"))
    runtime = loaded()
    record = runtime.plugin("pipreg")
    assert record.state == "loaded" and record.imported and record.import_ms is not None
    assert record.register_ms is not None and record.tools == ["pipreg_tool"]


def test_legacy_group_and_callable_value_load_with_deprecation_warnings(plugins):
    plugins.distribution("legacygroup", "legacy_group_pkg", group="hermes.plugins",
                         init=REGISTERS.format(tool="lg_tool", toolset="lg"))
    plugins.distribution("callable", "callable_pkg", value="callable_pkg:setup",
                         init=REGISTERS.format(tool="cv_tool", toolset="cv").replace("def register", "def setup"))
    runtime = loaded()
    assert state(runtime, "legacygroup")[0] == "loaded"
    assert any("hermes.plugins" in w for w in runtime.plugin("legacygroup").warnings)
    assert state(runtime, "callable")[0] == "loaded"
    assert any("callable_pkg:setup" in w for w in runtime.plugin("callable").warnings)
    assert {"lg_tool", "cv_tool"} <= set(runtime.registry.names())


# -- selection -----------------------------------------------------------------------------------


@pytest.fixture
def three(plugins):
    for name in ("alpha", "beta", "gamma"):
        plugins.folder(name, init=REGISTERS.format(tool=f"{name}_tool", toolset=name))
    return plugins


def states(runtime):
    return {r.id: r.state for r in runtime.plugins}


def test_disabled_always_wins_and_is_never_imported(three):
    HermesHome.from_env().edit_config(
        lambda d: d.update({"plugins": {"disabled": ["beta"], "enabled": ["alpha", "beta"]}}))
    runtime = loaded()
    assert states(runtime) == {"alpha": "loaded", "beta": "disabled", "gamma": "not enabled"}
    assert not three.imported("beta") and not three.imported("gamma")


@pytest.mark.parametrize(("value", "expected"), [
    ("", {"alpha": "not enabled", "beta": "not enabled", "gamma": "not enabled"}),
    ("gamma, alpha", {"alpha": "loaded", "beta": "not enabled", "gamma": "loaded"}),
])
def test_hermes_load_plugins_overrides_per_process(three, monkeypatch, value, expected):
    monkeypatch.setenv("HERMES_LOAD_PLUGINS", value)
    assert states(loaded()) == expected


def test_safe_mode_loads_nothing(three, monkeypatch):
    monkeypatch.setenv("HERMES_SAFE_MODE", "1")
    runtime = loaded()
    assert set(states(runtime).values()) == {"disabled"}
    assert not any(three.imported(n) for n in ("alpha", "beta", "gamma"))


def test_same_id_in_two_sources_project_beats_user_beats_pip(plugins, monkeypatch):
    monkeypatch.setenv("HERMES_ENABLE_PROJECT_PLUGINS", "1")
    plugins.distribution("dup", "dup_pkg", init=REGISTERS.format(tool="dup_tool", toolset="pip"))
    plugins.folder("dup", init=REGISTERS.format(tool="dup_tool", toolset="user"))
    plugins.folder("dup", init=REGISTERS.format(tool="dup_tool", toolset="project"), source="project")
    runtime = loaded()
    by_source = {r.source: r for r in runtime.plugins if r.id == "dup"}
    assert by_source["project"].state == "loaded"
    assert by_source["user"].state == by_source["pip"].state == "shadowed"
    assert "shadowed by the project plugin" in by_source["user"].reason
    assert runtime.registry.get("dup_tool").toolset == "project"


# -- bad plugins are isolated --------------------------------------------------------------------


BAD_PLUGINS = {
    "syntax": (None, "def register(ctx:\n", "SyntaxError"),
    "importer": (None, "import no_such_module_anywhere\n", "module 'no_such_module_anywhere' is not installed"),
    "noregister": (None, "x = 1\n", "has no callable `register`"),
    "badyaml": ("name: [unclosed\n", "", "invalid YAML"),
    "badfield": ("name: badfield\ntools:\n  - name: has space\n    toolset: t\n    description: d\n"
                 "    handler: a.b:c\n", "", "tools.0.name"),
    "toonew": ("manifest_version: 1\nname: toonew\nrequires_hermes: '>=99'\n", "def register(ctx): pass\n",
               "requires hermes-tools >=99"),
    "internals": (None, "from gateway.platforms.telegram import TelegramAdapter\n", "Hermes Agent internal"),
}


def test_each_bad_plugin_is_isolated_with_a_clear_reason(plugins):
    for plugin_id, (manifest, init, _) in BAD_PLUGINS.items():
        plugins.folder(plugin_id, manifest=manifest, init=init)
    plugins.folder("good", init=REGISTERS.format(tool="good_tool", toolset="good"))
    runtime = loaded()
    for plugin_id, (_, _, reason) in BAD_PLUGINS.items():
        record_state, record_reason = state(runtime, plugin_id)
        assert record_state == "error" and reason in record_reason, (plugin_id, record_reason)
    assert json.loads(runtime.handle_function_call("good_tool", {})) == {"from": "good_tool"}


def test_a_manifest_plugin_whose_package_defines_no_register_is_declarative(plugins):
    """A ``manifest_version: 1`` package shipping only skills, its ``__init__.py`` empty, is not a load error."""
    folder = plugins.folder("skillsonly", manifest="manifest_version: 1\nname: skillsonly\nskills: [skills/howto]\n",
                            init="")
    (folder / "skills" / "howto").mkdir(parents=True)
    (folder / "skills" / "howto" / "SKILL.md").write_text("---\nname: howto\ndescription: How to.\n---\nSteps.\n")
    runtime = loaded()
    assert state(runtime, "skillsonly") == ("declared", "")
    assert runtime.contributions.of_plugin("skillsonly")["skills"] == ["skillsonly:howto"]


def test_register_that_raises_leaves_nothing_behind(plugins):
    plugins.folder("halfway", init="""
def register(ctx):
    ctx.register_tool(name="half_a", toolset="half", schema={}, handler=lambda a, **k: "a")
    ctx.register_hook("pre_tool_call", lambda **kw: None)
    ctx.register_command("half", lambda raw: "x")
    ctx.register_tool(name="half_b", toolset="half", schema={}, handler=lambda a, **k: "b")
    raise RuntimeError("config missing")
""")
    runtime = loaded()
    assert state(runtime, "halfway") == ("error", "register() raised RuntimeError: config missing")
    assert "half_a" not in runtime.registry and "half_b" not in runtime.registry
    assert runtime.hooks.implementations("pre_tool_call") == [] and "half" not in runtime.commands


def test_rollback_restores_a_tool_the_failed_plugin_replaced(plugins):
    runtime = Runtime()
    runtime.register_tool("shared", "s", {"description": "original"}, lambda a, **k: "original")
    plugins.folder("replacer", init="""
def register(ctx):
    ctx.register_tool(name="shared", toolset="s", schema={}, handler=lambda a, **k: "replaced")
    raise ValueError("boom")
""")
    runtime.load_plugins()
    assert runtime.handle_function_call("shared", {}) == "original"


@pytest.mark.parametrize("granted", [False, True])
def test_cross_toolset_override_needs_the_grant(plugins, granted):
    if granted:
        HermesHome.from_env().edit_config(
            lambda d: d.update({"plugins": {"entries": {"grabber": {"allow_tool_override": True}}}}))
    runtime = Runtime()
    runtime.register_tool("taken", "core", {"description": "x"}, lambda a, **k: "core")
    plugins.folder("grabber", init="""
def register(ctx):
    ctx.register_tool(name="taken", toolset="mine", schema={}, handler=lambda a, **k: "mine", override=True)
""")
    runtime.load_plugins()
    assert runtime.handle_function_call("taken", {}) == ("mine" if granted else "core")
    refusals = [(r.plugin, "allow_tool_override" in r.reason) for r in runtime.registry.refusals]
    assert refusals == ([] if granted else [("grabber", True)])


def test_unknown_manifest_fields_warn_and_are_kept_out_of_the_way(plugins):
    plugins.folder("extra", manifest="name: extra\nlabel: Extra\npip_dependencies: [x]\n",
                   init=REGISTERS.format(tool="extra_tool", toolset="e"))
    record = loaded().plugin("extra")
    assert record.state == "loaded"
    assert record.warnings == ["unknown manifest field 'label' ignored",
                               "unknown manifest field 'pip_dependencies' ignored"]


def test_manifest_name_mismatch_warns_and_the_id_wins(plugins):
    plugins.folder("real-id", manifest="name: other\n", init=REGISTERS.format(tool="rid", toolset="r"))
    record = loaded().plugin("real-id")
    assert record.state == "loaded" and "differs from the plugin id" in record.warnings[0]


def test_manifest_toolsets_define_composites(plugins):
    plugins.folder("composite", manifest=DECLARED.format(id="composite", tool="c_echo", toolset="c_base",
                                                         handler=".tools:echo")
                   + "toolsets:\n  - {name: research, tools: [c_echo], includes: [c_base, not_installed]}\n",
                   init="", files={"tools.py": TOOLS_PY})
    runtime = loaded()
    assert runtime.resolve_toolset("research") == ["c_echo"]


def test_plugin_record_carries_load_timings(plugins):
    plugins.folder("timed", init=REGISTERS.format(tool="timed_tool", toolset="t"))
    record = loaded().plugin("timed")
    assert record.import_ms >= 0 and record.register_ms >= 0


@pytest.mark.parametrize("source", ["pip", "user"])
def test_hermes_agent_manifest_fields_in_other_shapes_are_dropped_with_a_warning(plugins, source):
    manifest = "name: foreign\nversion: '2.0'\nrequires_env: 5\nprovides_hooks: {a: 1}\n"
    init = REGISTERS.format(tool="foreign_tool", toolset="f")
    if source == "pip":
        plugins.distribution("foreign", "foreign_pkg", manifest=manifest, init=init)
    else:
        plugins.folder("foreign", manifest=manifest, init=init)
    record = loaded().plugin("foreign")
    assert (record.state, record.tools, record.manifest.version) == ("loaded", ["foreign_tool"], "2.0")
    [warning] = record.warnings
    assert warning.startswith("plugin.yaml fields 'provides_hooks', 'requires_env' ignored (a Hermes Agent manifest")
    assert "plugin.yaml:3: requires_env" in warning


def test_requires_env_items_with_hermes_agents_setup_fields_are_read(plugins):
    plugins.distribution("wizard", "wizard_pkg", init=REGISTERS.format(tool="wizard_tool", toolset="w"),
                         manifest="name: wizard\nrequires_env:\n  - {name: W_ID, prompt: Your id, password: false}\n"
                                  "  - {name: W_TOKEN, description: The token, prompt: Token, password: true}\n")
    record = loaded().plugin("wizard")
    assert [(e.name, e.description, e.secret) for e in record.manifest.requires_env] == [
        ("W_ID", "", False), ("W_TOKEN", "The token", True)]
    assert record.warnings == []


WHEEL_MANIFEST_OF_HERMES_AGENT = """name: big-tools
version: 0.4.0
description: Fourteen tools for Hermes Agent
kind: standalone
requires_hermes: ">=0.21.5"
pip_dependencies: [httpx]
"""


def test_requires_hermes_of_a_hermes_agent_manifest_is_shown_not_checked(plugins):
    plugins.distribution("big-tools", "big_tools", manifest=WHEEL_MANIFEST_OF_HERMES_AGENT,
                         init=REGISTERS.format(tool="big_tool", toolset="big"))
    record = loaded().plugin("big-tools")
    assert (record.state, record.tools, record.manifest.requires_hermes) == ("loaded", ["big_tool"], ">=0.21.5")
    assert record.candidate.foreign_manifest
    assert record.warnings[0] == ("requires_hermes '>=0.21.5' is shown, not checked: this plugin.yaml is in Hermes "
                                  "Agent's format, where it names a Hermes Agent version")


@pytest.mark.parametrize(("manifest", "foreign"), [
    ("name: a\nrequires_hermes: '>=99'\n", True),
    ("manifest_version: 1\nname: a\nkind: standalone\nrequires_hermes: '>=99'\n", True),
    ("manifest_version: 1\nname: a\nrequires_hermes: '>=99'\n", False),
    ("name: a\nrequires_hermes: '>=99'\ntools: []\n", False),
])
def test_hermes_own_manifests_keep_enforcing_requires_hermes(plugins, manifest, foreign):
    plugins.distribution("a", "a_pkg", manifest=manifest, init="def register(ctx):\n    pass\n")
    record = loaded().plugin("a")
    assert record.candidate.foreign_manifest is foreign
    assert (record.state, record.reason) == (("loaded", "") if foreign else
                                             ("error", f"requires hermes-tools >=99, but this is {__version__}"))


def test_wheel_manifest_with_tools_must_validate(plugins):
    plugins.distribution("strict", "strict_pkg", manifest="name: strict\ntools:\n  - {name: x}\n",
                         init=REGISTERS.format(tool="strict_tool", toolset="s"))
    record = loaded().plugin("strict")
    assert record.state == "error" and "invalid manifest" in record.reason and "strict_tool" not in record.tools


def test_unknown_hook_name_is_recorded_as_a_warning(plugins):
    plugins.folder("oddhook", init="def register(ctx):\n    ctx.register_hook('on_moon_rise', lambda **kw: None)\n")
    record = loaded().plugin("oddhook")
    assert record.hooks == ["on_moon_rise"] and "not a Hermes hook" in record.warnings[-1]


def test_debug_variable_prints_discovery_details(plugins, monkeypatch, capsys):
    monkeypatch.setenv("HERMES_PLUGINS_DEBUG", "1")
    plugins.folder("chatty", init=REGISTERS.format(tool="chatty_tool", toolset="c"))
    plugins.folder("broken", init="raise RuntimeError('nope')\n")
    loaded()
    err = capsys.readouterr().err
    assert "[hermes plugins] chatty (user): loaded" in err
    assert "[hermes plugins] broken (user): error import of 'hermes_plugins.broken' failed" in err

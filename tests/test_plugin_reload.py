"""``Runtime.reload_plugins()`` and Hermes Agent's ``discover_plugins(force=True)`` (hermes-evolve's ``/evolve now``):
new plugins load, changed ones are unloaded through their undo callables and loaded again, gone ones are unloaded,
unchanged ones are kept as they are; a plugin whose new code fails leaves nothing of itself behind."""

from __future__ import annotations

import json
import os
import shutil
import time

from hermes_core import Runtime

PLUGIN = """
def register(ctx):
    ctx.register_tool(name="{tool}", toolset="{tool}", schema={{"name": "{tool}", "parameters": {{}}}},
                      handler=lambda args, **kw: "{answer}")
    ctx.register_hook("pre_tool_call", lambda **kw: None)
"""
RELOADS = """
def register(ctx):
    def now(raw):
        from hermes_cli.plugins import discover_plugins
        discover_plugins(force=True)
        return "reloaded"
    ctx.register_command("reload-now", now)
"""


def write(folder, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__init__.py").write_text(text)
    later = time.time() + 5  # a modification time that differs even on a coarse clock
    os.utime(folder / "__init__.py", (later, later))


def test_reload_loads_new_reloads_changed_unloads_gone_and_keeps_the_rest(isolated_home):
    plugins = isolated_home / "plugins"
    write(plugins / "changing", PLUGIN.format(tool="changing_tool", answer="v1"))
    write(plugins / "steady", PLUGIN.format(tool="steady_tool", answer="same"))
    write(plugins / "leaving", PLUGIN.format(tool="leaving_tool", answer="bye"))
    write(plugins / "evolve", RELOADS)
    runtime = Runtime(home=isolated_home, entry_points=())
    runtime.load_plugins()
    steady = runtime.plugin("steady")
    assert runtime.handle_function_call("changing_tool", {}) == "v1"
    assert len(runtime.hooks.implementations("pre_tool_call")) == 3

    write(plugins / "changing", PLUGIN.format(tool="changing_tool", answer="v2"))
    shutil.rmtree(plugins / "leaving")
    write(plugins / "arriving", PLUGIN.format(tool="arriving_tool", answer="hello"))
    report = runtime.reload_plugins()

    assert (report["loaded"], report["reloaded"], report["unloaded"]) == (["arriving"], ["changing"], ["leaving"])
    assert sorted(report["kept"]) == ["evolve", "steady"] and runtime.plugin("steady") is steady
    assert runtime.handle_function_call("changing_tool", {}) == "v2"
    assert runtime.handle_function_call("arriving_tool", {}) == "hello"
    assert "leaving_tool" not in runtime.registry and runtime.plugin("leaving") is None
    assert len(runtime.hooks.implementations("pre_tool_call")) == 3  # changing's old hook undone, arriving's added
    assert sorted(r.id for r in runtime.plugins) == ["arriving", "changing", "evolve", "steady"]

    # Hermes Agent's discover_plugins(force=True), from a plugin's command, as hermes-evolve's /evolve now runs it
    write(plugins / "changing", PLUGIN.format(tool="changing_tool", answer="v3"))
    assert runtime.run_command("reload-now") == "reloaded"
    assert runtime.handle_function_call("changing_tool", {}) == "v3"
    runtime.close()


def test_a_plugin_whose_new_code_fails_leaves_nothing_of_itself(isolated_home):
    plugins = isolated_home / "plugins"
    write(plugins / "fragile", PLUGIN.format(tool="fragile_tool", answer="ok"))
    runtime = Runtime(home=isolated_home, entry_points=())
    runtime.load_plugins()
    write(plugins / "fragile", PLUGIN.format(tool="fragile_tool", answer="ok") + "    raise RuntimeError('broken')\n")
    assert runtime.reload_plugins()["reloaded"] == ["fragile"]
    record = runtime.plugin("fragile")
    assert record.state == "error" and "RuntimeError: broken" in record.reason
    assert "fragile_tool" not in runtime.registry and runtime.hooks.implementations("pre_tool_call") == []
    assert "Unknown tool" in json.loads(runtime.handle_function_call("fragile_tool", {}))["error"]
    runtime.close()


DECLARED = "name: {id}\ntools:\n  - {{name: {id}_tool, toolset: {id}, description: {text}, handler: .tools:run}}\n"
HANDLER = "def run(args, **kwargs):\n    return {answer!r}\n"


def declared(folder, text: str, answer: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "plugin.yaml").write_text(DECLARED.format(id=folder.name, text=text))
    (folder / "tools.py").write_text(HANDLER.format(answer=answer))
    later = time.time() + 5
    for name in ("plugin.yaml", "tools.py"):
        os.utime(folder / name, (later, later))


def test_declared_plugins_reload_by_their_declarations_until_used_then_by_their_files(isolated_home):
    """A declared-only plugin loads without a plugin context; until one of its tools is used its code never ran, so
    a reload compares what it declares; once used, its files, as for a plugin whose code ran at load."""
    plugins = isolated_home / "plugins"
    for name in ("unused", "renamed", "used"):
        declared(plugins / name, "Version one", "v1")
    runtime = Runtime(home=isolated_home, entry_points=())
    runtime.load_plugins()
    assert runtime.handle_function_call("used_tool", {}) == "v1"

    declared(plugins / "unused", "Version one", "v2")  # code only: read when first used, nothing to reload
    declared(plugins / "renamed", "Version two", "v1")
    declared(plugins / "used", "Version one", "v2")
    report = runtime.reload_plugins()

    assert (report["kept"], sorted(report["reloaded"])) == (["unused"], ["renamed", "used"])
    assert runtime.registry.get("renamed_tool").description == "Version two"
    assert runtime.handle_function_call("used_tool", {}) == "v2"
    assert runtime.handle_function_call("unused_tool", {}) == "v2"
    assert sorted(runtime.reload_plugins()["kept"]) == ["renamed", "unused", "used"]
    runtime.close()

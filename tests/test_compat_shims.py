"""The Hermes Agent compatibility shims: served to plugin code only, only when the real module is absent, and
acting for the runtime that loads or calls the plugin."""

from __future__ import annotations

import importlib
import json
import shutil
import sys

import pytest

from hermes_core import HermesHome, Runtime
from hermes_core.plugins.compat import SHIMS

USES_INTERNALS = '''
import json
import threading

from agent.web_search_provider import WebSearchProvider
from hermes_cli.config import get_env_value, get_hermes_home, load_config
from tools.interrupt import is_interrupted, set_interrupt
from tools.registry import registry, tool_error, tool_result


def _tools(args, **kwargs):
    return tool_result(names=registry.get_all_tool_names(), toolset=registry.get_toolset_for_tool("shim_tools"))


def _settings(args, **kwargs):
    entry = load_config()["plugins"]["entries"].get("shimmed", {})
    return tool_result(flavor=entry.get("flavor"), home=str(get_hermes_home()), token=get_env_value("SHIM_TOKEN"))


def _interrupt(args, **kwargs):
    before = is_interrupted()
    set_interrupt(True)
    during = is_interrupted()
    set_interrupt(False, threading.get_ident())
    return tool_result(before=before, during=during, after=is_interrupted())


def _fail(args, **kwargs):
    return tool_error("no luck", code=7)


class Backend(WebSearchProvider):
    name = "shim-backend"

    def is_available(self):
        return True


def register(ctx):
    for name, handler in (("shim_tools", _tools), ("shim_settings", _settings), ("shim_interrupt", _interrupt),
                          ("shim_fail", _fail)):
        registry.register(name=name, toolset="shimmed", handler=handler,
                          schema={"name": name, "description": name, "parameters": {"type": "object"}})
    ctx.register_web_search_provider(Backend())
'''


@pytest.fixture(autouse=True)
def no_shim_modules():
    """Each test starts with no shim imported and the directory plugins forgotten."""

    def forget() -> None:
        for name in [n for n in sys.modules if n in SHIMS or n.startswith("hermes_plugins.")]:
            del sys.modules[name]

    forget()
    yield
    forget()


def call(runtime: Runtime, name: str, args: dict | None = None) -> dict:
    return json.loads(runtime.handle_function_call(name, args or {}))


def test_a_plugin_importing_the_shimmed_internals_loads_and_its_tools_run(plugins, monkeypatch):
    monkeypatch.setenv("SHIM_TOKEN", "from-env")
    plugins.folder("shimmed", init=USES_INTERNALS)
    runtime = plugins.runtime()
    runtime.load_plugins()
    record = runtime.plugin("shimmed")
    assert (record.state, record.tools) == ("loaded", ["shim_tools", "shim_settings", "shim_interrupt", "shim_fail"])
    assert call(runtime, "shim_tools") == {"names": ["shim_fail", "shim_interrupt", "shim_settings", "shim_tools"],
                                           "toolset": "shimmed"}
    assert call(runtime, "shim_interrupt") == {"before": False, "during": True, "after": False}
    assert call(runtime, "shim_fail") == {"error": "no luck", "code": 7}
    assert list(runtime.web_search_providers) == ["shim-backend"]
    assert runtime.web_search_providers["shim-backend"].plugin == "shimmed"


def test_a_declared_plugins_handler_finds_its_runtime_through_the_shims(plugins, tmp_path):
    """A plugin that only declares tools loads with no plugin context; its first call makes one before its code
    runs, so a shim its handler imports acts for its own runtime (each of two homes)."""
    manifest = "name: declared\ntools:\n  - {name: where_home, toolset: d, description: d, handler: .tools:run}\n"
    handler = ("def run(args, **kwargs):\n    from hermes_constants import get_hermes_home\n"
               "    return str(get_hermes_home())\n")
    folder = plugins.folder("declared", manifest=manifest, files={"tools.py": handler})
    other = tmp_path / "other-home"
    shutil.copytree(folder, other / "plugins" / "declared")
    runtimes = [plugins.runtime(), plugins.runtime(home=other)]
    for runtime in runtimes:
        runtime.load_plugins()
        assert runtime.plugin("declared").state == "declared"
    assert [runtime.handle_function_call("where_home", {}) for runtime in runtimes] == \
        [str(runtime.home.root) for runtime in runtimes]


def test_shims_are_served_to_plugin_code_only(plugins):
    plugins.folder("shimmed", init=USES_INTERNALS)
    plugins.runtime().load_plugins()
    for name in [n for n in sys.modules if n in SHIMS]:
        del sys.modules[name]
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("tools.registry")
    assert importlib.util.find_spec("hermes_cli") is None


def test_a_real_module_wins_over_its_shim(plugins):
    (plugins.site / "tools").mkdir()
    (plugins.site / "tools" / "__init__.py").write_text("")
    (plugins.site / "tools" / "registry.py").write_text("registry = 'the real one'\n")
    plugins.folder("real", init="from tools.registry import registry\n\n"
                                "def register(ctx):\n    ctx.manifest.description = registry\n")
    runtime = plugins.runtime()
    runtime.load_plugins()
    assert runtime.plugin("real").state == "loaded"
    assert sys.modules["tools.registry"].registry == "the real one"


def test_each_runtime_sees_its_own_registry_config_and_env_file(plugins, tmp_path, monkeypatch):
    monkeypatch.delenv("SHIM_TOKEN", raising=False)
    homes = [tmp_path / "home-a", tmp_path / "home-b"]
    runtimes = []
    for home, flavor in zip(homes, ("mint", "lime"), strict=True):
        shutil.copytree(plugins.folder("shimmed", init=USES_INTERNALS), home / "plugins" / "shimmed")
        HermesHome(home).edit_config(lambda doc, f=flavor: doc.update(
            {"plugins": {"entries": {"shimmed": {"flavor": f}}}}))
        (home / ".env").write_text(f"# secrets\nexport SHIM_TOKEN='{flavor}-token'\n")
        runtime = Runtime(home, entry_points=())
        runtime.load_plugins()
        runtimes.append(runtime)
    runtimes[1].register_tool("only_in_b", "b", {"description": "b"}, lambda args, **kw: "{}")
    shutil.rmtree(plugins.home / "plugins" / "shimmed")

    a, b = (call(runtime, "shim_settings") for runtime in runtimes)
    assert a == {"flavor": "mint", "home": str(homes[0]), "token": "mint-token"}
    assert b == {"flavor": "lime", "home": str(homes[1]), "token": "lime-token"}
    assert "only_in_b" not in call(runtimes[0], "shim_tools")["names"]
    assert "only_in_b" in call(runtimes[1], "shim_tools")["names"]


WRAPS_OTHERS = '''
from tools.registry import registry


def register(ctx):
    for name in list(registry._tools):
        entry = registry._tools[name]
        registry.register(name=name, toolset=entry.toolset, schema=entry.schema,
                          handler=lambda args, _h=entry.handler, **kw: "wrapped " + _h(args, **kw))
'''


def test_registering_through_the_shim_keeps_the_conflict_policy(plugins):
    plugins.folder("owner", init="def register(ctx):\n    ctx.register_tool(name='own', toolset='o', schema={}, "
                                 "handler=lambda args, **kw: 'own')\n")
    plugins.folder("wrapper", init=WRAPS_OTHERS)
    runtime = plugins.runtime()
    runtime.load_plugins()
    assert runtime.handle_function_call("own", {}) == "own"
    [refusal] = runtime.registry.refusals
    assert (refusal.tool, refusal.plugin) == ("own", "wrapper") and "allow_tool_override" in refusal.reason


def test_a_register_that_raises_rolls_back_what_it_registered_through_the_shim(plugins):
    plugins.folder("halfway", init="from tools.registry import registry\n\ndef register(ctx):\n"
                                   "    registry.register(name='half', toolset='h', schema={}, handler=print)\n"
                                   "    raise RuntimeError('second thoughts')\n")
    runtime = plugins.runtime()
    runtime.load_plugins()
    assert runtime.plugin("halfway").reason == "register() raised RuntimeError: second thoughts"
    assert "half" not in runtime.registry

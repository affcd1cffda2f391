"""Costs that stay flat as plugins grow (issue 43): a call of one tool loads the plugins it needs, definitions
read the manifests of the tools they output. The figures are bench/scale.py's; these tests hold the behaviour."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from hermes_core.authoring.testing import scaled_timeout

HANDLER = {"tools.py": "import json\n\ndef run(args, **kwargs):\n    return json.dumps({'ran': __name__})\n"}
HOOK = ("def register(ctx):\n    ctx.register_hook('pre_tool_call', lambda tool_name, **kw: {'action': 'block', "
        "'message': 'blocked ' + tool_name} if tool_name.endswith('_guarded') else None)\n")


def declared(plugin_id: str, *names: str) -> str:
    tools = "".join(f"  - {{name: {name}, toolset: {plugin_id}, description: The {name} tool, handler: .tools:run, "
                    "annotations: {read_only: true}}\n" for name in names)
    return f"name: {plugin_id}\ntools:\n{tools}"


def many(plugins, count: int = 40) -> None:
    for index in range(count):
        plugins.folder(f"p{index:02d}", manifest=declared(f"p{index:02d}", f"t{index:02d}_a", f"t{index:02d}_b"),
                       files=HANDLER)


def test_a_load_for_one_tool_loads_its_plugin_and_the_rest_on_the_first_lookup_that_needs_it(plugins):
    many(plugins)
    plugins.folder("hooker", init=HOOK)  # runs code: always loaded at once (its hooks apply to the call)
    plugins.runtime().discover()
    runtime = plugins.runtime()

    runtime.load_plugins(for_tool="t17_b")

    assert sorted(record.id for record in runtime.plugins) == ["hooker", "p17"]
    assert json.loads(runtime.handle_function_call("t17_b", {}))["ran"].endswith("p17.tools")
    assert len(runtime.plugins) == 2  # the call needed nothing else
    assert json.loads(runtime.handle_function_call("t03_a", {}))["ran"].endswith("p03.tools")  # a miss: the rest
    assert len(runtime.plugins) == 41 and len(runtime.registry.names()) == 80
    assert [record.id for record in runtime.plugins][2:] == [f"p{index:02d}" for index in range(40) if index != 17]


def test_a_listing_completes_a_load_for_one_tool(plugins):
    many(plugins, 5)
    runtime = plugins.runtime()
    runtime.load_plugins(for_tool="t01_a")
    assert len(runtime.registry) == 10 and "t04_b" in runtime.registry
    assert len(runtime.get_tool_definitions(defer="none")) == 10


def test_a_plugin_that_declares_the_same_name_loads_first_as_in_a_full_load(plugins):
    """Who wins a name wins it as in a full load: a plugin earlier in the order that declares a name a needed
    plugin declares is loaded with it."""
    plugins.folder("a-first", manifest=declared("a-first", "shared_tool"), files=HANDLER)
    plugins.folder("b-second", manifest=declared("b-second", "shared_tool", "wanted"), files=HANDLER)
    plugins.folder("c-other", manifest=declared("c-other", "unrelated"), files=HANDLER)
    runtime = plugins.runtime()

    runtime.load_plugins(for_tool="wanted")

    assert sorted(record.id for record in runtime.plugins) == ["a-first", "b-second"]
    assert runtime.registry.get("shared_tool").plugin == "a-first"
    assert "already belongs" in runtime.registry.refusals[-1].reason


def test_hermes_tools_call_runs_the_hooks_of_every_plugin(plugins, isolated_home):
    """``hermes tools call`` loads first what the call needs: the called tool's plugin and every plugin that runs
    code, whose hooks still see the call."""
    many(plugins, 10)
    plugins.folder("p04", manifest=declared("p04", "t04_guarded"), files=HANDLER)
    plugins.folder("hooker", init=HOOK)
    env = {**os.environ, "HERMES_HOME": str(isolated_home)}
    hermes = [sys.executable, "-c", "import sys; from hermes_core.cli import main; sys.exit(main())"]

    ran = subprocess.run([*hermes, "tools", "call", "t07_a", "{}"], env=env, capture_output=True, text=True,
                         timeout=scaled_timeout(120))
    blocked = subprocess.run([*hermes, "tools", "call", "t04_guarded"], env=env, capture_output=True, text=True,
                             timeout=scaled_timeout(120))

    assert json.loads(ran.stdout)["ran"].endswith("p07.tools"), ran.stderr
    assert "blocked t04_guarded" in blocked.stdout + blocked.stderr


def test_definitions_under_tool_search_read_the_manifests_of_the_tools_they_output_only(plugins, isolated_home):
    many(plugins)
    (isolated_home / "config.yaml").write_text("tools:\n  tool_search: {enabled: on}\n")
    plugins.runtime().discover()  # the discovery cache: manifests are read from it when needed
    runtime = plugins.runtime()
    runtime.load_plugins()

    definitions = runtime.get_tool_definitions()

    assert [d["function"]["name"] for d in definitions] == ["tool_search", "tool_describe", "tool_call"]
    read = [record.id for record in runtime.plugins if "_manifest_data" in record.candidate.__dict__]
    assert len(read) <= 1  # "on" estimates one tool before it knows it activates

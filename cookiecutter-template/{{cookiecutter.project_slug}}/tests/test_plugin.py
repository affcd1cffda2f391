"""The plugin as Hermes sees it, through the fixtures of ``hermes_core.authoring.testing`` (a pytest plugin
that comes with hermes-tools): an isolated HERMES_HOME, a fresh runtime, loading, calling.

These tests hold whatever tools and hooks the plugin gains, as long as plugin.yaml says what the
code does (``hermes plugins compile`` keeps the tools: entries so).
"""

from __future__ import annotations

PLUGIN = "{{ cookiecutter.plugin_name }}"
PACKAGE = "{{ cookiecutter.package_name }}"
TOOL = "{{ cookiecutter.tool_name }}"
TOOLSET = "{{ cookiecutter.toolset }}"


def test_loads_cleanly_under_its_entry_point_name(load_hermes_plugin) -> None:
    record = load_hermes_plugin(PACKAGE)

    assert record.id == PLUGIN
    assert record.warnings == []
    assert TOOL in record.tools


def test_plugin_yaml_says_what_the_code_does(manifest_drift) -> None:
    assert manifest_drift(PACKAGE) == []


def test_is_imported_at_load_only_when_it_must_run_code_there(load_hermes_plugin) -> None:
    record = load_hermes_plugin(PACKAGE)

    # declared tools are listed without importing the plugin; register(ctx) (hooks) needs an import
    must_run_code = record.candidate.defines_register or not record.manifest.declarative
    assert record.state == ("loaded" if must_run_code else "declared")
    assert record.imported == must_run_code


def test_registers_the_hooks_its_manifest_lists(load_hermes_plugin) -> None:
    record = load_hermes_plugin(PACKAGE)

    assert sorted(record.hooks) == sorted(record.manifest.provides_hooks)


def test_tool_is_offered_to_the_model_in_its_toolset(load_hermes_plugin, hermes_runtime) -> None:
    load_hermes_plugin(PACKAGE)

    offered = {d["function"]["name"]: d["function"]
               for d in hermes_runtime.get_tool_definitions(enabled_toolsets=[TOOLSET])}

    assert offered[TOOL]["parameters"]["required"] == ["name"]


def test_call_through_hermes(load_hermes_plugin, call_tool) -> None:
    load_hermes_plugin(PACKAGE)

    assert call_tool(TOOL, name="Ada") == {"greeting": "Hello, Ada."}


def test_arguments_are_coerced_to_the_schema(load_hermes_plugin, call_tool) -> None:
    load_hermes_plugin(PACKAGE)

    assert call_tool(TOOL, name="Ada", excited="true") == {"greeting": "Hello, Ada!"}


def test_a_missing_argument_is_reported_to_the_model(load_hermes_plugin, call_tool) -> None:
    load_hermes_plugin(PACKAGE)

    assert "name" in call_tool(TOOL)["error"]


def test_a_tool_error_reaches_the_model_as_its_message(load_hermes_plugin, call_tool) -> None:
    load_hermes_plugin(PACKAGE)

    assert call_tool(TOOL, name=" ") == {"error": "name is empty: say who to greet"}

"""The plugin as Hermes sees it, through the fixtures of ``hermes_core.testing`` (a pytest plugin
that comes with hermes-tools): an isolated HERMES_HOME, a fresh runtime, loading, calling."""

from __future__ import annotations

PLUGIN = "{{ cookiecutter.plugin_name }}"
PACKAGE = "{{ cookiecutter.package_name }}"
TOOL = "{{ cookiecutter.tool_name }}"
TOOLSET = "{{ cookiecutter.toolset }}"


def test_loads_cleanly_under_its_entry_point_name(load_hermes_plugin) -> None:
    record = load_hermes_plugin(PACKAGE)

    assert record.id == PLUGIN
    assert record.warnings == []
    assert record.tools == [TOOL]
{%- if cookiecutter.with_hook %}


def test_is_imported_at_load_to_register_its_hook(load_hermes_plugin) -> None:
    record = load_hermes_plugin(PACKAGE)

    assert record.state == "loaded"
    assert record.hooks == ["pre_tool_call"]
{%- else %}


def test_is_known_from_its_manifest_without_importing_it(load_hermes_plugin) -> None:
    record = load_hermes_plugin(PACKAGE)

    assert record.state == "declared"
    assert not record.imported
{%- endif %}


def test_tool_is_offered_to_the_model_in_its_toolset(load_hermes_plugin, hermes_runtime) -> None:
    load_hermes_plugin(PACKAGE)

    [definition] = hermes_runtime.get_tool_definitions(enabled_toolsets=[TOOLSET])

    assert definition["function"]["name"] == TOOL
    assert definition["function"]["parameters"]["required"] == ["name"]


def test_call_through_hermes(load_hermes_plugin, call_tool) -> None:
    load_hermes_plugin(PACKAGE)

    assert call_tool(TOOL, name="Ada") == {"greeting": "Hello, Ada."}


def test_arguments_are_coerced_to_the_schema(load_hermes_plugin, call_tool) -> None:
    load_hermes_plugin(PACKAGE)

    assert call_tool(TOOL, name="Ada", excited="true") == {"greeting": "Hello, Ada!"}


def test_a_missing_argument_is_reported_to_the_model(load_hermes_plugin, call_tool) -> None:
    load_hermes_plugin(PACKAGE)

    assert "name" in call_tool(TOOL)["error"]

"""A call of a tool that is not registered says why when Hermes can tell — its plugin is disabled, not enabled or
failed to load, it is a project plugin's without HERMES_ENABLE_PROJECT_PLUGINS, its MCP server failed to start —
in the API's error and in ``hermes tools call``; an unavailable tool says why it is unavailable; and the
closest-name suggestions never offer an unavailable tool; the tool of an indexed plugin that is not installed names
the plugin and the command that installs it."""

from __future__ import annotations

import json
import sys

from click.testing import CliRunner

from hermes_core.cli import cli

NOTES = """\
name: notes
tools:
  - {name: notes_add, toolset: notes, description: Add a note, handler: .tools:add}
"""
TOOLS = {"tools.py": "def add(args, **kwargs):\n    return 'added'\n"}


def error_of(runtime, name: str) -> dict:
    return json.loads(runtime.handle_function_call(name, {}))


def cli_error(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def test_a_disabled_plugins_tool_says_its_plugin_is_disabled_and_how_to_enable_it(plugins, isolated_home):
    plugins.folder("notes", NOTES, files=TOOLS)
    (isolated_home / "config.yaml").write_text("plugins:\n  disabled: [notes]\n")
    runtime = plugins.runtime()
    runtime.load_plugins()

    error = error_of(runtime, "notes_add")["error"]
    assert error == ("Unknown tool 'notes_add': its plugin 'notes' is disabled (listed in plugins.disabled); "
                     "`hermes plugins enable notes` enables it")
    assert cli_error("tools", "call", "notes_add") == f"Error: unknown tool {error.removeprefix('Unknown tool ')}"


def test_a_tool_of_a_plugin_outside_the_allow_list_says_so(plugins, isolated_home):
    plugins.folder("notes", NOTES, files=TOOLS)
    (isolated_home / "config.yaml").write_text("plugins:\n  enabled: [other]\n")
    runtime = plugins.runtime()
    runtime.load_plugins()
    assert "its plugin 'notes' is not enabled (not listed in the plugins.enabled allow-list)" in \
        error_of(runtime, "notes_add")["error"]


def test_a_tool_of_a_plugin_that_failed_to_load_gives_the_error(plugins):
    plugins.folder("notes", NOTES + "provides_hooks: [pre_tool_call]\n",
                   "import a_module_that_is_not_installed\n", files=TOOLS)
    runtime = plugins.runtime()
    runtime.load_plugins()
    error = error_of(runtime, "notes_add")["error"]
    assert "its plugin 'notes' failed to load" in error and "a_module_that_is_not_installed" in error


def test_a_project_plugins_tool_names_the_variable_that_enables_project_plugins_without_importing_it(plugins):
    plugins.folder("proj", NOTES.replace("notes_add", "proj_tool"), "def register(ctx):\n    pass\n",
                   source="project", files=TOOLS)
    runtime = plugins.runtime()
    runtime.load_plugins()

    error = error_of(runtime, "proj_tool")["error"]
    assert "it may belong to one of this project's plugins ('proj'" in error
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in error
    assert "HERMES_ENABLE_PROJECT_PLUGINS" in cli_error("tools", "call", "proj_tool")
    assert not plugins.imported("proj"), "explaining must not import the project plugin"


def test_a_tool_of_an_mcp_server_that_failed_to_start_gives_the_servers_error(plugins, isolated_home, tmp_path):
    (isolated_home / "config.yaml").write_text(
        f"mcp_servers:\n  tickets:\n    command: {sys.executable}\n    args: ['-c', 'raise SystemExit(3)']\n"
        "    connect_timeout: 10\n")
    runtime = plugins.runtime()
    try:
        runtime.load_plugins()
        runtime.start_mcp()
        [status] = runtime.mcp.status()
        assert status.state == "unavailable" and status.last_error
        error = error_of(runtime, "mcp__tickets__open")["error"]
        assert error.startswith("Unknown tool 'mcp__tickets__open': its MCP server 'tickets' failed to start: ")
        assert status.last_error in error
    finally:
        runtime.close()


def test_an_unavailable_tool_gives_the_reason_and_is_never_suggested(plugins):
    plugins.folder("notes", NOTES + "  - {name: notes_adds, toolset: notes, description: Needs a key,\n"
                   "     handler: .tools:add, check: {env: [NOTES_KEY_NOT_SET]}}\n", files=TOOLS)
    runtime = plugins.runtime()
    runtime.load_plugins()

    assert error_of(runtime, "notes_adds")["error"] == \
        "Tool 'notes_adds' is unavailable: environment variable NOTES_KEY_NOT_SET is not set"
    suggested = error_of(runtime, "notes_addz")
    assert suggested["suggestions"] == ["notes_add"], "an unavailable tool was suggested"
    assert "notes_adds" not in cli_error("tools", "call", "notes_addz")
    called = CliRunner().invoke(cli, ["tools", "call", "notes_adds"])  # the result the model would get, exit 1
    assert called.exit_code == 1 and "unavailable: environment variable NOTES_KEY_NOT_SET" in called.output


def test_a_name_nothing_explains_gets_the_closest_names_or_the_listing_hint(plugins):
    plugins.folder("notes", NOTES, files=TOOLS)
    runtime = plugins.runtime()
    runtime.load_plugins()
    assert error_of(runtime, "notes_ad")["error"] == "Unknown tool 'notes_ad'; did you mean 'notes_add'?"
    assert cli_error("tools", "call", "zzz") == "Error: unknown tool 'zzz'; see `hermes tools list --all`"


def test_a_tool_of_an_indexed_plugin_not_installed_names_the_plugin_and_its_install_command(plugins):
    from hermes_core.index.catalog import bundled_index_path, load_index

    [provider] = [entry for entry in load_index(bundled_index_path()) if "pushary_notify" in entry.tool_names]
    runtime = plugins.runtime()
    runtime.load_plugins()

    error = error_of(runtime, "pushary_notify")["error"]

    assert error == (f"Unknown tool 'pushary_notify': it is a tool of the plugin 'pushary' ({provider.distribution}), "
                     "which is not installed; `hermes plugins install pushary` installs it")
    assert cli_error("tools", "call", "pushary_notify") == f"Error: unknown tool {error.removeprefix('Unknown tool ')}"

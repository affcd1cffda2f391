"""``hermes plugins compile`` writes ``plugin.yaml``'s ``tools:`` entries from the ``@tool`` functions (in place,
comments and hand-written fields kept), and ``hermes plugins validate`` reports drift between the two."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from hermes_core.authoring.compile import CompileError, compile_manifest, manifest_drift
from hermes_core.cli import cli
from hermes_core.plugins.discovery import candidate_for_validation
from hermes_core.plugins.manifest import load_manifest

TOOLS = '''
from typing import Annotated, Literal

from pydantic import Field

import hermes_core
from hermes_core.plugin import tool


@tool(toolset="units")
def convert(value: Annotated[float, Field(description="The amount.")], unit: Literal["km", "mi"] = "km") -> str:
    """Convert a distance."""
    return f"{value} {unit}"


@hermes_core.tool(name="unit_list", emoji="📏")
async def units() -> list[str]:
    """The units it knows."""
    return ["km", "mi"]


def helper(args, **kwargs):
    return "hand-written handler"
'''

MARKS_REGISTER = '''
open(__file__ + ".register-ran", "w").close() if False else None


def register(ctx):
    open(__file__ + ".register-ran", "w").write("x")
'''


def folder_plugin(root: Path, tools: str = TOOLS, manifest: str | None = None, init: str = MARKS_REGISTER) -> Path:
    folder = root / "units"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(init)
    (folder / "tools.py").write_text(tools)
    if manifest is not None:
        (folder / "plugin.yaml").write_text(textwrap.dedent(manifest))
    return folder


def entries(folder: Path) -> dict[str, dict]:
    data = yaml.safe_load((folder / "plugin.yaml").read_text())
    return {entry["name"]: entry for entry in data["tools"]}


# -- compile ---------------------------------------------------------------------------------------


def test_compile_creates_the_manifest_of_a_folder_plugin_from_its_decorated_functions(tmp_path: Path):
    folder = folder_plugin(tmp_path)

    result = compile_manifest(folder)

    assert result.created and result.added == ["convert", "unit_list"]
    written = entries(folder)
    assert written["convert"] == {
        "name": "convert", "toolset": "units", "description": "Convert a distance.",
        "parameters": {"type": "object",
                       "properties": {"value": {"type": "number", "description": "The amount."},
                                      "unit": {"enum": ["km", "mi"], "type": "string", "default": "km"}},
                       "required": ["value"], "additionalProperties": False},
        "handler": ".tools:convert"}
    assert written["unit_list"]["handler"] == ".tools:units"
    assert written["unit_list"]["is_async"] is True and written["unit_list"]["emoji"] == "📏"
    assert written["unit_list"]["toolset"] == "units"  # no toolset given: the plugin's id
    assert load_manifest(folder / "plugin.yaml").declarative
    assert not (folder / "__init__.py.register-ran").exists()


def test_compiled_plugin_is_declared_and_its_tools_answer(tmp_path: Path, plugins):
    folder = plugins.folder("units", init="", files={"tools.py": TOOLS})
    compile_manifest(folder)
    runtime = plugins.runtime()
    runtime.load_plugins()

    assert runtime.plugin("units").state == "declared" and not runtime.plugin("units").imported
    assert runtime.handle_function_call("convert", {"value": "2.5", "unit": "mi"}) == "2.5 mi"
    assert runtime.handle_function_call("unit_list", {}) == '["km", "mi"]'


def test_a_tool_in_the_packages_init_compiles_and_answers(tmp_path: Path, plugins):
    folder = plugins.folder("greeter", init='''
from hermes_core.plugin import tool


@tool(toolset="greeter")
def greet(name: str) -> str:
    """Greet someone."""
    return f"hello {name}"
''')

    result = compile_manifest(folder)

    assert result.added == ["greet"] and entries(folder)["greet"]["handler"] == ".:greet"
    runtime = plugins.runtime()
    runtime.load_plugins()
    assert runtime.handle_function_call("greet", {"name": "ada"}) == "hello ada"


EDITED = """\
    # The units plugin. Keep this comment.
    manifest_version: 1
    name: units
    requires_env: [UNITS_TOKEN]   # a hand-written field

    tools:
      - name: convert   # the main tool
        toolset: old-toolset
        description: "Stale description."
        parameters:
          type: object
          properties:
            value: {type: string}   # wrong type, fixed by compile
          required: [value]
        handler: .tools:convert
        check: {env: [UNITS_TOKEN]}   # kept: the code does not say this
        emoji: "🔁"
      - name: by_hand
        toolset: units
        description: A handler written by hand.
        handler: .tools:helper
"""


def test_compile_updates_in_place_keeping_comments_order_and_hand_written_fields(tmp_path: Path):
    folder = folder_plugin(tmp_path, manifest=EDITED)

    result = compile_manifest(folder)

    assert (result.added, result.updated, result.stale) == (["unit_list"], ["convert"], [])
    text = (folder / "plugin.yaml").read_text()
    for kept in ("# The units plugin. Keep this comment.", "requires_env: [UNITS_TOKEN]   # a hand-written field",
                 "- name: convert   # the main tool",
                 "check: {env: [UNITS_TOKEN]}   # kept: the code does not say this", 'emoji: "🔁"',
                 "handler: .tools:helper"):
        assert kept in text
    convert = entries(folder)["convert"]
    assert convert["toolset"] == "units" and convert["description"] == "Convert a distance."
    assert convert["parameters"]["properties"]["value"]["type"] == "number"
    assert list(entries(folder)) == ["convert", "by_hand", "unit_list"]
    assert text.index("toolset:") < text.index("description:") < text.index("parameters:") < text.index("check:")


def test_compile_twice_changes_nothing_the_second_time(tmp_path: Path):
    folder = folder_plugin(tmp_path, manifest=EDITED)
    compile_manifest(folder)
    first = (folder / "plugin.yaml").read_bytes()

    again = compile_manifest(folder)

    assert not again.changed and again.unchanged == ["convert", "unit_list"]
    assert (folder / "plugin.yaml").read_bytes() == first


def test_a_renamed_function_updates_its_entry_and_a_removed_one_is_reported_stale(tmp_path: Path):
    folder = folder_plugin(tmp_path, manifest=EDITED)
    compile_manifest(folder)
    tools = folder / "tools.py"
    for name in [name for name in sys.modules if name.startswith("hermes_plugins.units")]:
        del sys.modules[name]  # as a new `hermes plugins compile` process would
    tools.write_text(tools.read_text().replace("def helper(", "def helper_renamed(")
                     .replace("unit: Literal", "units: Literal").replace("(name=\"unit_list\", ", "("))

    result = compile_manifest(folder)

    assert result.stale == ["by_hand"]
    written = entries(folder)
    assert "unit_list" not in written and written["units"]["handler"] == ".tools:units"  # renamed in place
    assert set(written["convert"]["parameters"]["properties"]) == {"value", "units"}


def test_a_project_writes_absolute_handlers_next_to_its_package(tmp_path: Path):
    project = tmp_path / "hermes-plugin-units"
    package = project / "hermes_plugin_units"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "tools.py").write_text(TOOLS)
    (project / "pyproject.toml").write_text(textwrap.dedent("""
        [project]
        name = "hermes-plugin-units"
        version = "1.0"
        [project.entry-points."hermes_agent.plugins"]
        units = "hermes_plugin_units"
    """))

    result = compile_manifest(project)

    assert result.manifest_path == package / "plugin.yaml"
    manifest = load_manifest(package / "plugin.yaml")
    assert manifest.name == "units"
    assert [t.handler for t in manifest.tools or []] == ["hermes_plugin_units.tools:convert",
                                                         "hermes_plugin_units.tools:units"]


def test_nothing_to_compile_is_an_error_that_says_what_was_looked_for(tmp_path: Path):
    folder = folder_plugin(tmp_path, tools="def plain():\n    return 'x'\n")

    with pytest.raises(CompileError, match=r"no function decorated with @hermes_core\.plugin\.tool"):
        compile_manifest(folder)
    assert not (folder / "plugin.yaml").exists()


def test_a_module_that_fails_to_import_is_named_and_nothing_is_written(tmp_path: Path):
    folder = folder_plugin(tmp_path, manifest=EDITED, tools=TOOLS + "\nraise RuntimeError('no network here')\n")
    before = (folder / "plugin.yaml").read_text()

    with pytest.raises(CompileError, match=r"importing hermes_plugins\.units\w*\.tools failed: RuntimeError: no"):
        compile_manifest(folder)
    assert (folder / "plugin.yaml").read_text() == before


def test_an_invalid_manifest_is_reported_not_rewritten(tmp_path: Path):
    folder = folder_plugin(tmp_path, manifest="name: units\ntools: [{name: x}]\n")

    with pytest.raises(CompileError, match="fix the manifest first"):
        compile_manifest(folder)


# -- drift -----------------------------------------------------------------------------------------


DRIFTED = """\
    name: units
    tools:
      - name: convert
        toolset: units
        description: Convert a distance.
        parameters:
          type: object
          properties:
            value: {type: integer}
            precision: {type: integer}
          required: [value, unit]
        handler: .tools:convert
      - name: gone
        toolset: units
        description: Its function was deleted.
        handler: .tools:deleted
      - name: by_hand
        toolset: units
        description: A handler written by hand.
        handler: .tools:helper
"""


def test_validate_reports_drift_from_the_source_without_importing_anything(tmp_path: Path):
    folder = folder_plugin(tmp_path, manifest=DRIFTED, init="open(__file__ + '.imported', 'w')\n")
    candidate = candidate_for_validation(folder)

    problems, warnings = manifest_drift(candidate)

    assert problems == [
        "tool convert: parameter 'precision' is in plugin.yaml but not in the handler's signature",
        "tool convert: parameter 'unit' is in the handler's signature but not in plugin.yaml",
        "tool convert: parameter 'value' is number in the handler's signature but integer in plugin.yaml",
        "tool gone: its handler .tools:deleted does not exist in the plugin's code",
        "tool unit_list: .tools:units is decorated with @tool but plugin.yaml does not declare it",
    ]
    assert warnings == []
    assert not list(folder.glob("*.imported"))


def test_required_ness_and_optional_types_are_compared_too(tmp_path: Path):
    tools = TOOLS.replace("unit: Literal[\"km\", \"mi\"] = \"km\"", "unit: Literal[\"km\", \"mi\"] | None")
    folder = folder_plugin(tmp_path, tools=tools, manifest=DRIFTED)

    problems, _ = manifest_drift(candidate_for_validation(folder))

    assert "tool convert: parameter 'unit' is in the handler's signature but not in plugin.yaml" in problems
    folder.joinpath("plugin.yaml").write_text(DRIFTED.replace("precision: {type: integer}",
                                                              "unit: {type: [string, \"null\"]}"))
    problems, _ = manifest_drift(candidate_for_validation(folder))
    assert not any("'unit'" in p for p in problems)  # null or string, required on both sides


def test_validate_imports_compares_the_derived_schemas_and_descriptions(tmp_path: Path):
    folder = folder_plugin(tmp_path, manifest=EDITED)

    problems, warnings = manifest_drift(candidate_for_validation(folder), imports=True)

    assert "tool convert: parameter 'value' is number in the handler's signature but string in plugin.yaml" \
        in problems
    assert "tool convert: the description in plugin.yaml is not the handler's docstring" in warnings
    assert "tool convert: toolset 'old-toolset' in plugin.yaml, 'units' in @tool" in warnings
    compile_manifest(folder)
    assert manifest_drift(candidate_for_validation(folder), imports=True) == ([], [])


def test_cli_compile_and_validate(tmp_path: Path):
    folder = folder_plugin(tmp_path, manifest=DRIFTED)
    runner = CliRunner()

    drift = runner.invoke(cli, ["plugins", "validate", str(folder)])
    assert drift.exit_code == 1
    assert "parameter 'precision' is in plugin.yaml but not in the handler's signature" in drift.output
    assert f"`hermes plugins compile {folder}` updates plugin.yaml" in drift.output

    compiled = runner.invoke(cli, ["plugins", "compile", str(folder)])
    assert compiled.exit_code == 0, compiled.output
    assert compiled.output.startswith(f"{folder / 'plugin.yaml'}: updated (added unit_list; updated convert)")
    assert "warning: tool gone: its handler does not exist" in compiled.output

    (folder / "plugin.yaml").write_text((folder / "plugin.yaml").read_text().split("  - name: gone")[0] +
                                        (folder / "plugin.yaml").read_text().split("handler: .tools:deleted\n")[1])
    valid = runner.invoke(cli, ["plugins", "validate", str(folder), "--imports"])
    assert valid.exit_code == 0, valid.output
    assert "valid (3 declared tools" in valid.output

    missing = runner.invoke(cli, ["plugins", "compile", str(tmp_path / "nowhere")])
    assert missing.exit_code == 1 and missing.output.strip().splitlines() == \
        [f"Error: {tmp_path / 'nowhere'}: no such file or folder"]


def test_text_that_yaml_1_1_reads_as_something_else_is_quoted(tmp_path: Path):
    folder = folder_plugin(tmp_path, tools=textwrap.dedent('''
        from typing import Literal

        from hermes_core.plugin import tool


        @tool
        def switch(state: Literal["on", "off", "yes"] = "off") -> str:
            """Switch it."""
            return state
    '''))

    compile_manifest(folder)

    [declared] = load_manifest(folder / "plugin.yaml").tools or []
    assert declared.parameters["properties"]["state"] == {"enum": ["on", "off", "yes"], "type": "string",
                                                          "default": "off"}


#: A flow collection that holds something (``[a, b]``, ``{type: string}``); an empty ``[]`` / ``{}`` is the only
#: way YAML writes an empty one.
FILLED_FLOW = re.compile(r"[\[{]\s*[^\]}\s]")


@pytest.mark.parametrize("manifest", [None, "manifest_version: 1\nname: units\ntools: []  # compile fills it\n"],
                         ids=["new file", "empty tools list"])
def test_compile_writes_block_style_yaml(tmp_path: Path, manifest: str | None):
    """Item 13 of #46: what compile writes is block style, one key a line (it wrote `tools: [{name: ...}]` on one
    line), and reads back as the same data."""
    folder = folder_plugin(tmp_path, manifest=manifest)

    compile_manifest(folder)

    text = (folder / "plugin.yaml").read_text()
    assert [line for line in text.splitlines() if FILLED_FLOW.search(line.split("#")[0])] == []
    assert "\n  - name: convert\n" in text or "\n- name: convert\n" in text
    written = entries(folder)
    assert written["convert"]["parameters"]["properties"]["unit"]["enum"] == ["km", "mi"]
    assert load_manifest(folder / "plugin.yaml").tools[0].name == "convert"
    assert compile_manifest(folder).changed is False  # round-trips: compiling again changes nothing

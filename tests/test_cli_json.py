"""``--json`` on every command that prints a listing or a record, checked over the whole command tree (the lazily
loaded groups included), as docs/cli.md promises; and the JSON of ``tools show`` and ``plugins validate``."""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.cli.jsontext import indented_json

DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli.md"

#: The commands that print neither a listing nor a record, and what they print instead. A new command goes
#: either here, with its reason, or takes --json.
NOT_LISTINGS = {
    "hermes plugins install": "an action: one line on what was installed",
    "hermes plugins uninstall": "an action: one line per uninstalled distribution",
    "hermes plugins enable": "an action: edits config.yaml",
    "hermes plugins disable": "an action: edits config.yaml",
    "hermes plugins new": "an action: renders a project and says where",
    "hermes plugins compile": "an action: writes plugin.yaml and says what changed",
    "hermes tools call": "prints the tool's own result, the string the model would get",
    "hermes mcp serve": "speaks the MCP protocol on stdout or HTTP",
    "hermes mcp add": "an action: edits config.yaml",
    "hermes mcp remove": "an action: edits config.yaml",
    "hermes mcp import": "an action: edits config.yaml",
    "hermes mcp install-claude": "an action: edits Claude Desktop's configuration",
    "hermes mcp login": "an action: signs in through the browser and stores tokens",
    "hermes mcp logout": "an action: removes stored tokens",
    "hermes index fetch": "an action: writes index entry files",
    "hermes memory approve": "an action: applies one staged write and says which",
    "hermes memory reject": "an action: forgets one staged write and says which",
    "hermes sessions export": "writes JSON Lines itself (one session per line), to stdout or --output",
    "hermes memory edit": "an action: opens $EDITOR on a memory file",
    "hermes index build": "an action: writes index.json",
    "hermes index validate": "a check of the repository's index files, for its CI: problems on stderr, exit status",
    "hermes skills install": "an action: one line per installed skill",
    "hermes skills new": "an action: writes a skill's folder and says where",
    "hermes cron pause": "an action: one line on the job paused",
    "hermes cron resume": "an action: one line on the job resumed and its next run",
    "hermes cron remove": "an action: one line on the job removed",
    "hermes cron serve": "runs jobs until stopped; what each run did is in its output file",
    "hermes config path": "prints one path, for scripts as it is",
    "hermes config set": "an action: edits config.yaml",
    "hermes config unset": "an action: edits config.yaml",
    "hermes tools end": "an action: ends a named session and says so",
}


def leaf_commands() -> Iterator[tuple[str, click.Command]]:
    """Every command under ``hermes``, found as click finds them (lazy groups are imported)."""
    def walk(command: click.Command, path: str, ctx: click.Context) -> Iterator[tuple[str, click.Command]]:
        if not isinstance(command, click.Group):
            yield path, command
            return
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            assert sub is not None, f"{path} {name} is listed but cannot be loaded"
            yield from walk(sub, f"{path} {name}", click.Context(sub, parent=ctx, info_name=name))

    # resilient parsing, as in completion: the tree of the built-in commands, without loading plugins
    yield from walk(cli, "hermes", click.Context(cli, info_name="hermes", resilient_parsing=True))


def test_every_command_that_prints_a_listing_or_a_record_takes_json():
    commands = dict(leaf_commands())
    without = sorted(path for path, command in commands.items()
                     if path not in NOT_LISTINGS and not any("--json" in p.opts for p in command.params))
    assert without == [], "these print a listing or a record: give them --json, or say in NOT_LISTINGS why not"
    assert sorted(set(NOT_LISTINGS) - set(commands)) == [], "NOT_LISTINGS names commands that no longer exist"
    assert {"hermes tools show", "hermes plugins freeze", "hermes mcp list", "hermes index show"} <= \
        {path for path, command in commands.items() if any("--json" in p.opts for p in command.params)}


def test_the_cli_page_says_every_listing_takes_json():
    assert "Every listing takes `--json`" in DOCS.read_text()


DEMO = """\
name: demo
version: 1.0.0
tools:
  - name: demo_echo
    toolset: demo
    description: Echo the text
    parameters: {type: object, properties: {text: {type: string, description: What to echo}}, required: [text]}
    handler: .tools:echo
    annotations: {read_only: true}
"""


def demo(home: Path, manifest: str = DEMO) -> Path:
    folder = home / "plugins" / "demo"
    folder.mkdir(parents=True)
    (folder / "plugin.yaml").write_text(manifest)
    (folder / "tools.py").write_text("def echo(args, **kwargs):\n    return args['text']\n")
    return folder


def test_tools_show_prints_the_definition_the_model_gets_and_json_adds_what_hermes_knows(isolated_home, plugins):
    demo(isolated_home)
    runtime = plugins.runtime()
    runtime.load_plugins()
    definition = runtime.get_tool_definitions()[0]
    runner = CliRunner()
    shown = runner.invoke(cli, ["tools", "show", "demo_echo", "--json"])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output)["definition"] == definition
    assert json.loads(runner.invoke(cli, ["tools", "show", "demo_echo"]).output) == definition


def test_plugins_validate_json_reports_errors_and_warnings_with_the_same_exit_status(isolated_home, tmp_path):
    folder = demo(isolated_home)
    valid = CliRunner().invoke(cli, ["plugins", "validate", str(folder), "--json"])
    assert valid.exit_code == 0, valid.output
    assert json.loads(valid.output) == {"manifest": str(folder / "plugin.yaml"), "valid": True, "errors": [],
                                        "warnings": [], "tools": 1, "toolsets": 0}

    (folder / "plugin.yaml").write_text(DEMO.replace("toolset: demo", "toolset: 7\n    colour: blue"))
    invalid = CliRunner().invoke(cli, ["plugins", "validate", str(folder), "--json"])
    assert invalid.exit_code == 1
    report = json.loads(invalid.output)
    assert report["valid"] is False and report["errors"] and "toolset" in report["errors"][0]


class _Colour(enum.IntEnum):
    RED = 1


@pytest.mark.parametrize("data", [
    {}, [], (), "text", 3, -2.5, None, True, float("nan"), float("inf"), -float("inf"), _Colour.RED,
    [{"name": "read_file", "annotations": {"read_only": True}, "reason": None, "description": "Reads é \u202e \x01"}],
    {"b": [1, [], {}, [[]], {"x": {"y": ()}}], "a": {"z": 1.0, "y": [None, False]}, "c": Path("some/where")},
    {1: "one", 2.5: "half"}, {None: "none"}, {True: "yes", False: "no"}, [{"nested": [{"deep": ["x", 1e-7, 10**30]}]}],
])
def test_the_json_the_cli_writes_is_what_json_dumps_writes(data):
    assert indented_json(data) == json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str)


@pytest.mark.parametrize("data", [{(1, 2): "a tuple key"}, {"a": 1, 2: "keys that do not sort"}])
def test_keys_json_refuses_are_refused(data):
    with pytest.raises(TypeError):
        json.dumps(data, sort_keys=True)
    with pytest.raises(TypeError):
        indented_json(data)

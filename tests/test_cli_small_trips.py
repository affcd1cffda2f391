"""The smaller things a new user tripped on in the command line (#46): plain ``hermes`` prints its help and
succeeds; ``--arg key=true`` is text where the tool takes text; ``hermes skills show`` of an unknown skill points at
``hermes skills list``, not at the model's tool."""

from __future__ import annotations

import json

from click.testing import CliRunner

from hermes_core.cli import cli

ECHO = """\
name: echo
tools:
  - name: echo_text
    toolset: echo
    description: Echo a text and a count
    handler: .tools:echo
    parameters: {type: object, properties: {content: {type: string}, count: {type: integer}}, required: [content]}
"""
TOOLS = {"tools.py": "import json\n\ndef echo(args, **kwargs):\n    return json.dumps(args)\n"}


def test_plain_hermes_prints_its_help_and_succeeds():
    result = CliRunner().invoke(cli, [])
    assert result.exit_code == 0 and "Usage:" in result.output and "config" in result.output


def test_arg_values_are_text_where_the_schema_takes_text(plugins):
    plugins.folder("echo", ECHO, files=TOOLS)
    result = CliRunner().invoke(cli, ["tools", "call", "echo_text", "--arg", "content=true", "--arg", "count=3"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == {"content": "true", "count": 3}


def test_skills_show_of_an_unknown_skill_names_the_command_that_lists_them(isolated_home):
    result = CliRunner().invoke(cli, ["skills", "show", "nope"])
    assert result.exit_code == 1
    assert "no skill 'nope'" in result.output and "`hermes skills list` lists them all" in result.output
    assert "skills_list" not in result.output

"""The classifier runs on every command, so it must take time linear in the command's length.

Inputs that took the old regex classifier from seconds to hours run here in a child process with a
timeout: a test fails (instead of hanging the run) if classification is not fast.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hermes_plugin_terminal.danger import MAX_COMMAND_CHARS, MAX_DEPTH, Level, classify

from hermes_core.authoring.testing import scaled_timeout

CLASSIFY_IN_CHILD = """
import json, sys
from hermes_plugin_terminal.danger import classify
verdict = classify(sys.stdin.read())
print(json.dumps([verdict.level, [rule.key for rule in verdict.rules]]))
"""

HOSTILE = [
    pytest.param("sudo -x " * 24 + "ls", Level.SAFE, [], id="sudo-options"),  # exponential in the old rules
    pytest.param("nice -n 1 " * 22 + "ls", Level.SAFE, [], id="nice-options"),
    pytest.param("x" * 4900 + "(){ " + "x" * 4900, Level.DANGEROUS, ["unparsable"], id="fork-bomb-backreference"),
    pytest.param("a | " * 2499 + "b", Level.SAFE, [], id="long-pipeline"),
    pytest.param("$(" * 3000 + ")" * 3000, Level.DANGEROUS, ["dynamic_command", "unparsable"],
                 id="nested-substitutions"),
]


def classify_in_child(command: str, timeout: float = 20) -> list:
    child = subprocess.run([sys.executable, "-c", CLASSIFY_IN_CHILD], input=command, capture_output=True, text=True,
                           timeout=scaled_timeout(timeout), env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert child.returncode == 0, child.stderr
    return json.loads(child.stdout)


@pytest.mark.parametrize(("command", "level", "keys"), HOSTILE)
def test_hostile_input_is_classified_at_once(command: str, level: Level, keys: list[str]) -> None:
    assert classify_in_child(command) == [level, keys]


def test_a_command_over_the_length_cap_needs_approval_unparsed() -> None:
    verdict = classify("echo " + "x" * MAX_COMMAND_CHARS)

    assert (verdict.level, verdict.rule_key) == (Level.DANGEROUS, "too_long")
    assert classify("echo " + "x" * (MAX_COMMAND_CHARS - 5)).level is Level.SAFE


def test_scripts_nested_deeper_than_the_limit_need_approval() -> None:
    # each watch hands the rest of the line to a shell: one level of nesting per word
    assert classify("watch " * MAX_DEPTH + "ls").level is Level.SAFE
    assert classify("watch " * (MAX_DEPTH + 1) + "ls").rule_key == "unparsable"

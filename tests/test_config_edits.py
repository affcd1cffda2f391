"""``plugins disable`` / ``enable`` round-trip a config.yaml whose list carries an end-of-line comment, and
toggles racing from two processes leave a readable file that keeps every edit and the comment."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

TIMEOUT = 300 * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE", "1"))
CONFIG = "plugins:\n  disabled: []   # inline comment\n"


def hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "hermes_core.cli", *args], env=env, text=True, capture_output=True,
                          timeout=TIMEOUT)


def plugin_folders(home: Path, *ids: str) -> None:
    for plugin_id in ids:
        (home / "plugins" / plugin_id).mkdir(parents=True)
        (home / "plugins" / plugin_id / "plugin.yaml").write_text(f"name: {plugin_id}\n")


def test_disable_then_enable_round_trips_with_the_inline_comment(isolated_home: Path) -> None:
    plugin_folders(isolated_home, "xp")
    config = isolated_home / "config.yaml"
    config.write_text(CONFIG)

    assert hermes(isolated_home, "plugins", "disable", "xp").returncode == 0
    disabled = config.read_text()
    assert "# inline comment" in disabled and yaml.safe_load(disabled)["plugins"]["disabled"] == ["xp"], disabled
    result = hermes(isolated_home, "plugins", "enable", "xp")
    assert result.returncode == 0, result.stderr
    assert config.read_text() == CONFIG


TOGGLER = """
import sys
from click.testing import CliRunner
from hermes_core.cli import cli

plugin_id, rounds = sys.argv[1], int(sys.argv[2])
runner = CliRunner()
for i in range(rounds):
    for verb in ("disable", "enable"):
        result = runner.invoke(cli, ["plugins", verb, plugin_id])
        if result.exit_code:
            print(f"{verb} {i}: {result.output}")
            sys.exit(1)
runner.invoke(cli, ["plugins", "disable", plugin_id])
"""


def test_toggles_racing_from_two_processes_keep_the_file_and_every_edit(isolated_home: Path, tmp_path: Path) -> None:
    plugin_folders(isolated_home, "alpha", "beta")
    config = isolated_home / "config.yaml"
    config.write_text(CONFIG)
    script = tmp_path / "toggle.py"
    script.write_text(TOGGLER)
    env = {**os.environ, "HERMES_HOME": str(isolated_home)}
    processes = [subprocess.Popen([sys.executable, str(script), plugin_id, "25"], env=env, text=True,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for plugin_id in ("alpha", "beta")]
    outputs = [process.communicate(timeout=TIMEOUT)[0] for process in processes]

    assert [process.returncode for process in processes] == [0, 0], outputs
    text = config.read_text()
    assert "# inline comment" in text
    assert sorted(yaml.safe_load(text)["plugins"]["disabled"]) == ["alpha", "beta"], text

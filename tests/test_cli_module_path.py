"""``python -m hermes_core.cli`` run from a folder holding ``click.py``, ``json.py`` or ``pluggy.py`` imports
the real modules, never the folder's: the working directory is off ``sys.path`` before anything is imported."""

from __future__ import annotations

import os
import subprocess
import sys

TIMEOUT = 120 * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE", "1"))
SHADOWS = ("click", "json", "pluggy", "yaml", "pydantic")


def test_python_m_hermes_core_cli_ignores_modules_in_the_working_directory(tmp_path):
    marker = tmp_path / "imported.txt"
    repo = tmp_path / "repo"
    repo.mkdir()
    for name in SHADOWS:
        (repo / f"{name}.py").write_text(
            f"open({str(marker)!r}, 'a').write('{name}\\n')\nraise SystemExit('the repository {name}.py ran')\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSAFEPATH")}
    for args in (["--version"], ["plugins", "list", "--json"], ["tools", "list", "--json"]):
        result = subprocess.run([sys.executable, "-m", "hermes_core.cli", *args], cwd=repo, env=env, text=True,
                                capture_output=True, timeout=TIMEOUT)
        assert result.returncode == 0, result.stderr
        assert "repository" not in result.stderr
    assert not marker.exists(), marker.read_text()

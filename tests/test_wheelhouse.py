"""`make wheelhouse` installs offline, and `pip install hermes-tools` stays slim: both in fresh venvs of their own
(with pip, not the suite's shared site), from the wheels of this checkout and their dependencies."""

from __future__ import annotations

import json
import subprocess
import sys
import venv
from pathlib import Path

import pytest

from hermes_core.authoring.testing import scaled_timeout

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow, pytest.mark.network]  # filling the wheelhouse reads the package index once


@pytest.fixture(scope="session")
def offline_house(dist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What `make wheelhouse` makes, from the session's `make dist`."""
    house = tmp_path_factory.mktemp("offline-wheelhouse")
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_wheelhouse.py"), str(dist), str(house)],
                            capture_output=True, text=True, timeout=scaled_timeout(900))
    assert result.returncode == 0, result.stdout + result.stderr
    return house


def test_hermes_and_a_pack_install_from_the_wheelhouse_without_an_index(offline_house, tmp_path):
    path = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=True).create(path)
    python, hermes = str(path / "bin" / "python"), str(path / "bin" / "hermes")

    installed = subprocess.run([python, "-m", "pip", "install", "-q", "--isolated", "--no-index", "--find-links",
                                str(offline_house), "hermes-tools", "hermes-tools-file"], capture_output=True,
                               text=True, timeout=scaled_timeout(600))
    assert installed.returncode == 0, installed.stdout + installed.stderr

    listed = subprocess.run([hermes, "tools", "list", "--json"], capture_output=True, text=True, cwd=tmp_path,
                            env={"HERMES_HOME": str(tmp_path / "home"), "PATH": "/usr/bin:/bin"},
                            timeout=scaled_timeout(60))
    assert listed.returncode == 0, listed.stderr
    assert "read_file" in {row["name"] for row in json.loads(listed.stdout)}


def test_the_core_installs_at_most_18_distributions_and_30_mb(offline_house):
    measured = subprocess.run([sys.executable, str(ROOT / "bench" / "install_size.py"), "--no-index",
                               "--find-links", str(offline_house), "--json", "hermes-tools"], capture_output=True,
                              text=True, timeout=scaled_timeout(600))
    assert measured.returncode == 0, measured.stderr
    figures = json.loads(measured.stdout)

    names = {row["name"].lower().replace("_", "-") for row in figures["distributions"]}
    assert "hermes-tools" in names and not names & {"cookiecutter", "jinja2", "rich", "requests", "mcp"}
    assert figures["count"] <= 18, names
    assert figures["megabytes"] <= 30, figures

"""A project folder Hermes did not write cannot hang or exhaust it: a FIFO, a link to ``/dev/zero`` or a 100 MB
file planted as ``plugin.yaml`` is refused at once, and with project plugins off no file of them is read."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.config.untrusted import read_untrusted_text
from hermes_core.errors import UnsafeFileError

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs and /dev/zero are POSIX")

# a hang test bounds itself; a slow machine may scale the bound
TIMEOUT = 60 * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE", "1"))


def hermes(cwd: Path, *args: str, enable_project: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "HERMES_ENABLE_PROJECT_PLUGINS"}
    if enable_project:
        env["HERMES_ENABLE_PROJECT_PLUGINS"] = "1"
    return subprocess.run([sys.executable, "-m", "hermes_core.cli", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=TIMEOUT)


def plant(work: Path, kind: str) -> Path:
    folder = work / ".hermes" / "plugins" / "trap"
    folder.mkdir(parents=True)
    manifest = folder / "plugin.yaml"
    if kind == "fifo":
        os.mkfifo(manifest)
    elif kind == "dev-zero":
        manifest.symlink_to("/dev/zero")
    else:
        with manifest.open("wb") as file:  # 100 MB of a valid-looking manifest, not a sparse hole
            file.write(b"name: trap\ndescription: '" + b"x" * (100 << 20) + b"'\n")
    return manifest


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "large"])
def test_an_unknown_tool_is_explained_without_reading_a_planted_project_manifest(tmp_path, kind):
    work = tmp_path / "work"
    plant(work, kind)
    result = hermes(work, "tools", "call", "trap_tool", "{}")
    assert result.returncode == 1
    assert "it may belong to one of this project's plugins ('trap'" in result.stdout + result.stderr
    assert "HERMES_ENABLE_PROJECT_PLUGINS=1" in result.stdout + result.stderr


@pytest.mark.parametrize(("kind", "reason"), [("fifo", "not a regular file"), ("dev-zero", "symlink"),
                                              ("large", "larger than")])
def test_an_enabled_project_plugin_with_a_planted_manifest_fails_with_the_reason(tmp_path, kind, reason):
    work = tmp_path / "work"
    plant(work, kind)
    result = hermes(work, "plugins", "list", "--all", "--json", enable_project=True)
    assert result.returncode in (0, 1), result.stderr
    assert "trap" in result.stdout and reason in result.stdout, result.stdout + result.stderr


def test_read_untrusted_text_takes_only_small_regular_files(tmp_path):
    good = tmp_path / "good.yaml"
    good.write_text("name: good\n")
    assert read_untrusted_text(good) == "name: good\n"
    link = tmp_path / "link.yaml"
    link.symlink_to(good)
    with pytest.raises(UnsafeFileError, match="symlink"):
        read_untrusted_text(link)
    assert read_untrusted_text(link, follow_symlinks=True) == "name: good\n"
    zero = tmp_path / "zero.yaml"
    zero.symlink_to("/dev/zero")
    with pytest.raises(UnsafeFileError, match="not a regular file"):
        read_untrusted_text(zero, follow_symlinks=True)
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    with pytest.raises(UnsafeFileError, match="not a regular file"):
        read_untrusted_text(fifo)
    with pytest.raises(UnsafeFileError, match="larger than 4 bytes"):
        read_untrusted_text(good, 4)


def test_a_plugin_index_served_larger_than_the_cap_is_refused(http_server) -> None:
    from hermes_core.config.untrusted import TEXT_LIMIT
    from hermes_core.errors import PluginIndexError
    from hermes_core.index.catalog import load_index

    url, routes = http_server
    routes["/index.json"] = (200, b"{" + b" " * TEXT_LIMIT + b"}")
    with pytest.raises(PluginIndexError, match="larger than"):
        load_index(f"{url}/index.json")

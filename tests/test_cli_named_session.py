"""``hermes tools call --session NAME``: a named session kept alive between commands by a per-home daemon, so a
page opened by one command is what the next one snapshots, and a todo list written by one is read by the next;
``hermes tools end NAME`` ends it. Real ``hermes`` processes, the browser and agent packs as plugin folders of the
home (their packages on ``PYTHONPATH``), the system's Chromium, a page served on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import hermes_plugin_agent
import hermes_plugin_browser
import pytest

from hermes_core.authoring.testing import LocalHttp, scaled_timeout
from hermes_core.cli.sessiond import socket_path, supported

support = pytest.importorskip("hermes_mcp_test_support")
pytestmark = pytest.mark.skipif(not supported(), reason="named sessions need Unix sockets")
PACKS = {"agent": Path(hermes_plugin_agent.__file__).resolve().parent,
         "browser": Path(hermes_plugin_browser.__file__).resolve().parent}


@pytest.fixture
def home(isolated_home: Path) -> Iterator[Path]:
    for plugin_id, package in PACKS.items():
        folder = isolated_home / "plugins" / plugin_id
        folder.mkdir(parents=True)
        shutil.copy(package / "plugin.yaml", folder / "plugin.yaml")
    (isolated_home / "config.yaml").write_text(
        "plugins:\n  enabled: [agent, browser]\nbrowser:\n  allow_private: true\n")
    yield isolated_home
    hermes(isolated_home, "tools", "end", "s")  # never a daemon left behind


def hermes(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONPATH": os.pathsep.join(
        [*(str(package.parent) for package in PACKS.values()), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([*support.hermes_command(), *args], env=env, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=scaled_timeout(180))


def call(home: Path, *args: str) -> dict[str, Any]:
    done = hermes(home, "tools", "call", *args)
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_a_todo_list_and_the_session_outlive_each_command_until_ended(home):
    todos = [{"id": "1", "content": "open the page", "status": "in_progress"}]
    assert call(home, "--session", "s", "todo", json.dumps({"todos": todos}))["todos"] == todos
    assert call(home, "--session", "s", "todo")["todos"] == todos
    assert socket_path(home, "s").exists()
    ended = hermes(home, "tools", "end", "s")
    assert ended.returncode == 0 and "session 's' ended" in ended.stdout
    assert not socket_path(home, "s").exists()
    assert "no session 's' is running" in hermes(home, "tools", "end", "s").stdout
    bad = hermes(home, "tools", "call", "--session", "../x", "todo")
    assert bad.returncode == 1 and "letters, digits" in bad.stderr


def test_browser_navigate_then_snapshot_from_two_commands_shows_the_page(home):
    if not any(shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")):
        pytest.skip("Chromium is not installed (apt-get install chromium); .ci/run installs it")
    server = LocalHttp()
    try:
        url = server.route("GET", "/hello", (200, {"Content-Type": "text/html"},
                                             b"<html><body><h1>Hello from the session</h1></body></html>"))
        opened = call(home, "--session", "s", "browser_navigate", json.dumps({"url": url}))
        assert opened.get("success") is True, opened
        snapshot = call(home, "--session", "s", "browser_snapshot", "{}")
        assert "Hello from the session" in json.dumps(snapshot), snapshot
    finally:
        server.close()

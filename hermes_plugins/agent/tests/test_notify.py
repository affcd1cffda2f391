"""``notify``: a real ``notify-send`` talking to a notification daemon on a private session bus
(``dbus-run-session``; the daemon is a small jeepney listener, as dunst needs a display these machines lack), and
the reasons it is unavailable without one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_core.authoring.testing import scaled_timeout

LISTENER = Path(__file__).with_name("dbus_notifications.py")
needs_dbus = pytest.mark.skipif(not (shutil.which("dbus-run-session") and shutil.which("notify-send")),
                                reason="needs dbus-run-session (dbus) and notify-send (libnotify-bin)")


@needs_dbus
@pytest.mark.skipif(sys.platform != "linux", reason="notify-send is the Linux notifier")
def test_a_notification_reaches_the_daemon_on_the_session_bus(hermes_home: Path, hermes_workspace: Path):
    title, body = "Build done", 'All 12 passed; "quoted" $(touch pwned) `x` \\ end'
    done = subprocess.run(["dbus-run-session", "--", sys.executable, str(LISTENER), str(hermes_home),
                           str(hermes_workspace), title, body], capture_output=True, text=True,
                          timeout=scaled_timeout(60.0), env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
                          check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["answer"] == {"sent": True, "via": "notify-send"}
    assert report["received"] == [{"app": "Hermes", "summary": title, "body": body}]
    assert not (hermes_workspace / "pwned").exists()


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux notifier's reasons")
@pytest.mark.skipif(not shutil.which("notify-send"), reason="needs notify-send (libnotify-bin)")
def test_unavailable_without_a_session_bus(agent_runtime: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    runtime = agent_runtime({})
    answer = json.loads(runtime.handle_function_call("notify", {"title": "hi"}))
    assert "no D-Bus session bus (DBUS_SESSION_BUS_ADDRESS is unset)" in answer["error"]


@pytest.mark.skipif(sys.platform != "linux", reason="the Linux notifier's reasons")
def test_unavailable_without_notify_send(agent_runtime: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("PATH", str(tmp_path))
    runtime = agent_runtime({})
    answer = json.loads(runtime.handle_function_call("notify", {"title": "hi"}))
    assert "notify-send is missing: install libnotify" in answer["error"]


def test_bad_arguments_are_refused_before_anything_runs(agent_runtime: Any):
    runtime = agent_runtime({})
    from hermes_plugin_agent.notify import notify

    with runtime.tool_context("agent").activate():
        assert "'title' is required" in json.loads(notify({"title": " "}))["error"]
        assert "at most 200" in json.loads(notify({"title": "t" * 201}))["error"]
        assert "'body' is text" in json.loads(notify({"title": "t", "body": 3}))["error"]

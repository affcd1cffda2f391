"""Whole runs with real subprocesses; tool calls go to a stand-in dispatcher."""

from __future__ import annotations

import json
import os
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_code.run import Limits, run_code

from hermes_core.backends import LocalBackend


def stand_in(name: str, args: dict[str, Any]) -> str:
    if name == "add":
        return json.dumps({"sum": args["a"] + args["b"]})
    return f"plain text from {name}"


def run(code: str, tmp_path: Path, **limits: Any) -> dict[str, Any]:
    return run_code(
        textwrap.dedent(code),
        dispatch=stand_in,
        tool_names=["add", "shout"],
        limits=Limits(**limits),
        backend=LocalBackend(),
        cwd=str(tmp_path),
    )


def test_output_is_captured(tmp_path):
    result = run("print('hello'); print(6 * 7)", tmp_path)
    assert result["status"] == "ok"
    assert result["output"] == "hello\n42\n"
    assert result["tool_calls"] == 0
    assert "error" not in result


def test_a_script_that_raises_reports_error_with_the_traceback(tmp_path):
    result = run(
        """
        print("before")
        raise ValueError("no good")
        """,
        tmp_path,
    )
    assert result["status"] == "error"
    assert result["error"] == "the script exited with code 1"
    assert result["output"].startswith("before\nTraceback (most recent call last):")
    assert "ValueError: no good" in result["output"]


def test_the_script_runs_in_the_callers_working_directory(tmp_path):
    (tmp_path / "data.txt").write_text("workspace file")
    result = run("print(open('data.txt').read())", tmp_path)
    assert result["output"] == "workspace file\n"


def test_a_script_calls_two_tools_and_gets_parsed_json_or_text(tmp_path):
    result = run(
        """
        from hermes_tools import add, shout
        total = add(a=2, b=3)
        print(total["sum"], shout(text="hi"))
        """,
        tmp_path,
    )
    assert result["status"] == "ok", result["output"]
    assert result["output"] == "5 plain text from shout\n"
    assert result["tool_calls"] == 2


def test_exceeding_the_tool_call_limit_raises_in_the_script(tmp_path):
    result = run(
        """
        from hermes_tools import add
        for i in range(5):
            add(a=i, b=0)
        """,
        tmp_path,
        max_tool_calls=3,
    )
    assert result["status"] == "error"
    assert "RuntimeError: tool call limit reached: execute_code allows 3 per run" in result["output"]
    assert result["tool_calls"] == 3


def test_timeout_kills_the_script_and_the_children_it_spawned(tmp_path):
    pid_file = tmp_path / "child.pid"
    result = run(
        f"""
        import os, subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open({str(pid_file)!r}, "w").write(str(child.pid) if os.getpid() > 2 else "")  # a PID namespace's pid
        print("started", flush=True)
        time.sleep(600)
        """,
        tmp_path,
        timeout=3,
    )
    assert result["status"] == "timeout"
    assert result["error"] == "the script ran longer than 3 s and was killed"
    assert result["output"] == "started\n"
    assert not pid_file.read_text() or wait_until_gone(int(pid_file.read_text()))


def test_output_past_the_cap_keeps_its_head_and_tail_with_a_marker(tmp_path):
    result = run("print('first'); print('x' * 100_000); print('last')", tmp_path, max_output_chars=500)
    assert result["status"] == "ok"
    assert result["output"].startswith("first\nxxx")
    assert result["output"].endswith("xxx\nlast\n")
    assert "characters omitted" in result["output"]
    assert len(result["output"]) < 600


def test_limits_from_settings_cap_the_requested_timeout():
    limits = Limits.from_settings({"max_timeout": 120, "max_tool_calls": 7}, requested_timeout=600)
    assert limits == Limits(timeout=120, max_output_chars=50_000, max_tool_calls=7)
    assert Limits.from_settings({}) == Limits()


def test_a_bad_setting_is_named_in_the_error():
    with pytest.raises(
        ValueError, match=r"plugins\.entries\.code\.settings\.max_output_chars must be a positive"
    ):
        Limits.from_settings({"max_output_chars": "lots"})


def test_credentials_are_not_passed_to_the_script(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk")
    monkeypatch.setenv("github_token", "t")
    monkeypatch.setenv("HERMES_TEST_PLAIN", "not on the allow-list")
    result = run("import os; print(sorted(k for k in os.environ if 'KEY' in k.upper() or 'TOKEN' in k.upper()),"
                 " os.environ.get('HERMES_TEST_PLAIN'))", tmp_path)
    assert result["output"] == "[] None\n"


def wait_until_gone(pid: int) -> bool:
    """True once ``pid`` has exited; polls, since the kill signal is delivered asynchronously."""
    deadline = time.monotonic() + 10
    while is_running(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def is_running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie waiting for its reaper."""
    try:
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except ProcessLookupError:
        return False
    except FileNotFoundError:  # no procfs (macOS), or the process just went away
        return True
    return state != "Z"

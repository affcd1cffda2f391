"""Background processes: start, list, poll, log, wait and kill, with real subprocesses."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path
from typing import Any


def poll_until(call, process_id: str, text: str, task: str = "main") -> str:
    """Poll until the output seen so far contains ``text`` (fails after 20 s); returns that output."""
    seen = ""
    deadline = time.monotonic() + 20
    while text not in seen:
        assert time.monotonic() < deadline, f"{text!r} never appeared; output so far: {seen!r}"
        seen += call("process", task=task, action="poll", session_id=process_id)["output"]
        time.sleep(0.05)
    return seen


def is_running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout
    return bool(state.strip()) and not state.strip().startswith("Z")


def start(call, command: str, **kwargs: Any) -> dict[str, Any]:
    started = call("terminal", command=command, background=True, **kwargs)
    assert started["session_id"].startswith("proc_"), started
    return started


def test_background_lifecycle_start_list_poll_log_wait_kill(call):
    started = start(call, "echo ready; sleep 30; echo never")
    process_id = started["session_id"]
    assert started["status"] == "running"
    assert f"session_id='{process_id}'" in started["message"]

    listed = call("process", action="list")["processes"]
    assert [(p["session_id"], p["command"], p["status"]) for p in listed] == [
        (process_id, "echo ready; sleep 30; echo never", "running")]

    assert poll_until(call, process_id, "ready") == "ready\n"
    polled = call("process", action="poll", session_id=process_id)
    assert (polled["status"], polled["exit_code"], polled["output"]) == ("running", None, "")

    log = call("process", action="log", session_id=process_id)
    assert (log["output"], log["total_lines"]) == ("ready", 1)

    waited = call("process", action="wait", session_id=process_id, timeout=0.2)
    assert (waited["timed_out"], waited["status"]) == (True, "running")

    killed = call("process", action="kill", session_id=process_id)
    assert killed["status"] == "killed"
    assert killed["exit_code"] is not None
    assert "never" not in call("process", action="log", session_id=process_id)["output"]
    assert call("process", action="list")["processes"][0]["status"] == "killed"
    assert call("process", action="wait", session_id=process_id)["timed_out"] is False


def test_wait_returns_the_exit_code_and_the_whole_output(call):
    process_id = start(call, "printf 'l1\\nl2\\nl3\\nl4\\n'; exit 7")["session_id"]
    waited = call("process", action="wait", session_id=process_id, timeout=20)
    assert (waited["timed_out"], waited["status"], waited["exit_code"]) == (False, "exited", 7)
    assert waited["output"] == "l1\nl2\nl3\nl4\n"
    assert call("process", action="poll", session_id=process_id)["output"] == ""


def test_log_pages_through_lines(call):
    process_id = start(call, "seq 1 500")["session_id"]
    call("process", action="wait", session_id=process_id, timeout=20)
    default = call("process", action="log", session_id=process_id)
    assert (default["offset"], default["lines"], default["total_lines"]) == (300, 200, 500)
    assert default["output"].splitlines()[0] == "301"
    page = call("process", action="log", session_id=process_id, offset=1, limit=2)
    assert (page["output"], page["offset"], page["lines"]) == ("2\n3", 1, 2)


def test_kill_stops_the_children_too(call):
    process_id = start(call, "sleep 30 & echo child=$!; wait")["session_id"]
    seen = poll_until(call, process_id, "\n")
    child = int(seen.split("child=")[1].split()[0])
    assert is_running(child)
    call("process", action="kill", session_id=process_id)
    assert not is_running(child)


def test_a_background_command_starts_in_the_task_directory(call, workspace: Path):
    (workspace / "sub").mkdir()
    call("terminal", command="cd sub")
    process_id = start(call, "pwd")["session_id"]
    waited = call("process", action="wait", session_id=process_id, timeout=20)
    assert waited["output"] == f"{workspace / 'sub'}\n"
    assert waited["cwd"] == str(workspace / "sub")


def test_another_task_cannot_see_or_touch_a_process(call):
    process_id = start(call, "sleep 30", task="owner")["session_id"]
    assert call("process", task="other", action="list") == {"processes": []}
    error = call("process", task="other", action="kill", session_id=process_id)["error"]
    assert error == (f"no background process '{process_id}' in this task; "
                     "process(action='list') shows the task's processes")
    assert call("process", task="owner", action="poll", session_id=process_id)["status"] == "running"


def test_actions_other_than_list_need_a_session_id(call):
    error = call("process", action="poll")["error"]
    assert error == "action 'poll' needs session_id: the id that terminal(background=true) returned"

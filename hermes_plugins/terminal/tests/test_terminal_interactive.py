"""Answering background processes (process write, submit, close), their own reports (notify_on_complete,
watch_patterns) and their screens (read_terminal, close_terminal), with real subprocesses."""

from __future__ import annotations

import queue
import time
from typing import Any

import pytest

from hermes_core.authoring.testing import scaled_timeout


def poll_until(call, process_id: str, text: str) -> str:
    """Poll until the output seen so far contains ``text``; returns that output."""
    seen = ""
    deadline = time.monotonic() + scaled_timeout(20)
    while text not in seen:
        assert time.monotonic() < deadline, f"{text!r} never appeared; output so far: {seen!r}"
        seen += call("process", action="poll", session_id=process_id)["output"]
        time.sleep(0.05)
    return seen


def start(call, command: str, **kwargs: Any) -> str:
    started = call("terminal", command=command, background=True, **kwargs)
    assert started["session_id"].startswith("proc_"), started
    return str(started["session_id"])


@pytest.mark.parametrize("pty", [False, True])
def test_submit_answers_a_read_prompt_in_a_background_shell(call, pty) -> None:
    process_id = start(call, "printf 'name? '; read name; echo \"hello $name\"", pty=pty)
    poll_until(call, process_id, "name? ")

    answered = call("process", action="submit", session_id=process_id, data="Ada")

    assert answered == {"status": "ok", "session_id": process_id, "bytes_written": 4}
    waited = call("process", action="wait", session_id=process_id, timeout=scaled_timeout(20))
    assert (waited["status"], waited["exit_code"]) == ("exited", 0)
    assert "hello Ada" in call("process", action="log", session_id=process_id)["output"]


def test_write_sends_data_as_it_is_and_close_ends_the_input(call) -> None:
    process_id = start(call, "wc -c")

    call("process", action="write", session_id=process_id, data="abc")
    call("process", action="write", session_id=process_id, data="de")
    closed = call("process", action="close", session_id=process_id)

    assert closed == {"status": "ok", "session_id": process_id, "message": "input closed"}
    call("process", action="wait", session_id=process_id, timeout=scaled_timeout(20))
    assert call("process", action="log", session_id=process_id)["output"].strip() == "5"


def test_close_types_end_of_file_on_a_terminal(call) -> None:
    process_id = start(call, "cat > /dev/null; echo got-eof", pty=True)

    assert call("process", action="close", session_id=process_id)["message"] == "end of file sent"

    poll_until(call, process_id, "got-eof")


def test_input_to_a_process_that_exited_or_closed_its_input_is_refused(call) -> None:
    process_id = start(call, "true")
    call("process", action="wait", session_id=process_id, timeout=scaled_timeout(20))
    assert "has already exited" in call("process", action="submit", session_id=process_id, data="x")["error"]

    reader = start(call, "sleep 30")
    call("process", action="close", session_id=reader)
    assert call("process", action="write", session_id=reader, data="x")["error"] == (
        f"cannot write to {reader}: the process's input is closed")


def test_a_process_that_reads_nothing_cannot_hold_the_call(call, config_file) -> None:
    config_file.write_text("plugins: {entries: {terminal: {settings: {input_timeout: 0.5}}}}\n")
    process_id = start(call, "sleep 60")

    errors = [call("process", action="write", session_id=process_id, data="x" * 65_536).get("error")
              for _ in range(4)]  # enough to fill any pipe buffer

    assert any(error and "did not read its input within 0.5s" in error for error in errors), errors


@pytest.fixture
def messages(hermes_runtime) -> queue.SimpleQueue[tuple[str, str]]:
    """What the runtime hands the agent loop (``runtime.message_sink``)."""
    received: queue.SimpleQueue[tuple[str, str]] = queue.SimpleQueue()
    hermes_runtime.message_sink = lambda content, role: received.put((content, role))
    return received


def test_notify_on_complete_tells_the_agent_loop_once_when_the_process_ends(call, messages) -> None:
    process_id = start(call, "echo building; sleep 0.3; echo built", notify_on_complete=True)

    content, role = messages.get(timeout=scaled_timeout(20))

    assert role == "user"
    assert content.startswith(f"[IMPORTANT: Background process {process_id} completed normally (exit code 0).\n")
    assert "Command: echo building; sleep 0.3; echo built\nOutput:\nbuilding\nbuilt" in content
    time.sleep(0.5)
    assert messages.empty()


def test_without_an_agent_loop_the_report_comes_with_the_tasks_next_result(call) -> None:
    process_id = start(call, "exit 3", notify_on_complete=True)
    deadline = time.monotonic() + scaled_timeout(20)
    reports: list[str] = []
    while not reports:
        assert time.monotonic() < deadline, "the report never came"
        reports = call("terminal", command="true").get("notifications", [])
        time.sleep(0.1)

    assert reports == [f"[IMPORTANT: Background process {process_id} exited (exit code 3).\nCommand: exit 3\n"
                       "Output:\n]"]
    assert "notifications" not in call("terminal", command="true")  # handed over once


def test_a_process_the_caller_killed_is_not_reported(call, messages) -> None:
    process_id = start(call, "sleep 30", notify_on_complete=True)
    assert call("process", action="kill", session_id=process_id)["status"] == "killed"

    time.sleep(0.6)
    assert messages.empty()


def test_a_line_matching_watch_patterns_is_reported_once_per_window(call, messages) -> None:
    process_id = start(call, "echo starting; echo 'Application startup complete'; echo 'startup complete again';"
                             " sleep 30", watch_patterns=["startup complete"])

    content, _ = messages.get(timeout=scaled_timeout(20))

    assert content == (f"[IMPORTANT: Background process {process_id} matched watch pattern \"startup complete\".\n"
                       "Command: echo starting; echo 'Application startup complete'; echo 'startup complete "
                       "again'; sleep 30\nMatched output:\nApplication startup complete\nstartup complete again]")


def test_watch_patterns_must_be_non_empty_strings(call) -> None:
    assert "watch_patterns must be a list of non-empty strings" in call(
        "terminal", command="sleep 1", background=True, watch_patterns=[""])["error"]


def test_read_terminal_shows_the_screen_as_a_terminal_draws_it(call) -> None:
    process_id = start(call, "for n in $(seq 1 40); do echo line $n; done; printf '\\033[2J\\033[Hredrawn'; "
                             "sleep 30", pty=True)
    poll_until(call, process_id, "redrawn")

    screen = call("read_terminal")

    assert screen["session_id"] == process_id
    assert screen["text"].startswith("redrawn")
    assert (screen["viewport_rows"], screen["cursor_row"]) == (24, 0)
    assert screen["end"] == screen["total_lines"] and screen["end"] - screen["start"] == 24
    scrollback = call("read_terminal", start_line=0, count=3)
    assert scrollback["text"] == "line 1\nline 2\nline 3"


def test_close_terminal_hides_the_view_but_the_process_goes_on(call) -> None:
    process_id = start(call, "echo visible; sleep 30", pty=True)
    poll_until(call, process_id, "visible")

    closed = call("close_terminal", process_id=process_id)

    assert (closed["status"], closed["closed"]) == ("ok", process_id)
    assert "no background process of this task has an open terminal" in call("read_terminal")["error"]
    assert call("process", action="poll", session_id=process_id)["status"] == "running"
    assert "visible" in call("read_terminal", session_id=process_id)["text"]  # named: opened again
    assert call("read_terminal")["session_id"] == process_id


def test_another_tasks_process_is_neither_read_nor_closed(call) -> None:
    process_id = start(call, "sleep 30", pty=True)

    assert "no background process" in call("read_terminal", task="other", session_id=process_id)["error"]
    assert "no background process" in call("close_terminal", task="other", process_id=process_id)["error"]


# -- input to a shell is a command ----------------------------------------------------------------------------


def test_a_dangerous_line_written_to_a_background_shell_is_asked_like_the_same_command(call, approvals,
                                                                                    workspace) -> None:
    (workspace / "victim" / "inner").mkdir(parents=True)
    process_id = start(call, "bash")

    refused = call("process", action="submit", session_id=process_id, data="rm -r victim")

    assert "was not approved" in refused["error"] and approvals.asked == ["recursive_delete"]
    assert "rm -r victim" in approvals.requests[0].message and "(written to the input of: bash)" in \
        approvals.requests[0].message
    assert call("terminal", command="rm -r victim")["error"].startswith(refused["error"].split(".")[0])
    approvals.answers.append("once")
    assert call("process", action="submit", session_id=process_id, data="rm -r victim")["status"] == "ok"
    call("process", action="close", session_id=process_id)
    call("process", action="wait", session_id=process_id, timeout=scaled_timeout(20))
    assert not (workspace / "victim").exists()


def test_a_line_split_over_several_writes_is_judged_whole_and_a_hardline_is_refused(call, approvals) -> None:
    process_id = start(call, "sh")

    assert call("process", action="write", session_id=process_id, data="r")["status"] == "ok"  # harmless alone
    refused = call("process", action="submit", session_id=process_id, data="m -rf /")

    assert refused["error"].startswith("Refused: this command") and "Hardline" in refused["error"]
    assert approvals.asked == []  # refused without a question


def test_an_answer_to_a_programs_prompt_or_a_safe_line_is_not_asked_about(call, approvals) -> None:
    prompt = start(call, "printf 'sure? '; read answer; echo \"got $answer\"")  # bash -c: its input is data
    shell = start(call, "bash")

    assert call("process", action="submit", session_id=prompt, data="rm -rf ~")["status"] == "ok"
    assert call("process", action="submit", session_id=shell, data="echo hi")["status"] == "ok"

    assert approvals.asked == []
    poll_until(call, shell, "hi")


def test_input_to_an_interpreter_reading_its_stdin_is_code_and_asked_about(call, approvals) -> None:
    process_id = start(call, "python3 -q -i")

    refused = call("process", action="submit", session_id=process_id, data="import os; os.system('id')")

    assert "was not approved" in refused["error"] and approvals.asked == ["interpreter_code"]


# -- reports through the progress channel ---------------------------------------------------------------------


def test_a_background_report_reaches_the_hosts_progress_callback_but_never_the_finished_callers(
        call, hermes_runtime, messages) -> None:
    from hermes_core import caller_callbacks

    heard: queue.SimpleQueue[Any] = queue.SimpleQueue()
    callers: list[Any] = []
    hermes_runtime.set_progress_callback(heard.put)
    with caller_callbacks(progress=callers.append):
        process_id = start(call, "sleep 0.3; echo built", notify_on_complete=True)

    progress = heard.get(timeout=scaled_timeout(20))
    messages.get(timeout=scaled_timeout(20))  # the agent loop got the report too

    assert progress.tool_name == "terminal" and progress.session_id.startswith("session-")
    assert (progress.done, progress.total) == (1, 1)
    assert progress.message.startswith(f"[IMPORTANT: Background process {process_id} completed normally")
    assert all(report.message is None or process_id not in report.message for report in callers)

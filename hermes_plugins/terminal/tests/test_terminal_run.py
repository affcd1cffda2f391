"""Foreground commands: output, exit codes, timeouts, output caps and per-task working directories."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


def write_settings(path: Path, text: str) -> None:
    path.write_text("plugins:\n  entries:\n    terminal:\n      settings:\n" + text, encoding="utf-8")


def test_stdout_and_stderr_come_back_interleaved_with_the_exit_code(call, workspace: Path):
    result = call("terminal", command="echo out; echo err >&2; exit 3")
    assert result == {"output": "out\nerr\n", "exit_code": 3, "cwd": str(workspace)}


def test_a_command_runs_in_a_real_shell(call):
    result = call("terminal", command="for i in 1 2 3; do printf '%s,' $i; done; echo $((6 * 7))")
    assert result["output"] == "1,2,3,42\n"


def test_stdin_is_closed_so_a_reading_command_does_not_hang(call):
    assert call("terminal", command="cat; echo done")["output"] == "done\n"


def test_an_empty_command_is_an_error(call):
    assert "command is empty" in call("terminal", command="   ")["error"]


def test_a_command_that_outlives_its_timeout_is_killed_with_its_children(call, workspace: Path):
    result = call("terminal", command="echo started; (sleep 30; touch late) & sleep 30", timeout=2)
    assert "timed out after 2s" in result["error"]
    assert result["output"] == "started\n"
    assert result["exit_code"] != 0
    assert not (workspace / "late").exists()


def test_the_timeout_is_bounded_by_the_configured_maximum(call, config_file: Path):
    write_settings(config_file, "        max_timeout: 0.5\n")
    result = call("terminal", command="sleep 30", timeout=600)
    assert "timed out after 0.5s" in result["error"]


def test_long_output_keeps_its_head_and_tail_within_the_cap(call):
    result = call("terminal", command="seq 1 100000", max_output_chars=200)
    output = result["output"]
    assert output.startswith("1\n2\n3\n")
    assert output.endswith("99999\n100000\n")
    assert "characters omitted" in output
    assert len(output) < 300


def test_the_output_cap_is_bounded_by_the_configured_maximum(call, config_file: Path):
    write_settings(config_file, "        max_output_chars: 100\n")
    output = call("terminal", command="seq 1 100000", max_output_chars=1_000_000)["output"]
    assert output.endswith("100000\n")
    assert len(output) < 200


def test_undecodable_bytes_do_not_break_the_result(call):
    assert call("terminal", command=r"printf 'caf\xc3\xa9 \xff\n'")["output"] == "café \ufffd\n"


def test_cd_persists_for_the_same_task(call, workspace: Path):
    (workspace / "sub").mkdir()
    assert call("terminal", command="cd sub")["cwd"] == str(workspace / "sub")
    assert call("terminal", command="pwd")["output"] == f"{workspace / 'sub'}\n"


def test_cd_does_not_leak_into_another_task(call, workspace: Path):
    (workspace / "sub").mkdir()
    call("terminal", task="a", command="cd sub")
    assert call("terminal", task="b", command="pwd")["output"] == f"{workspace}\n"
    assert call("terminal", task="a", command="pwd")["output"] == f"{workspace / 'sub'}\n"


def test_cd_persists_even_when_the_command_exits_early(call, workspace: Path):
    (workspace / "sub").mkdir()
    call("terminal", command="cd sub && exit 1")
    assert call("terminal", command="pwd")["output"] == f"{workspace / 'sub'}\n"


def test_workdir_applies_to_one_call_only(call, workspace: Path):
    (workspace / "sub").mkdir()
    assert call("terminal", command="pwd", workdir="sub")["output"] == f"{workspace / 'sub'}\n"
    assert call("terminal", command="pwd")["output"] == f"{workspace}\n"


def test_a_missing_workdir_is_a_clear_error(call, workspace: Path):
    error = call("terminal", command="pwd", workdir="nope")["error"]
    assert error == f"working directory {workspace / 'nope'} does not exist or is not a directory"


def test_a_deleted_task_directory_is_reported_and_reset(call, workspace: Path):
    (workspace / "gone").mkdir()
    call("terminal", command="cd gone")
    shutil.rmtree(workspace / "gone")
    assert "no longer exists" in call("terminal", command="pwd")["error"]
    assert call("terminal", command="pwd")["output"] == f"{workspace}\n"


def test_new_tasks_start_in_the_configured_workdir(call, tmp_path: Path, config_file: Path):
    start = tmp_path / "configured"
    start.mkdir()
    write_settings(config_file, f"        workdir: {start}\n")
    assert call("terminal", command="pwd")["output"] == f"{start}\n"


@pytest.mark.parametrize(("settings", "key"), [
    ("        max_timeout: -1\n", "max_timeout"),
    ("        max_output_chars: lots\n", "max_output_chars"),
    ("        max_timout: 5\n", "max_timout"),
])
def test_invalid_settings_are_reported_with_their_key(call, settings: str, key: str, config_file: Path):
    write_settings(config_file, settings)
    error = call("terminal", command="true")["error"]
    assert error.startswith("invalid config.yaml plugins.entries.terminal.settings: ")
    assert key in error

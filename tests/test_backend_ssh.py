"""The ``ssh`` backend against a real sshd on 127.0.0.1: host keys are verified (a mismatch is refused, never
accepted), execute_code runs remotely with its tool calls forwarded back, and problems are reported clearly."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout


@pytest.fixture
def ssh_runtime(pack_runtime: Any, workspace: Path) -> Any:
    """``ssh_runtime(**terminal.ssh)``: a runtime of the terminal, code and ssh packs on the ssh backend."""
    return lambda **ssh: pack_runtime(
        {"terminal": {"backend": "ssh", "ssh": ssh},
         "plugins": {"entries": {"terminal": {"settings": {"workdir": str(workspace)}}}}},
        ("hermes_plugin_terminal", "terminal"), ("hermes_plugin_code", "code"), ("hermes_plugin_ssh", "ssh"))


def terminal(runtime: Runtime, command: str, **args: Any) -> dict[str, Any]:
    return json.loads(runtime.handle_function_call("terminal", {"command": command, **args}, task_id="t"))


def test_a_host_key_that_does_not_match_known_hosts_is_refused(ssh_runtime, sshd, tmp_path: Path,
                                                               workspace: Path) -> None:
    impostor = tmp_path / "impostor"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(impostor)], check=True)
    known_hosts = tmp_path / "known_hosts"
    key = " ".join(impostor.with_suffix(".pub").read_text().split()[:2])
    known_hosts.write_text(f"[127.0.0.1]:{sshd.port} {key}\n")
    for policy in ("strict", "accept-new"):
        runtime = ssh_runtime(**sshd.settings(known_hosts=str(known_hosts), host_key_policy=policy))
        error = terminal(runtime, "touch ran")["error"]
        assert f"the host key of {sshd.user}@127.0.0.1:{sshd.port} does not match the one in {known_hosts}: " \
               "refused" in error
    assert not (workspace / "ran").exists()
    assert known_hosts.read_text().count("\n") == 1  # nothing was added or replaced


def test_an_unknown_host_is_refused_unless_accept_new_adds_it(ssh_runtime, sshd, tmp_path: Path,
                                                              workspace: Path) -> None:
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text("")
    strict = ssh_runtime(**sshd.settings(known_hosts=str(known_hosts)))
    assert "is not in" in terminal(strict, "touch ran")["error"]
    assert not (workspace / "ran").exists()

    accepting = ssh_runtime(**sshd.settings(known_hosts=str(known_hosts), host_key_policy="accept-new"))
    assert terminal(accepting, "touch ran")["exit_code"] == 0
    assert (workspace / "ran").exists()
    assert sshd.host_key.with_suffix(".pub").read_text().split()[1] in known_hosts.read_text()


def test_execute_code_runs_on_the_host_and_its_tool_calls_come_back(ssh_runtime, sshd, workspace: Path) -> None:
    runtime = ssh_runtime(**sshd.settings())
    # the script's environment is an allow-list (no SSH_CONNECTION): an sshd among its ancestors shows where it runs
    code = ("import os\nfrom hermes_tools import terminal\n"
            "pid, names = os.getpid(), []\n"
            "while pid > 1:\n"
            "    stat = open(f'/proc/{pid}/stat').read()\n"
            "    names.append(stat[stat.index('(') + 1:stat.rindex(')')])\n"
            "    pid = int(stat[stat.rindex(')') + 2:].split()[1])\n"
            "print('over ssh' if any(name.startswith('sshd') for name in names) else names)\n"
            "print(terminal(command='echo from the tool')['output'], end='')\n")
    result = json.loads(runtime.handle_function_call("execute_code", {"code": code}, task_id="t"))
    assert (result["status"], result["output"], result["tool_calls"]) == ("ok", "over ssh\nfrom the tool\n", 1)


def test_commands_run_over_ssh_with_the_remote_environment(ssh_runtime, sshd) -> None:
    runtime = ssh_runtime(**sshd.settings())
    assert terminal(runtime, "echo ${SSH_CONNECTION%% *}")["output"] == "127.0.0.1\n"
    assert terminal(runtime, "cd ~ && pwd")["cwd"] == str(Path.home())


def test_pty_mode_is_refused_with_the_reason(ssh_runtime, sshd) -> None:
    error = terminal(ssh_runtime(**sshd.settings()), "tty", pty=True)["error"]
    assert error == "the ssh backend cannot run commands in a pseudo-terminal (pty=true)"


def test_a_host_that_does_not_answer_is_an_error_naming_it(ssh_runtime, sshd) -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    error = terminal(ssh_runtime(**sshd.settings(port=port)), "true")["error"]
    assert error.startswith(f"ssh to {sshd.user}@127.0.0.1:{port} failed: ")
    assert "Connection refused" in error


@pytest.mark.parametrize(("settings", "key"), [({"port": "twenty-two"}, "terminal.ssh.port"),
                                               ({"host_key_policy": "ignore"}, "terminal.ssh.host_key_policy"),
                                               ({"host": "-oProxyCommand=evil"}, "terminal.ssh.host")])
def test_invalid_settings_are_named(ssh_runtime, sshd, settings: dict[str, Any], key: str) -> None:
    error = terminal(ssh_runtime(**sshd.settings(**settings)), "true")["error"]
    assert error.startswith("invalid config.yaml: ") and key in error


def test_a_background_prompt_on_the_host_is_answered_with_submit(ssh_runtime, sshd) -> None:
    runtime = ssh_runtime(**sshd.settings())

    def process(**args: Any) -> dict[str, Any]:
        return json.loads(runtime.handle_function_call("process", args, task_id="t"))

    started = terminal(runtime, "read answer; echo \"got $answer\"", background=True)
    assert process(action="submit", session_id=started["session_id"], data="over ssh")["status"] == "ok"
    waited = process(action="wait", session_id=started["session_id"], timeout=scaled_timeout(30))
    assert (waited["status"], waited["exit_code"]) == ("exited", 0)
    assert "got over ssh" in process(action="log", session_id=started["session_id"])["output"]

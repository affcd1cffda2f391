"""Every execution backend behaves like ``local``: the terminal pack's behaviour (cwd carry-over, background
processes, kill, timeouts, output limits, hooks) on ``local``, ``sandbox`` (bubblewrap), ``ssh`` (a real sshd on
127.0.0.1) and ``ulimit`` (the documented example plugin), through the ``terminal`` and ``process`` tools."""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Runtime

FIXTURES = Path(__file__).resolve().parent / "fixtures"
BACKENDS = ["local", "sandbox", "ssh", "ulimit"]
#: Where each backend's plugin comes from: (module, plugin id).
PLUGINS = [("hermes_plugin_terminal", "terminal"), ("hermes_plugin_ssh", "ssh"), ("hermes_backend_ulimit", "ulimit")]

Call = Callable[..., dict[str, Any]]


def sandbox_problem() -> str | None:
    from hermes_plugin_terminal.sandbox import sandbox_problem

    return sandbox_problem()


def backend_runtime(pack_runtime: Any, workspace: Path, backend: str, request: pytest.FixtureRequest) -> Runtime:
    """A runtime of the terminal, ssh and example packs whose ``terminal.backend`` is ``backend``."""
    config: dict[str, Any] = {"terminal": {"backend": backend}}
    if backend == "sandbox" and (problem := sandbox_problem()):
        pytest.skip(f"bubblewrap cannot run on this machine: {problem}")
    if backend == "ssh":
        config["terminal"]["ssh"] = request.getfixturevalue("sshd").settings()
        # sshd runs on this machine: its tasks start in the same workspace as the others'
        config["plugins"] = {"entries": {"terminal": {"settings": {"workdir": str(workspace)}}}}
    return pack_runtime(config, *PLUGINS)


@pytest.fixture(autouse=True)
def example_plugin_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FIXTURES / "dists" / "ulimit-backend"))


def make_caller(runtime: Runtime) -> tuple[Call, Callable[[], None]]:
    """``call(tool, task=..., **args)`` (JSON decoded), and a clean-up that kills what still runs."""
    unique = uuid.uuid4().hex[:8]
    tasks: set[str] = set()

    def call(tool: str, *, task: str = "main", **args: Any) -> dict[str, Any]:
        tasks.add(f"{task}-{unique}")
        return json.loads(runtime.handle_function_call(tool, args, task_id=f"{task}-{unique}",
                                                       session_id=f"session-{unique}"))

    def clean_up() -> None:
        for task in tasks:
            listed = json.loads(runtime.handle_function_call("process", {"action": "list"}, task_id=task))
            for entry in listed.get("processes", []):
                if entry["status"] == "running":
                    runtime.handle_function_call("process", {"action": "kill", "session_id": entry["session_id"]},
                                                 task_id=task)

    return call, clean_up


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def call(backend: str, pack_runtime: Any, workspace: Path, request: pytest.FixtureRequest) -> Iterator[Call]:
    call, clean_up = make_caller(backend_runtime(pack_runtime, workspace, backend, request))
    yield call
    clean_up()


def running(marker: str) -> bool:
    """Whether a process whose command line is exactly ``marker`` runs on this machine (all backends run here)."""
    listed = subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True, check=True).stdout
    return any(line.strip() == marker for line in listed.splitlines())


def gone(marker: str, within: float = 10) -> bool:
    deadline = time.monotonic() + within
    while running(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def unique_sleep() -> str:
    """A ``sleep`` command line no other process has, to find it with ``ps``."""
    return f"sleep 3{uuid.uuid4().int % 10_000:04d}.5"


def poll_until(call: Call, process_id: str, text: str) -> str:
    seen = ""
    deadline = time.monotonic() + 20
    while text not in seen:
        assert time.monotonic() < deadline, f"{text!r} never appeared; output so far: {seen!r}"
        seen += call("process", action="poll", session_id=process_id)["output"]
        time.sleep(0.05)
    return seen


# -- foreground commands ---------------------------------------------------------------------------------


def test_output_and_exit_code(call: Call, workspace: Path) -> None:
    assert call("terminal", command="echo out; echo err >&2; exit 3") == {
        "output": "out\nerr\n", "exit_code": 3, "cwd": str(workspace)}


def test_stdin_is_closed(call: Call) -> None:
    assert call("terminal", command="cat; echo done")["output"] == "done\n"


def test_cd_carries_over_within_a_task_and_not_to_another(call: Call, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    assert call("terminal", command="cd sub && exit 1")["cwd"] == str(workspace / "sub")
    assert call("terminal", command="pwd")["output"] == f"{workspace / 'sub'}\n"
    assert call("terminal", task="other", command="pwd")["output"] == f"{workspace}\n"


def test_workdir_applies_to_one_call_and_a_missing_one_is_an_error(call: Call, workspace: Path) -> None:
    (workspace / "sub").mkdir()
    assert call("terminal", command="pwd", workdir="sub")["output"] == f"{workspace / 'sub'}\n"
    assert call("terminal", command="pwd")["output"] == f"{workspace}\n"
    assert call("terminal", command="pwd", workdir="nope")["error"] == \
        f"working directory {workspace / 'nope'} does not exist or is not a directory"


def test_a_vanished_task_directory_is_reported_and_reset(call: Call, workspace: Path) -> None:
    (workspace / "gone").mkdir()
    call("terminal", command="cd gone")
    (workspace / "gone").rmdir()
    assert "no longer exists" in call("terminal", command="pwd")["error"]
    assert call("terminal", command="pwd")["output"] == f"{workspace}\n"


def test_a_timeout_kills_the_command_and_its_children(call: Call) -> None:
    child = unique_sleep()
    result = call("terminal", command=f"echo started; ({child}; echo late) & sleep 60", timeout=2)
    assert "timed out after 2s" in result["error"]
    assert result["output"] == "started\n"
    assert gone(child)


def test_output_keeps_its_head_and_tail_within_the_cap(call: Call) -> None:
    output = call("terminal", command="seq 1 100000", max_output_chars=200)["output"]
    assert output.startswith("1\n2\n3\n")
    assert output.endswith("99999\n100000\n")
    assert "characters omitted" in output
    assert len(output) < 300


# -- background processes -----------------------------------------------------------------------------------


def test_background_lifecycle_poll_wait_kill(call: Call, backend: str) -> None:
    child = unique_sleep()
    started = call("terminal", command=f"{child} & echo ready; wait", background=True)
    process_id = started["session_id"]
    assert (started["status"], started["backend"]) == ("running", backend)
    assert poll_until(call, process_id, "ready") == "ready\n"
    assert running(child)
    waited = call("process", action="wait", session_id=process_id, timeout=0.2)
    assert (waited["timed_out"], waited["status"]) == (True, "running")
    killed = call("process", action="kill", session_id=process_id)
    assert killed["status"] == "killed"
    assert gone(child)


def test_background_wait_returns_the_exit_code_and_output_in_the_task_directory(call: Call,
                                                                                workspace: Path) -> None:
    (workspace / "sub").mkdir()
    call("terminal", command="cd sub")
    process_id = call("terminal", command="pwd; exit 7", background=True)["session_id"]
    waited = call("process", action="wait", session_id=process_id, timeout=20)
    assert (waited["timed_out"], waited["status"], waited["exit_code"]) == (False, "exited", 7)
    assert waited["output"] == f"{workspace / 'sub'}\n"


# -- hooks ----------------------------------------------------------------------------------------------------


def test_transform_terminal_output_names_the_backend(call: Call, backend: str, pack_runtime: Any,
                                                     workspace: Path, request: pytest.FixtureRequest,
                                                     tmp_path: Path) -> None:
    plugin = tmp_path / "compactor"
    plugin.mkdir()
    (plugin / "__init__.py").write_text(
        "def register(ctx):\n"
        "    ctx.register_hook('transform_terminal_output', lambda output, env_type, **kw: f'{env_type}: {output}')\n")
    runtime = backend_runtime(pack_runtime, workspace, backend, request)
    assert runtime.load_plugin_from_path(plugin).state == "loaded"
    hooked, clean_up = make_caller(runtime)
    try:
        assert hooked("terminal", command="echo hi")["output"] == f"{backend}: hi\n"
    finally:
        clean_up()


# -- pseudo-terminals ------------------------------------------------------------------------------------------


ISATTY = "import os, sys; print(sys.stdin.isatty(), sys.stdout.isatty(), sys.stderr.isatty(), os.get_terminal_size(0))"


def test_pty_mode_gives_the_command_a_terminal(call: Call, backend: str, workspace: Path) -> None:
    (workspace / "isatty.py").write_text(ISATTY + "\nopen('/dev/tty', 'w').write('controlling terminal\\n')\n")
    result = call("terminal", command="python3 isatty.py", pty=True)
    if backend == "ssh":
        assert result["error"] == "the ssh backend cannot run commands in a pseudo-terminal (pty=true)"
        return
    assert result["output"] == "True True True os.terminal_size(columns=80, lines=24)\ncontrolling terminal\n"
    assert call("terminal", command="[ -t 0 ] || [ -t 1 ] || echo no terminal")["output"] == "no terminal\n"
    started = call("terminal", command="[ -t 0 ] && [ -t 1 ] && echo terminal", pty=True, background=True)
    assert started["pty"] is True
    assert call("process", action="wait", session_id=started["session_id"], timeout=20)["output"] == "terminal\n"

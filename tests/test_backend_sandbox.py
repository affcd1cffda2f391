"""The ``sandbox`` backend under real bubblewrap: what a command may write and reach, its private /tmp, its process
tree, execute_code inside it, and the reasons it is unavailable (never a fall back to ``local``)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_terminal.sandbox import sandbox_problem

from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout

PROBLEM = sandbox_problem()
pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=f"bubblewrap cannot run on this machine: {PROBLEM}")


@pytest.fixture
def sandbox_runtime(pack_runtime: Any) -> Any:
    """``sandbox_runtime(**terminal.sandbox)``: the terminal and code packs on the sandbox backend."""
    return lambda **sandbox: pack_runtime({"terminal": {"backend": "sandbox", "sandbox": sandbox}},
                                          ("hermes_plugin_terminal", "terminal"), ("hermes_plugin_code", "code"))


@pytest.fixture
def runtime(sandbox_runtime: Any) -> Runtime:
    return sandbox_runtime()


def terminal(runtime: Runtime, command: str, **args: Any) -> dict[str, Any]:
    return json.loads(runtime.handle_function_call("terminal", {"command": command, **args}, task_id="t"))


@pytest.fixture
def server() -> Iterator[int]:
    """A TCP server on 127.0.0.1 of this machine that answers every connection; its port."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            with connection:
                connection.sendall(b"hello from the host\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    listener.close()


def connect_command(workspace: Path, port: int) -> str:
    """A command that connects to ``port`` of 127.0.0.1 and prints what the server says."""
    (workspace / "connect.py").write_text("import socket, sys\n"
                                          "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=5)\n"
                                          "print(s.recv(100).decode().strip())\n")
    return f"{sys.executable} connect.py {port}"


def test_a_write_inside_the_workspace_succeeds_and_outside_it_fails(runtime: Runtime, workspace: Path) -> None:
    outside = Path(__file__).resolve().parent / f"escaped-{os.getpid()}.txt"  # this repository: read-only inside
    result = terminal(runtime, f"echo kept > inside.txt && echo escaped > {outside}")
    assert "Read-only file system" in result["output"]
    assert result["exit_code"] != 0
    assert (workspace / "inside.txt").read_text() == "kept\n"
    assert not outside.exists()
    assert "Read-only file system" in terminal(runtime, f"touch {Path.home() / 'hermes-sandbox-probe'}")["output"]


def test_no_connection_reaches_the_host_unless_the_network_is_enabled(runtime: Runtime, server: int,
                                                                      sandbox_runtime: Any, workspace: Path) -> None:
    refused = terminal(runtime, connect_command(workspace, server))
    assert refused["exit_code"] != 0
    assert "ConnectionRefusedError" in refused["output"] or "Network is unreachable" in refused["output"]
    networked = sandbox_runtime(network=True)
    assert terminal(networked, connect_command(workspace, server))["output"] == "hello from the host\n"


def test_tmp_is_private_and_kept_between_commands(runtime: Runtime) -> None:
    marker = f"hermes-sandbox-{os.getpid()}"
    assert terminal(runtime, f"echo private > /tmp/{marker} && cd /tmp")["cwd"] == "/tmp"
    assert terminal(runtime, f"cat {marker}")["output"] == "private\n"
    assert not Path("/tmp", marker).exists()


def test_a_process_that_left_its_group_dies_with_the_sandbox(runtime: Runtime) -> None:
    escapee = f"sleep 4{os.getpid() % 10_000:04d}.5"
    started = json.loads(runtime.handle_function_call(
        "terminal", {"command": f"setsid {escapee} & echo ready; wait", "background": True}, task_id="t"))
    process = {"action": "wait", "session_id": started["session_id"], "timeout": 1}
    assert json.loads(runtime.handle_function_call("process", process, task_id="t"))["output"] == "ready\n"
    assert escapee in subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True).stdout
    runtime.handle_function_call("process", {"action": "kill", "session_id": started["session_id"]}, task_id="t")
    assert escapee not in subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True).stdout


def test_execute_code_runs_in_the_sandbox_and_its_tool_calls_come_back(runtime: Runtime, workspace: Path) -> None:
    outside = Path(__file__).resolve().parent / f"escaped-{os.getpid()}.txt"
    code = ("from hermes_tools import terminal\n"
            "print(terminal(command='echo via tool > tool.txt && cat tool.txt')['output'], end='')\n"
            f"open({str(outside)!r}, 'w')\n")
    result = json.loads(runtime.handle_function_call("execute_code", {"code": code}, task_id="t"))
    assert result["status"] == "error"
    assert result["output"].startswith("via tool\n")
    assert "Read-only file system" in result["output"]
    assert (workspace / "tool.txt").exists() and not outside.exists()


def test_without_bwrap_the_backend_is_unavailable_and_nothing_runs(sandbox_runtime: Any, workspace: Path,
                                                                   tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"  # a PATH with a shell but no bwrap
    bin_dir.mkdir()
    for tool in ("sh", "bash"):
        (bin_dir / tool).symlink_to(shutil.which(tool) or "/bin/sh")
    monkeypatch.setenv("PATH", str(bin_dir))
    error = terminal(sandbox_runtime(), "touch ran")["error"]
    assert error.startswith("the terminal backend 'sandbox' is unavailable: bubblewrap (bwrap) is not installed")
    assert not (workspace / "ran").exists()


def test_where_user_namespaces_are_unavailable_the_reason_is_given(tmp_path: Path) -> None:
    # a real machine without user namespaces: a sandbox that may create none (bwrap --disable-userns); the host's
    # /tmp stays visible in it (read-only), where a checkout and its venv may be
    bwrap = shutil.which("bwrap")
    assert bwrap
    probe = ("import sys; sys.path[:0] = " + repr(sys.path) + "\n"
             "from hermes_plugin_terminal.sandbox import sandbox_problem; print(sandbox_problem())")
    result = subprocess.run([bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                             "--unshare-user", "--disable-userns", "--unshare-pid", "--die-with-parent", "--",
                             sys.executable, "-c", probe], capture_output=True, text=True, timeout=scaled_timeout(60))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("bubblewrap cannot create a sandbox here (bwrap: ")
    assert "user namespaces" in result.stdout


@pytest.mark.parametrize("pty", [False, True])
def test_a_background_prompt_in_the_sandbox_is_answered_with_submit(runtime: Runtime, pty: bool) -> None:
    def process(**args: Any) -> dict[str, Any]:
        return json.loads(runtime.handle_function_call("process", args, task_id="t"))

    started = terminal(runtime, "read answer; echo \"got $answer\"", background=True, pty=pty)
    assert process(action="submit", session_id=started["session_id"], data="yes")["status"] == "ok"
    waited = process(action="wait", session_id=started["session_id"], timeout=scaled_timeout(20))
    assert (waited["status"], waited["exit_code"]) == ("exited", 0)
    assert "got yes" in process(action="log", session_id=started["session_id"])["output"]


def test_what_the_private_tmp_would_hide_is_bound_over_it(sandbox_runtime: Any, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkout or venv under /tmp (here: a folder on sys.path, as an editable install puts one) and a workspace
    reached through a symbolic link stay visible inside the sandbox: commands and execute_code keep working."""
    from hermes_plugin_terminal.sandbox import hidden_folders

    checkout = tmp_path / "clone" / "src"
    checkout.mkdir(parents=True)
    (checkout / "marker.txt").write_text("from the checkout\n")
    monkeypatch.syspath_prepend(str(checkout))
    assert hidden_folders([str(checkout), str(checkout / "marker.txt"), "/usr/bin"]) == [str(checkout.resolve())]
    runtime = sandbox_runtime()
    shown = terminal(runtime, f"cat {checkout / 'marker.txt'}")
    assert shown["exit_code"] == 0 and shown["output"].strip() == "from the checkout", shown
    refused = terminal(runtime, f"touch {checkout / 'new.txt'}")  # read-only: only the workspace is writable
    assert refused["exit_code"] != 0 and not (checkout / "new.txt").exists()



def test_a_folder_the_sandbox_cannot_make_visible_is_named_with_the_reason(sandbox_runtime: Any,
                                                                          tmp_path: Path) -> None:
    """A writable folder gone after the backend started cannot be bound: the terminal and execute_code say so,
    naming the folder and bubblewrap's reason, instead of failing with no reason."""
    gone = tmp_path / "gone"
    gone.mkdir()
    runtime = sandbox_runtime(writable=[str(gone)])
    assert terminal(runtime, "echo ready")["output"].strip() == "ready"
    gone.rmdir()

    expected = f"the sandbox backend could not run the command: bwrap: Can't find source path {gone}"
    assert terminal(runtime, "echo hi")["error"].startswith(expected)
    code = json.loads(runtime.handle_function_call("execute_code", {"code": "print(1)"}, task_id="t"))
    assert code["status"] == "error" and code["error"].startswith(expected)


@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="no writable /dev/shm")
def test_a_folder_on_sys_path_in_dev_shm_stays_visible_under_the_fresh_dev(sandbox_runtime: Any,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A venv or checkout in /dev/shm (a RAM disk some CI machines build in) is bound over the sandbox's /dev."""
    import tempfile

    from hermes_plugin_terminal.sandbox import hidden_folders

    checkout = Path(tempfile.mkdtemp(prefix="hermes-test-", dir="/dev/shm"))
    try:
        (checkout / "marker.txt").write_text("from the RAM disk\n")
        monkeypatch.syspath_prepend(str(checkout))
        assert hidden_folders([str(checkout / "marker.txt"), "/dev/null", "/usr/bin"]) == [str(checkout)]
        shown = terminal(sandbox_runtime(), f"cat {checkout / 'marker.txt'}")
        assert shown["exit_code"] == 0 and shown["output"].strip() == "from the RAM disk", shown
    finally:
        shutil.rmtree(checkout)

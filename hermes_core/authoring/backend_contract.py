"""The contract every execution backend keeps: it behaves like ``local`` through the ``terminal`` and ``process``
tools. Hermes tests its own backends with it; a backend plugin's tests subclass it the same way::

    import pytest
    from hermes_core.authoring.backend_contract import BackendContract


    class TestModalBackend(BackendContract):
        backend = "modal"
        plugins = (("hermes_backend_modal", "modal"),)  # (module, plugin id) pairs to load

        @pytest.fixture
        def backend_settings(self) -> dict:
            return {"image": "python:3.12-slim"}  # terminal.modal in config.yaml

Each test gets a runtime of its own (the pytest plugin's ``hermes_home`` and ``hermes_workspace``) with the terminal
pack (``hermes-tools-terminal``, needed) and ``plugins`` loaded, and ``terminal.backend`` set to ``backend``. Files are
made and removed through the backend's own commands, so a backend whose commands run on another machine passes too
when the workspace is where its tasks start (``backend_workspace``: the path commands see it at). Process liveness is
read with this machine's ``ps``; a remote backend overrides :meth:`BackendContract.command_running`.
"""

from __future__ import annotations

import json
import posixpath
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from ..plugins.discovery import candidate_from_module
from ..runtime import Runtime
from .testing import scaled_timeout

__all__ = ["BackendContract", "Call", "poll_until"]

#: ``call(tool, task=..., **arguments)``: a tool call of the test's runtime, its JSON result decoded.
Call = Callable[..., dict[str, Any]]
_TERMINAL = ("hermes_plugin_terminal", "terminal")


def _unique_sleep() -> str:
    """A ``sleep`` command line no other process has, to find it with ``ps``."""
    return f"sleep 3{uuid.uuid4().int % 10_000:04d}.5"


def poll_until(call: Call, process_id: str, text: str) -> str:
    """Poll background process ``process_id`` until the output seen so far contains ``text``; returns that output."""
    seen = ""
    deadline = time.monotonic() + scaled_timeout(20)
    while text not in seen:
        assert time.monotonic() < deadline, f"{text!r} never appeared; output so far: {seen!r}"
        seen += call("process", action="poll", session_id=process_id)["output"]
        time.sleep(0.05)
    return seen


class BackendContract:
    """The tests; a subclass named ``Test...`` sets :attr:`backend` (and :attr:`plugins`) and may override the
    fixtures ``backend_settings``, ``backend_config`` and ``backend_workspace``."""

    #: What ``terminal.backend`` selects.
    backend: ClassVar[str] = "local"
    #: Plugins to load besides the terminal pack, as ``(module, plugin id)`` pairs.
    plugins: ClassVar[Sequence[tuple[str, str]]] = ()
    #: Whether ``pty=true`` works (a backend that cannot must refuse it with an error that says so).
    supports_pty: ClassVar[bool] = True

    # -- fixtures a backend's tests may override -----------------------------------------------------------

    @pytest.fixture
    def backend_settings(self) -> dict[str, Any]:
        """``terminal.<backend>``: the backend's settings."""
        return {}

    @pytest.fixture
    def backend_config(self, backend_settings: dict[str, Any]) -> dict[str, Any]:
        """The whole of config.yaml."""
        return {"terminal": {"backend": self.backend, self.backend: backend_settings}}

    @pytest.fixture
    def backend_workspace(self, hermes_workspace: Path) -> str:
        """Where commands see the runtime's workspace (their tasks start there)."""
        return str(hermes_workspace)

    def command_running(self, command_line: str) -> bool:
        """Whether a process whose command line is exactly ``command_line`` runs where the backend runs commands."""
        listed = subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True, check=True).stdout
        return any(line.strip() == command_line for line in listed.splitlines())

    # -- the harness ---------------------------------------------------------------------------------------

    @pytest.fixture
    def backend_runtime(self, hermes_home: Path, hermes_workspace: Path,
                        backend_config: dict[str, Any]) -> Iterator[Runtime]:
        """A runtime whose config.yaml is ``backend_config``, with the terminal pack and ``plugins`` loaded."""
        pytest.importorskip("hermes_plugin_terminal", reason="the backend contract needs hermes-tools-terminal")
        import yaml

        (hermes_home / "config.yaml").write_text(yaml.safe_dump(backend_config), encoding="utf-8")
        runtime = Runtime(home=hermes_home, workspace=hermes_workspace, entry_points=())
        try:
            for module, plugin_id in (_TERMINAL, *self.plugins):
                record = runtime.load_candidate(candidate_from_module(module, plugin_id))
                assert record.state in ("declared", "loaded"), f"plugin {plugin_id!r}: {record.reason}"
            yield runtime
        finally:
            runtime.close()

    @pytest.fixture
    def call(self, backend_runtime: Runtime) -> Iterator[Call]:
        """Tool calls of ``backend_runtime``; the background processes they leave running are killed afterwards."""
        unique = uuid.uuid4().hex[:8]
        tasks: set[str] = set()

        def call(tool: str, *, task: str = "main", **arguments: Any) -> dict[str, Any]:
            tasks.add(f"{task}-{unique}")
            result: dict[str, Any] = json.loads(backend_runtime.handle_function_call(
                tool, arguments, task_id=f"{task}-{unique}", session_id=f"session-{unique}"))
            return result

        yield call
        for task in tasks:
            listed = json.loads(backend_runtime.handle_function_call("process", {"action": "list"}, task_id=task))
            for entry in listed.get("processes", []):
                if entry["status"] == "running":
                    backend_runtime.handle_function_call("process", {"action": "kill",
                                                                     "session_id": entry["session_id"]}, task_id=task)

    def gone(self, command_line: str, within: float = 10) -> bool:
        deadline = time.monotonic() + scaled_timeout(within)
        while self.command_running(command_line):
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    # -- foreground commands ---------------------------------------------------------------------------------

    def test_output_and_exit_code(self, call: Call, backend_workspace: str) -> None:
        assert call("terminal", command="echo out; echo err >&2; exit 3") == {
            "output": "out\nerr\n", "exit_code": 3, "cwd": backend_workspace}

    def test_stdin_is_closed(self, call: Call) -> None:
        assert call("terminal", command="cat; echo done")["output"] == "done\n"

    def test_cd_carries_over_within_a_task_and_not_to_another(self, call: Call, backend_workspace: str) -> None:
        sub = posixpath.join(backend_workspace, "sub")
        assert call("terminal", command="mkdir sub && cd sub && exit 1")["cwd"] == sub
        assert call("terminal", command="pwd")["output"] == f"{sub}\n"
        assert call("terminal", task="other", command="pwd")["output"] == f"{backend_workspace}\n"

    def test_workdir_applies_to_one_call_and_a_missing_one_is_an_error(self, call: Call,
                                                                       backend_workspace: str) -> None:
        call("terminal", command="mkdir sub")
        assert call("terminal", command="pwd", workdir="sub")["output"] == f"{backend_workspace}/sub\n"
        assert call("terminal", command="pwd")["output"] == f"{backend_workspace}\n"
        assert call("terminal", command="pwd", workdir="nope")["error"] == \
            f"working directory {backend_workspace}/nope does not exist or is not a directory"

    def test_a_vanished_task_directory_is_reported_and_reset(self, call: Call, backend_workspace: str) -> None:
        call("terminal", command="mkdir gone && cd gone")
        call("terminal", task="other", command="rmdir gone")
        assert "no longer exists" in call("terminal", command="pwd")["error"]
        assert call("terminal", command="pwd")["output"] == f"{backend_workspace}\n"

    def test_a_timeout_kills_the_command_and_its_children(self, call: Call) -> None:
        child = _unique_sleep()
        result = call("terminal", command=f"echo started; ({child}; echo late) & sleep 60", timeout=2)
        assert "timed out after 2s" in result["error"]
        assert result["output"] == "started\n"
        assert self.gone(child)

    def test_output_keeps_its_head_and_tail_within_the_cap(self, call: Call) -> None:
        output = call("terminal", command="seq 1 100000", max_output_chars=200)["output"]
        assert output.startswith("1\n2\n3\n")
        assert output.endswith("99999\n100000\n")
        assert "characters omitted" in output
        assert len(output) < 300

    # -- background processes -------------------------------------------------------------------------------

    def test_background_lifecycle_poll_wait_kill(self, call: Call) -> None:
        child = _unique_sleep()
        started = call("terminal", command=f"{child} & echo ready; wait", background=True)
        process_id = started["session_id"]
        assert (started["status"], started["backend"]) == ("running", self.backend)
        assert poll_until(call, process_id, "ready") == "ready\n"
        assert self.command_running(child)
        assert [entry["session_id"] for entry in call("process", action="list")["processes"]] == [process_id]
        waited = call("process", action="wait", session_id=process_id, timeout=0.2)
        assert (waited["timed_out"], waited["status"]) == (True, "running")
        killed = call("process", action="kill", session_id=process_id)
        assert killed["status"] == "killed"
        assert self.gone(child)

    def test_background_wait_returns_the_exit_code_and_output_in_the_task_directory(
            self, call: Call, backend_workspace: str) -> None:
        call("terminal", command="mkdir sub && cd sub")
        process_id = call("terminal", command="pwd; exit 7", background=True)["session_id"]
        waited = call("process", action="wait", session_id=process_id, timeout=20)
        assert (waited["timed_out"], waited["status"], waited["exit_code"]) == (False, "exited", 7)
        assert waited["output"] == f"{backend_workspace}/sub\n"

    def test_a_background_commands_input_is_written_to_and_ended(self, call: Call) -> None:
        process_id = call("terminal", command='read name; echo "hello $name"; wc -c', background=True)["session_id"]
        assert call("process", action="submit", session_id=process_id, data="Ada")["bytes_written"] == 4
        call("process", action="write", session_id=process_id, data="abc")
        assert call("process", action="close", session_id=process_id)["message"] == "input closed"
        waited = call("process", action="wait", session_id=process_id, timeout=20)
        assert (waited["status"], waited["exit_code"]) == ("exited", 0), waited
        output = call("process", action="log", session_id=process_id)["output"]
        assert output.split() == ["hello", "Ada", "3"], output

    # -- hooks and pseudo-terminals ----------------------------------------------------------------------------

    def test_transform_terminal_output_names_the_backend(self, backend_runtime: Runtime, call: Call,
                                                         tmp_path: Path) -> None:
        plugin = tmp_path / "compactor"
        plugin.mkdir()
        (plugin / "__init__.py").write_text(
            "def register(ctx):\n"
            "    ctx.register_hook('transform_terminal_output', "
            "lambda output, env_type, **kw: f'{env_type}: {output}')\n")
        assert backend_runtime.load_plugin_from_path(plugin).state == "loaded"
        assert call("terminal", command="echo hi")["output"] == f"{self.backend}: hi\n"

    def test_pty_mode_gives_the_command_a_terminal(self, call: Call) -> None:
        command = "[ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo terminal; stty size; echo controlling > /dev/tty"
        result = call("terminal", command=command, pty=True)
        if not self.supports_pty:
            assert result["error"] == f"the {self.backend} backend cannot run commands in a pseudo-terminal (pty=true)"
            return
        assert result["output"] == "terminal\n24 80\ncontrolling\n", result
        assert call("terminal", command="[ -t 0 ] || [ -t 1 ] || echo no terminal")["output"] == "no terminal\n"
        started = call("terminal", command="[ -t 0 ] && [ -t 1 ] && echo terminal", pty=True, background=True)
        assert started["pty"] is True
        waited = call("process", action="wait", session_id=started["session_id"], timeout=20)
        assert waited["output"] == "terminal\n", waited
        prompted = call("terminal", command='read name; echo "hello $name"', pty=True, background=True)
        call("process", action="submit", session_id=prompted["session_id"], data="Ada")
        answered = call("process", action="wait", session_id=prompted["session_id"], timeout=20)
        assert "hello Ada" in answered["output"], answered

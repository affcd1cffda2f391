"""One ``execute_code`` run: the generated tools module, the script and its launcher staged on the execution
backend, the tool-call server they reach through a socket, and the script run there through the launcher (an
allow-listed environment; everything it starts dies with it: see :mod:`.launcher`)."""

from __future__ import annotations

import secrets
import shlex
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from hermes_core.backends import BackendError, ExecutionBackend, ShellBackend
from hermes_core.plugin import ProgressReporter

from .isolation import local_isolation, protect_agent_process
from .rpc import Dispatcher, ToolCallServer
from .stubs import render_tools_module

SOCKET_NAME: Final = "tools.sock"
_LAUNCHER: Final = Path(__file__).with_name("launcher.py")
_ENV_NAME: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")

_DEFAULT_MAX_TIMEOUT: Final = 300.0


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run."""

    timeout: float = 60.0
    max_output_chars: int = 50_000
    max_tool_calls: int = 50

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any], requested_timeout: float | None = None) -> Limits:
        """Limits from the plugin's settings; a requested timeout is capped at ``max_timeout``.

        Raises ValueError naming the setting when one is not a positive number.
        """
        default = cls()
        timeout = _positive(settings, "timeout", default.timeout)
        max_timeout = _positive(settings, "max_timeout", _DEFAULT_MAX_TIMEOUT)
        return cls(
            timeout=min(requested_timeout or timeout, max_timeout),
            max_output_chars=int(_positive(settings, "max_output_chars", default.max_output_chars)),
            max_tool_calls=int(_positive(settings, "max_tool_calls", default.max_tool_calls)),
        )


def _positive(settings: Mapping[str, Any], key: str, default: float) -> float:
    value = settings.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError(f"plugins.entries.code.settings.{key} must be a positive number, got {value!r}")
    return float(value)


def script_command(python: str, directory: str, *, mode: str, bwrap: str | None, keep: Iterable[str],
                   marker: str) -> str:
    """The shell command that runs the staged script through its launcher (see :mod:`.launcher`)."""
    names = ",".join(name for name in keep if name and set(name) <= _ENV_NAME)
    words = [python, f"{directory}/launcher.py", mode, names, marker, f"{directory}/script.py"]
    return "exec " + " ".join(shlex.quote(word) for word in [*words, *([bwrap] if bwrap else [])])


def run_code(code: str, *, dispatch: Dispatcher, tool_names: Iterable[str], limits: Limits,
             backend: ExecutionBackend, cwd: str, env_passthrough: Iterable[str] = (),
             progress: ProgressReporter | None = None) -> dict[str, Any]:
    """Run ``code`` on ``backend`` in ``cwd`` with ``tool_names`` callable through ``dispatch``; the result for
    the model. The script's environment is the launcher's allow-list plus ``env_passthrough``; ``progress``
    hears its output lines."""
    names = list(tool_names)
    started = time.monotonic()
    files = {"hermes_tools.py": render_tools_module(names, SOCKET_NAME), "script.py": code,
             "launcher.py": _LAUNCHER.read_text(encoding="utf-8")}
    mode, bwrap = local_isolation(getattr(backend, "name", ""))
    if mode == "session" and getattr(backend, "name", "") == "local":
        protect_agent_process()  # the script's grandparent: its /proc/<pid>/environ and mem hold the agent's secrets
    marker = secrets.token_hex(16)
    calls = 0
    try:
        with backend.stage(files, sockets=[SOCKET_NAME]) as staged, \
                ToolCallServer(str(staged.local_directory / SOCKET_NAME), dispatch, names,
                               limits.max_tool_calls) as server:
            command = script_command(backend.python, staged.directory, mode=mode, bwrap=bwrap,
                                     keep=env_passthrough, marker=marker)
            env = {"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1"}
            if progress and isinstance(backend, ShellBackend):  # the script's output lines, as progress
                outcome = backend.run(command, cwd=cwd, timeout=limits.timeout,
                                      max_output_chars=limits.max_output_chars, env=env, on_output=progress.output)
            else:
                outcome = backend.run(command, cwd=cwd, timeout=limits.timeout,
                                      max_output_chars=limits.max_output_chars, env=env)
            calls = server.tool_calls
    except BackendError as exc:
        return {"status": "error", "output": "", "tool_calls": calls, "error": str(exc),
                "duration_s": round(time.monotonic() - started, 3)}
    status = "timeout" if outcome.timed_out else "ok" if outcome.exit_code == 0 else "error"
    result: dict[str, Any] = {
        "status": status,
        "output": outcome.output,
        "tool_calls": calls,
        "duration_s": round(time.monotonic() - started, 3),
    }
    if status == "timeout":
        result["error"] = f"the script ran longer than {limits.timeout:g} s and was killed"
    elif status == "error":
        result["error"] = f"the script exited with code {outcome.exit_code}"
    return result

"""One ``execute_code`` run: the generated tools module, the tool-call server and the script process."""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from .process import run_script
from .rpc import Dispatcher, ToolCallServer
from .stubs import render_tools_module

#: Environment variables whose names contain one of these are not passed to the script.
_SECRET_MARKERS: Final = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH")

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


def script_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The script's environment: ours without variables that look like credentials."""
    return {
        name: value
        for name, value in environ.items()
        if not any(marker in name.upper() for marker in _SECRET_MARKERS)
    }


def run_code(
    code: str, *, dispatch: Dispatcher, tool_names: Iterable[str], limits: Limits, cwd: Path
) -> dict[str, Any]:
    """Run ``code`` with ``tool_names`` callable through ``dispatch``; the result for the model."""
    names = list(tool_names)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="hermes-code-") as tmp:
        socket_path = os.path.join(tmp, "tools.sock")
        (Path(tmp) / "hermes_tools.py").write_text(render_tools_module(names, socket_path), encoding="utf-8")
        script = Path(tmp) / "script.py"
        script.write_text(code, encoding="utf-8")
        with ToolCallServer(socket_path, dispatch, names, limits.max_tool_calls) as server:
            outcome = run_script(
                script,
                cwd=cwd,
                env=script_env(os.environ),
                timeout=limits.timeout,
                output_cap=limits.max_output_chars,
            )
    result: dict[str, Any] = {
        "status": outcome.status,
        "output": outcome.output,
        "tool_calls": server.tool_calls,
        "duration_s": round(time.monotonic() - started, 3),
    }
    if outcome.status == "timeout":
        result["error"] = f"the script ran longer than {limits.timeout:g} s and was killed"
    elif outcome.status == "error":
        result["error"] = f"the script exited with code {outcome.exit_code}"
    return result

"""Run a Python script in its own process group with a timeout and a cap on its output."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

#: How long to wait for the output pipe to close once the process group is gone.
_DRAIN_GRACE_S = 5.0


@dataclass(frozen=True)
class ScriptResult:
    """What a script run produced."""

    status: Literal["ok", "error", "timeout"]
    #: stdout and stderr interleaved, truncated with a marker past the cap.
    output: str
    #: None when the script was killed on timeout.
    exit_code: int | None


class _CappedReader(threading.Thread):
    """Drains a pipe, keeping its first bytes (enough for ``cap`` characters) and counting the rest."""

    def __init__(self, pipe: IO[bytes], cap: int):
        super().__init__(daemon=True)
        self._pipe = pipe
        self._keep = cap * 4  # enough bytes for `cap` characters of UTF-8
        self._chunks: list[bytes] = []
        self._kept = 0
        self.dropped = 0

    def run(self) -> None:
        with self._pipe:
            while chunk := os.read(self._pipe.fileno(), 65536):
                room = max(self._keep - self._kept, 0)
                self._chunks.append(chunk[:room])
                self._kept += min(len(chunk), room)
                self.dropped += max(len(chunk) - room, 0)

    def text(self) -> str:
        return b"".join(self._chunks).decode("utf-8", errors="replace")


def run_script(
    script: Path, *, cwd: Path, env: Mapping[str, str], timeout: float, output_cap: int
) -> ScriptResult:
    """Run ``script`` with this interpreter; on timeout kill its whole process group."""
    proc = subprocess.Popen(
        [sys.executable, str(script)],
        cwd=cwd,
        env={**env, "PYTHONUNBUFFERED": "1"},  # keeps stdout and stderr in the order they were written
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    assert proc.stdout is not None
    reader = _CappedReader(proc.stdout, output_cap)
    reader.start()
    # Wait for the exit without reaping, so the group id stays reserved until the group is killed.
    waiter = threading.Thread(
        target=os.waitid, args=(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT), daemon=True
    )
    waiter.start()
    try:
        waiter.join(timeout)
        timed_out = waiter.is_alive()
    finally:
        # Also ends children the script left behind, which would otherwise hold the pipe open.
        _kill_group(proc.pid)
        waiter.join()
        exit_code = proc.wait()
    reader.join(_DRAIN_GRACE_S)

    output = reader.text()
    if reader.dropped or len(output) > output_cap:
        output = output[:output_cap] + f"\n[output truncated: showing the first {output_cap} characters]"
    if timed_out:
        return ScriptResult("timeout", output, None)
    return ScriptResult("ok" if exit_code == 0 else "error", output, exit_code)


def _kill_group(pgid: int) -> None:
    # macOS answers EPERM when only the zombie leader is left.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)

"""Where commands run: the :class:`Backend` protocol and the local subprocess backend.

A backend runs a shell command to completion (reporting the directory it ended in, so ``cd`` can carry
over to the next command) or starts one in the background. Docker or SSH backends fit the same protocol.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Final, Protocol

from .output import OutputBuffer

__all__ = ["Backend", "CommandResult", "LocalBackend", "LocalProcess", "Process"]

#: How long a terminated command gets to exit before SIGKILL.
KILL_GRACE_SECONDS: Final = 3.0
#: How long output is still read after the shell exits (children that inherited the pipe may write on).
DRAIN_SECONDS: Final = 0.5
#: What a background process keeps of its output: the start (banners, ports) and the latest lines.
BACKGROUND_HEAD_CHARS: Final = 20_000
BACKGROUND_TAIL_CHARS: Final = 180_000
_READ_CHUNK: Final = 65_536
_SELECT_SECONDS: Final = 0.1


@dataclass(frozen=True)
class CommandResult:
    """A finished foreground command."""

    output: str  #: stdout and stderr interleaved, capped with a marker where the middle was dropped
    exit_code: int  #: negative when the shell itself was killed by that signal
    cwd: str  #: the directory the command ended in
    timed_out: bool


class Process(Protocol):
    """A command running in the background."""

    pid: int
    output: OutputBuffer

    def poll(self) -> int | None:
        """The exit code, or ``None`` while it runs."""

    def wait(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds; the exit code, or ``None`` if it still runs."""

    def kill(self) -> int:
        """Stop it and everything it started; returns the exit code."""


class Backend(Protocol):
    """Runs shell commands somewhere."""

    def run(self, command: str, *, cwd: str, timeout: float, max_output_chars: int) -> CommandResult:
        """Run ``command`` in ``cwd`` to completion or until ``timeout`` seconds have passed."""

    def spawn(self, command: str, *, cwd: str) -> Process:
        """Start ``command`` in ``cwd`` without waiting for it."""


class LocalBackend:
    """Runs commands on this machine with ``bash -c`` (``sh -c`` without bash), each in its own process group."""

    def run(self, command: str, *, cwd: str, timeout: float, max_output_chars: int) -> CommandResult:
        handle, cwd_file = tempfile.mkstemp(prefix="hermes-terminal-cwd-")
        os.close(handle)
        try:
            head = max_output_chars // 2
            process = LocalProcess(_recording_cwd(command, cwd_file), cwd,
                                   OutputBuffer(head, max_output_chars - head))
            exit_code = process.wait(timeout)
            timed_out = exit_code is None
            if exit_code is None:
                exit_code = process.kill()
            final_cwd = Path(cwd_file).read_text(encoding="utf-8", errors="surrogateescape").rstrip("\n")
        finally:
            os.unlink(cwd_file)
        return CommandResult(process.output.text(), exit_code, final_cwd or cwd, timed_out)

    def spawn(self, command: str, *, cwd: str) -> LocalProcess:
        return LocalProcess(command, cwd, OutputBuffer(BACKGROUND_HEAD_CHARS, BACKGROUND_TAIL_CHARS))


def _recording_cwd(command: str, cwd_file: str) -> str:
    """``command`` preceded by an EXIT trap that writes the final working directory to ``cwd_file``."""
    trap = f"pwd > {shlex.quote(cwd_file)}"
    return f"trap {shlex.quote(trap)} EXIT\n{command}"


@cache
def _shell() -> str:
    return shutil.which("bash") or shutil.which("sh") or "/bin/sh"


class LocalProcess:
    """A ``sh -c`` child in a new session; a thread pumps its stdout and stderr into ``output``."""

    def __init__(self, script: str, cwd: str, output: OutputBuffer) -> None:
        self.output = output
        self._popen = subprocess.Popen(
            [_shell(), "-c", script], cwd=cwd, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        )
        self.pid = self._popen.pid
        self._stop_reading = threading.Event()
        self._reader = threading.Thread(target=self._pump, name=f"hermes-terminal-{self.pid}", daemon=True)
        self._reader.start()

    def poll(self) -> int | None:
        code = self._popen.poll()
        if code is not None:
            self._finish_output()
        return code

    def wait(self, timeout: float) -> int | None:
        try:
            code = self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return None
        self._finish_output()
        return code

    def kill(self) -> int:
        """SIGTERM the process group, SIGKILL it after :data:`KILL_GRACE_SECONDS`."""
        if self._popen.poll() is None:
            self._signal_group(signal.SIGTERM)
            if self.wait(KILL_GRACE_SECONDS) is None:
                self._signal_group(signal.SIGKILL)
            # Children that ignored SIGTERM outlive the shell: the group goes down with it.
            self._signal_group(signal.SIGKILL)
        code = self._popen.wait()
        self._finish_output()
        return code

    def _signal_group(self, signum: signal.Signals) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signum)

    def _pump(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        stream = self._popen.stdout
        assert stream is not None
        with stream:
            while not self._stop_reading.is_set():
                ready, _, _ = select.select([stream], [], [], _SELECT_SECONDS)
                if not ready:
                    continue
                chunk = os.read(stream.fileno(), _READ_CHUNK)
                if not chunk:
                    break
                self.output.write(decoder.decode(chunk))
            self.output.write(decoder.decode(b"", final=True))

    def _finish_output(self) -> None:
        """Read what is left after the shell exited, without waiting on children that keep the pipe open."""
        self._reader.join(DRAIN_SECONDS)
        self._stop_reading.set()
        self._reader.join()

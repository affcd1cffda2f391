"""``ShellBackend``: an execution backend for anything that starts a POSIX shell through a local process.

The shell runs a script: a preamble, then the command. The preamble moves stderr onto stdout (one
interleaved stream) and keeps the original stderr as a control channel on which it reports that the
command started (with the shell's pid) and, on exit, the directory it ended in. A backend only says which
local program runs that script where (``argv``): ``bash -c`` here, ``bwrap ... bash -c`` in a sandbox,
``ssh host ...`` on another machine. Each such process gets a session of its own; it is killed with its
process group (``signal_tree`` says how, for backends whose shell runs elsewhere). A pseudo-terminal made on the
other side (``docker exec -t``) carries stderr too: there the control channel's lines are taken out of the output.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import re
import select
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Final

from .base import BackendError, BackendSetup, CommandResult, MissingDirectory, Staged
from .output import OutputBuffer

__all__ = ["LocalBackend", "ShellBackend", "ShellProcess", "shell_script"]

#: How long a terminated command gets to exit before SIGKILL.
KILL_GRACE_SECONDS: Final = 3.0
#: How long output is still read after the shell exits (children that inherited the pipe may write on).
DRAIN_SECONDS: Final = 0.5
#: What a background process keeps of its output: the start (banners, ports) and the latest lines.
BACKGROUND_HEAD_CHARS: Final = 20_000
BACKGROUND_TAIL_CHARS: Final = 180_000
#: The size of the pseudo-terminal of ``pty=True`` commands (rows, columns).
PTY_SIZE: Final = (24, 80)
#: What the control channel keeps (the shell's reports, and the diagnostics of the program that runs it).
_CONTROL_LIMIT: Final = 65_536
_READ_CHUNK: Final = 65_536
_SELECT_SECONDS: Final = 0.1
_MARK: Final = "\x1ehermes:"
_MARK_BYTES: Final = _MARK.encode()
_ENV_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _quoted_directory(path: str) -> str:
    """``path`` for ``cd``, with a leading ``~`` left to the shell (it is the home on the backend's machine)."""
    if path == "~":
        return '"$HOME"'
    if path.startswith("~/"):
        return '"$HOME"/' + shlex.quote(path[2:])
    return shlex.quote(path)


def shell_script(command: str, *, cwd: str, env: Mapping[str, str | None] | None = None, pty: bool = False) -> str:
    """``command`` behind the preamble that reports on the control channel (see the module's docstring)."""
    lines = ["exec 3>&2"]
    if pty:  # reopening the terminal makes it the controlling terminal of a session leader (for /dev/tty)
        lines.append('exec 0<>/dev/fd/1; : "${TERM:=xterm-256color}"; export TERM')
    lines.append("exec 2>&1")
    for name, value in (env or {}).items():
        if not _ENV_NAME.fullmatch(name):
            raise ValueError(f"invalid environment variable name {name!r}")
        lines.append(f"unset {name}" if value is None else f"export {name}={shlex.quote(value)}")
    lines.append(f"cd -- {_quoted_directory(cwd)} 2>/dev/null || {{ printf '{_MARK}nodir\\n' >&3; exit 126; }}")
    lines.append(f"""trap 'printf "{_MARK}cwd %s\\n" "$(pwd)" >&3' EXIT""")
    lines.append(f"printf '{_MARK}started %s\\n' \"$$\" >&3")
    return "; ".join(lines) + "\n" + command


#: How a backend signals everything a command started (``ShellBackend.signal_tree``).
SignalTree = Callable[["ShellProcess", signal.Signals], None]


@cache
def _local_shell() -> str:
    return shutil.which("bash") or shutil.which("sh") or "/bin/sh"


class ShellProcess:
    """The local process that runs one shell script; threads pump its output and its control channel."""

    def __init__(self, argv: list[str], output: OutputBuffer, *, pty: bool = False,
                 signal_tree: SignalTree | None = None, input_open: bool = False,
                 control_in_output: bool = False) -> None:
        self.output = output
        self.remote_pid: int | None = None
        self.final_cwd: str | None = None
        self.started = threading.Event()
        self.missing_directory = False
        self._control = bytearray()
        self._partial = b""
        self._signal_tree = signal_tree
        #: The control channel arrives in the output stream (a terminal on the other side carries both).
        self._control_in_output = control_in_output
        self._held = b""
        self._carriage = b""
        master = slave = None
        if pty:
            import fcntl  # (Unix-only, like pseudo-terminals: imported here so the core imports everywhere)
            import termios

            master, slave = os.openpty()
            attributes = termios.tcgetattr(slave)
            attributes[1] &= ~termios.ONLCR  # "\n" stays "\n", as in a pipe
            termios.tcsetattr(slave, termios.TCSANOW, attributes)
            fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", *PTY_SIZE, 0, 0))
        try:
            stdin = slave if pty else subprocess.PIPE if input_open else subprocess.DEVNULL
            self._popen = subprocess.Popen(
                argv, stdin=stdin, stdout=slave if pty else subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True)
        except BaseException:
            for fd in (master, slave):
                if fd is not None:
                    os.close(fd)
            raise
        if slave is not None:
            os.close(slave)
        self.pid = self._popen.pid
        assert self._popen.stderr is not None
        stdout = self._popen.stdout
        self._out_fd = master if master is not None else stdout.fileno() if stdout is not None else -1
        self._master = master
        #: Held while the input is written, closed, or the terminal closed (by the reader, at the end).
        self._input_lock = threading.Lock()
        self._input_closed = False
        self._stop_reading = threading.Event()
        self._reader = threading.Thread(target=self._pump, name=f"hermes-shell-{self.pid}", daemon=True)
        self._reader.start()

    # -- the running process ------------------------------------------------------------------------

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
        """SIGTERM the process tree, SIGKILL it after :data:`KILL_GRACE_SECONDS`."""
        if self._popen.poll() is None:
            self.send_signal(signal.SIGTERM)
            if self.wait(KILL_GRACE_SECONDS) is None:
                self.send_signal(signal.SIGKILL)
            # Children that ignored SIGTERM outlive the shell: the group goes down with it.
            self.send_signal(signal.SIGKILL)
        code = self._popen.wait()
        self._finish_output()
        return code

    def send_signal(self, signum: signal.Signals) -> None:
        """Send ``signum`` to everything the command started."""
        if self._signal_tree is None:
            self.signal_group(signum)
        else:
            self._signal_tree(self, signum)

    def signal_group(self, signum: signal.Signals) -> None:
        """Send ``signum`` to the local process group."""
        with contextlib.suppress(ProcessLookupError, PermissionError):  # macOS: EPERM for a zombie leader
            os.killpg(self.pid, signum)

    def await_start(self, timeout: float) -> bool:
        """Wait until the command started (True), exited first or ``timeout`` passed (False)."""
        deadline = time.monotonic() + timeout
        while not self.started.wait(_SELECT_SECONDS):
            if self._popen.poll() is not None:
                self._finish_output()
                return self.started.is_set()
            if time.monotonic() > deadline:
                return False
        return True

    # -- the input ----------------------------------------------------------------------------------

    def write(self, data: str, timeout: float) -> int:
        """Send ``data`` to the command's input (its terminal, with ``pty=True``); the bytes written.

        Raises :class:`BackendError` when the input is closed or nothing reads it within ``timeout`` seconds.
        """
        payload = data.encode("utf-8")
        with self._input_lock:
            fd = self._input_fd()
            os.set_blocking(fd, False)  # a full pipe must not hold the caller beyond its timeout
            written, deadline = 0, time.monotonic() + timeout
            while written < len(payload):
                if not select.select([], [fd], [], max(0.0, deadline - time.monotonic()))[1]:
                    raise BackendError(f"the process did not read its input within {timeout:g}s "
                                       f"({written} of {len(payload)} bytes written)")
                try:
                    written += os.write(fd, payload[written:])
                except BlockingIOError:
                    continue
                except OSError as exc:  # EPIPE: the process closed its input or exited
                    raise BackendError(f"the process no longer reads its input: {exc.strerror or exc}") from None
        return written

    def close_input(self) -> str:
        """End the command's input: close its pipe, or type the end-of-file character on its terminal."""
        with self._input_lock:
            fd = self._input_fd()
            if self._master is None:
                assert self._popen.stdin is not None
                self._popen.stdin.close()
                self._input_closed = True
                return "input closed"
            import termios  # (Unix-only, like pseudo-terminals)

            os.write(fd, termios.tcgetattr(fd)[6][termios.VEOF])
            return "end of file sent"

    def _input_fd(self) -> int:
        if self._master is not None:
            if self._input_closed:
                raise BackendError("the process's terminal is closed")
            return self._master
        if self._popen.stdin is None or self._input_closed:
            raise BackendError("the process's input is closed" if self._input_closed else
                               "the process was started without an input to write to")
        return self._popen.stdin.fileno()

    @property
    def diagnostics(self) -> str:
        """What the program that runs the shell printed on its stderr (an ssh error, a bwrap error)."""
        text = self._control.decode("utf-8", errors="replace")
        return "\n".join(line for line in text.split("\n") if not line.startswith(_MARK) and line.strip())

    # -- reading ------------------------------------------------------------------------------------

    def _pump(self) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        control = self._popen.stderr
        assert control is not None
        open_fds = {self._out_fd, control.fileno()}
        try:
            while open_fds and not self._stop_reading.is_set():
                ready, _, _ = select.select(list(open_fds), [], [], _SELECT_SECONDS)
                for fd in ready:
                    try:
                        chunk = os.read(fd, _READ_CHUNK)
                    except BlockingIOError:  # the terminal is non-blocking while input is written
                        continue
                    except OSError:  # EIO: every end of the pseudo-terminal is closed
                        chunk = b""
                    if not chunk:
                        open_fds.discard(fd)
                    elif fd == self._out_fd:
                        self.output.write(decoder.decode(self._remote_terminal_output(chunk)
                                                         if self._control_in_output else chunk))
                    else:
                        self._read_control(chunk)
            self.output.write(decoder.decode(self._carriage + self._held, final=True))
        finally:
            control.close()
            if self._master is not None:
                with self._input_lock:  # never while a write uses it: the number could be reused
                    self._input_closed = True
                    os.close(self._master)
            elif self._popen.stdout is not None:
                self._popen.stdout.close()
            if self._popen.stdin is not None:
                with self._input_lock, contextlib.suppress(OSError):
                    self._input_closed = True
                    self._popen.stdin.close()

    def _remote_terminal_output(self, chunk: bytes) -> bytes:
        """What a terminal made on the other side printed, without the control channel and with its line ends read
        as ``"\\n"``: the shell turns ``onlcr`` off, but the container runtime may set it again once the command
        has started (conmon does), so ``"\\r\\n"`` is read as ``"\\n"`` here whatever the terminal's mode."""
        data = self._carriage + self._take_control(chunk)
        self._carriage = b"\r" if data.endswith(b"\r") else b""
        return data[:len(data) - len(self._carriage)].replace(b"\r\n", b"\n")

    def _take_control(self, chunk: bytes) -> bytes:
        """``chunk`` of the output without the control channel's lines, which go to :meth:`_read_control`; the start
        of one not complete yet is held back until the rest arrives."""
        data, kept = self._held + chunk, bytearray()
        while (start := data.find(_MARK_BYTES[:1])) >= 0:
            kept += data[:start]
            data = data[start:]
            if not data.startswith(_MARK_BYTES[:len(data)]):  # a record separator that begins no mark
                kept += data[:1]
                data = data[1:]
                continue
            end = data.find(b"\n")
            if end < 0:
                if len(data) > _CONTROL_LIMIT:  # never a mark: give it back as output
                    kept += data
                    data = b""
                break
            self._read_control(data[:end + 1])
            data = data[end + 1:]
        else:
            kept += data
            data = b""
        self._held = data
        return bytes(kept)

    def _read_control(self, chunk: bytes) -> None:
        if len(self._control) < _CONTROL_LIMIT:
            self._control += chunk[:_CONTROL_LIMIT - len(self._control)]
        self._partial += chunk
        *lines, rest = self._partial.split(b"\n")
        self._partial = rest[-_CONTROL_LIMIT:]
        for raw in lines:
            line = raw.decode("utf-8", errors="surrogateescape").removesuffix("\r")
            if not line.startswith(_MARK):
                continue
            kind, _, value = line[len(_MARK):].partition(" ")
            if kind == "started" and value.isdigit():
                self.remote_pid = int(value)
                self.started.set()
            elif kind == "cwd":
                self.final_cwd = value
            elif kind == "nodir":
                self.missing_directory = True

    def _finish_output(self) -> None:
        """Read what is left after the shell exited, without waiting on children that keep the pipe open."""
        self._reader.join(DRAIN_SECONDS)
        self._stop_reading.set()
        self._reader.join()


class ShellBackend:
    """A backend whose commands are shell scripts run by a local program; subclasses implement :meth:`argv`.

    It gives every backend the behaviour of ``local``: cwd carry-over, background processes, timeouts that
    kill the whole tree, capped output, environment variables and ``pty=True``.
    """

    name = "shell"
    #: Where a task's first command starts on the backend's machine (``~`` is the home there).
    default_cwd = "~"
    #: The Python interpreter ``execute_code`` runs there.
    python = "python3"
    #: Whether :meth:`argv` can run a script in a pseudo-terminal.
    supports_pty = True
    #: Whether that pseudo-terminal is made where the shell runs (``docker exec -t``), so that it carries the
    #: shell's stderr, and with it the control channel, in the output.
    pty_carries_control = False
    #: Longest wait for a command to start (a connection to open, a sandbox to come up).
    start_timeout = 60.0

    def argv(self, script: str, *, pty: bool) -> list[str]:
        """The local command line that runs the shell ``script`` where this backend's commands run."""
        raise NotImplementedError

    def signal_tree(self, process: ShellProcess, signum: signal.Signals) -> None:
        """Signal everything ``process`` started: its local process group (a remote backend signals the remote
        processes too)."""
        process.signal_group(signum)

    def run(self, command: str, *, cwd: str, timeout: float, max_output_chars: int,
            env: Mapping[str, str | None] | None = None, pty: bool = False,
            on_output: Callable[[str], object] | None = None) -> CommandResult:
        """:meth:`ExecutionBackend.run`; ``on_output`` hears the output as it comes (for progress reports)."""
        head = max_output_chars // 2
        started = time.monotonic()
        process = self._start(command, cwd, env, pty, OutputBuffer(head, max_output_chars - head, on_output),
                              timeout, interactive=False)
        exit_code = process.wait(max(0.0, timeout - (time.monotonic() - started)))
        timed_out = exit_code is None
        if exit_code is None:
            exit_code = process.kill()
        return CommandResult(process.output.text(), exit_code, process.final_cwd or cwd, timed_out)

    def spawn(self, command: str, *, cwd: str, env: Mapping[str, str | None] | None = None,
              pty: bool = False) -> ShellProcess:
        return self._start(command, cwd, env, pty, OutputBuffer(BACKGROUND_HEAD_CHARS, BACKGROUND_TAIL_CHARS),
                           self.start_timeout, interactive=True)

    def _start(self, command: str, cwd: str, env: Mapping[str, str | None] | None, pty: bool,
               output: OutputBuffer, timeout: float, *, interactive: bool) -> ShellProcess:
        if pty and not self.supports_pty:
            raise BackendError(f"the {self.name} backend cannot run commands in a pseudo-terminal (pty=true)")
        argv = self.argv(shell_script(command, cwd=cwd, env=env, pty=pty), pty=pty)
        process = ShellProcess(argv, output, pty=pty, signal_tree=self.signal_tree, input_open=interactive,
                               control_in_output=pty and self.pty_carries_control)
        if process.await_start(min(timeout, self.start_timeout)):
            return process
        if process.poll() is None:  # still not started: a slow connection, or a timeout shorter than the start
            process.kill()
            raise BackendError(f"the {self.name} backend did not start the command within "
                               f"{min(timeout, self.start_timeout):g}s")
        if process.missing_directory:
            raise MissingDirectory(cwd)
        problem = process.diagnostics or f"it exited with code {process.poll()} before the command started"
        raise BackendError(f"the {self.name} backend could not run the command: {problem}")

    @contextlib.contextmanager
    def stage(self, files: Mapping[str, str], *, sockets: Iterable[str] = ()) -> Iterator[Staged]:
        """A temporary folder of this machine, for backends whose commands see this machine's files."""
        with tempfile.TemporaryDirectory(prefix="hermes-stage-") as folder:
            for name, text in files.items():
                (Path(folder) / name).write_text(text, encoding="utf-8")
            yield Staged(folder, Path(folder))

    def close(self) -> None:
        """Nothing to release for a local shell."""


class LocalBackend(ShellBackend):
    """Runs commands on this machine with ``bash -c`` (``sh -c`` without bash), each in its own session."""

    name = "local"
    python = sys.executable

    def __init__(self, setup: BackendSetup | None = None) -> None:
        self.default_cwd = str(setup.workspace) if setup else os.getcwd()

    def argv(self, script: str, *, pty: bool) -> list[str]:
        return [_local_shell(), "-c", script]

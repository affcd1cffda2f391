"""One long-lived container, driven through a docker-compatible CLI (``docker``, ``podman``, ...).

``docker run -i --rm`` starts it with a first process that reports which shell and ``setsid`` the image has, then
reads its standard input until end of file. Hermes holds the other end of that pipe: closing it (``remove``), or
Hermes dying however it dies, ends the first process, the container stops, and ``--rm`` removes it. Commands run in
it with ``docker exec``.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import IO, Final

from hermes_core.backends import BackendError, BackendUnavailable

__all__ = ["Container"]

#: The first process: the programs of the image Hermes runs, looked up as files on PATH (a busybox shell's
#: ``command -v`` also names its built-in applets, which ``docker exec`` cannot start), then wait for Hermes to let go
#: (``cat`` keeps the shell waiting, so it reaps the processes orphaned in the container).
_FIRST_PROCESS: Final = (
    'found() { IFS=:; for d in $PATH; do [ -f "$d/$1" ] && [ -x "$d/$1" ] && { printf %s "$d/$1"; return; }; done; '
    'printf -; }; printf "hermes-ready %s %s\\n" "$(found bash)" "$(found setsid)"; cat >/dev/null; exit 0')
_READY: Final = "hermes-ready "
#: Bound on one control command (a kill, a removal) through the CLI.
CONTROL_SECONDS: Final = 30.0
#: How long a container gets to stop once its first process was let go, before it is removed by force.
STOP_SECONDS: Final = 10.0


class Container:
    """A running container named ``name``; ``shell`` is its bash (else ``sh``), ``setsid`` its setsid (or None)."""

    def __init__(self, executable: str, run_arguments: Sequence[str], image: str, *, env: Mapping[str, str],
                 start_timeout: float) -> None:
        self.executable = executable
        self.image = image
        self.name = f"hermes-{os.getpid()}-{uuid.uuid4().hex[:10]}"
        # a pull's progress would fill a pipe nobody reads; the file lives as long as the container
        self._errors: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115
        command = [executable, "run", "-i", "--rm", "--name", self.name, *run_arguments, image, "-c", _FIRST_PROCESS]
        try:
            self._client = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                            stderr=self._errors, env={**os.environ, **env}, start_new_session=True)
        except OSError as exc:
            self._errors.close()
            raise BackendUnavailable(f"{executable} cannot be run: {exc.strerror or exc}") from None
        try:
            self.shell, self.setsid = self._await_ready(start_timeout)
        except BaseException:
            self.remove()
            raise

    def _await_ready(self, timeout: float) -> tuple[str, str | None]:
        """The shell and setsid the first process found, once it runs."""
        stdout = self._client.stdout
        assert stdout is not None
        deadline, seen = time.monotonic() + timeout, b""
        while b"\n" not in seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise BackendError(f"the container of image {self.image!r} did not start within {timeout:g}s "
                                   "(terminal.docker.start_timeout)")
            ready, _, _ = select.select([stdout], [], [], min(left, 0.5))
            chunk = os.read(stdout.fileno(), 4096) if ready else b""
            if ready and not chunk:
                self._client.wait(CONTROL_SECONDS)
                raise BackendError(f"{self.executable} could not start a container of image {self.image!r}: "
                                   f"{self._said() or f'it exited with code {self._client.returncode}'}")
            seen += chunk
        line = seen.split(b"\n", 1)[0].decode("utf-8", errors="replace")
        if not line.startswith(_READY):
            raise BackendError(f"the container of image {self.image!r} did not start its shell: {line[:200]!r}")
        bash, setsid = [*line[len(_READY):].split(" "), "-", "-"][:2]
        return bash if bash.startswith("/") else "sh", setsid if setsid.startswith("/") else None

    def _said(self) -> str:
        """The last lines the CLI wrote on its stderr."""
        self._errors.seek(0)
        lines = [line for line in self._errors.read().decode("utf-8", errors="replace").splitlines() if line.strip()]
        return " ".join(lines[-3:])

    def exec_argv(self, program: Sequence[str], *, interactive: bool = False, terminal: bool = False) -> list[str]:
        """The command line that runs ``program`` in the container, its input passed on (``interactive``), in a
        pseudo-terminal of its own (``terminal``)."""
        options = ["-i", "-t"] if terminal else ["-i"] if interactive else []
        return [self.executable, "exec", *options, self.name, *program]

    def signal(self, pid: int, signum: signal.Signals) -> None:
        """Send ``signum`` to process group ``pid`` in the container, and to the process itself."""
        name = signum.name.removeprefix("SIG")
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            subprocess.run(self.exec_argv(["sh", "-c", f"kill -{name} -- -{pid} {pid} 2>/dev/null; true"]),
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=CONTROL_SECONDS)

    def remove(self) -> None:
        """Let the first process go, so the container stops and is removed; remove it by force if it lingers."""
        client = self._client
        if client.stdin is not None:
            with contextlib.suppress(OSError):
                client.stdin.close()
        try:
            client.wait(STOP_SECONDS)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                subprocess.run([self.executable, "rm", "-f", self.name], stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=CONTROL_SECONDS)
            client.kill()
            client.wait()
        if client.stdout is not None:
            client.stdout.close()
        self._errors.close()

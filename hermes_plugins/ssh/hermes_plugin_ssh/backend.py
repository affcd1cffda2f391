"""The ``ssh`` backend: commands run on a remote host through the OpenSSH client and one control master.

The first use opens a master connection (``ControlMaster``); every command after it is a multiplexed
session over that connection, so it starts in milliseconds and authenticates once. Hosts are verified
against ``known_hosts`` with ``StrictHostKeyChecking``: a key that does not match is always refused, an
unknown host is refused unless ``host_key_policy: accept-new``. Commands run under the remote shell as the
preamble of :mod:`hermes_core.backends.shell` wraps them (cwd carry-over, the pid for kills); a kill signals
the remote process group through the master, then ends the local client.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hermes_core.backends import BackendError, BackendSetup, BackendUnavailable, ShellBackend, ShellProcess, Staged

__all__ = ["SshBackend", "SshSettings", "available"]

#: Idle seconds after which an abandoned master connection (Hermes killed) closes itself.
CONTROL_PERSIST_SECONDS: Final = 600
_CONTROL_SECONDS: Final = 30
_CHANGED = "REMOTE HOST IDENTIFICATION HAS CHANGED"


class SshSettings(BaseModel):
    """``terminal.ssh`` in config.yaml."""

    model_config = ConfigDict(extra="forbid")

    host: str = Field(min_length=1, description="The remote host (a name from ~/.ssh/config works too).")
    port: int = Field(22, ge=1, le=65535, description="Its SSH port.")
    user: str | None = Field(None, description="The remote user (default: ssh's, from ~/.ssh/config or yours).")
    identity_file: str | None = Field(None, description="The private key to log in with (only that one).")
    known_hosts: str | None = Field(None, description="The known_hosts file to verify the host with "
                                                      "(default: ssh's, ~/.ssh/known_hosts).")
    host_key_policy: Literal["strict", "accept-new"] = Field(
        "strict", description="`strict`: the host must be in known_hosts; `accept-new`: an unknown host is "
                              "added on first connection. A changed key is refused either way.")
    connect_timeout: int = Field(10, ge=1, description="Seconds to wait for the connection.")
    config_file: str | None = Field(None, description="An ssh_config to read instead of ~/.ssh/config.")

    @field_validator("host", "user")
    @classmethod
    def _not_an_option(cls, value: str | None) -> str | None:
        if value is not None and (value.startswith("-") or any(c.isspace() for c in value)):
            raise ValueError("must not start with '-' or contain spaces")
        return value


def available() -> bool:
    """The backend's check: the OpenSSH client is installed (raises with what to install otherwise)."""
    if shutil.which("ssh") is None:
        raise BackendUnavailable("the OpenSSH client (ssh) is not installed; install it (Debian and Ubuntu: "
                                 "apt-get install openssh-client)")
    return True


def _option_path(path: str) -> str:
    return '"' + os.path.expanduser(path) + '"'


class SshBackend(ShellBackend):
    """Runs commands on ``terminal.ssh.host`` (see the module's docstring)."""

    name = "ssh"
    supports_pty = False  # a remote terminal would merge the control channel into the output

    def __init__(self, setup: BackendSetup) -> None:
        available()
        self.settings = settings = setup.parse(SshSettings)
        self.destination = f"{settings.user + '@' if settings.user else ''}{settings.host}"
        self._where = f"{self.destination}:{settings.port}"
        # a short, private path: sockets allow ~100 bytes
        self._control_dir = Path(tempfile.mkdtemp(prefix="hermes-ssh-"))
        digest = hashlib.sha256(f"{self._where}-{uuid.uuid4()}".encode()).hexdigest()[:12]
        self._control_path = str(self._control_dir / digest)
        self._lock = threading.Lock()
        options = ["-o", "BatchMode=yes", "-o", "LogLevel=ERROR",
                   "-o", f"StrictHostKeyChecking={'yes' if settings.host_key_policy == 'strict' else 'accept-new'}",
                   "-o", f"ConnectTimeout={settings.connect_timeout}", "-o", "ServerAliveInterval=15",
                   "-o", "ServerAliveCountMax=3", "-o", f"ControlPath={self._control_path}", "-p", str(settings.port)]
        if settings.config_file:
            options = ["-F", os.path.expanduser(settings.config_file), *options]
        if settings.known_hosts:
            options += ["-o", f"UserKnownHostsFile={_option_path(settings.known_hosts)}"]
        if settings.identity_file:
            options += ["-i", os.path.expanduser(settings.identity_file), "-o", "IdentitiesOnly=yes"]
        self._options = options
        self._connect()

    # -- the connection -------------------------------------------------------------------------------

    def _ssh(self, *args: str) -> list[str]:
        return ["ssh", *self._options, *args]

    def _connect(self) -> None:
        """Open the master connection (once; again if it went away)."""
        with self._lock:
            if os.path.exists(self._control_path):
                return
            with tempfile.TemporaryFile() as errors:
                try:
                    result = subprocess.run(
                        self._ssh("-o", "ControlMaster=yes", "-o", f"ControlPersist={CONTROL_PERSIST_SECONDS}",
                                  "-f", "-N", "--", self.destination),
                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors,
                        timeout=self.settings.connect_timeout + _CONTROL_SECONDS)
                except subprocess.TimeoutExpired:
                    raise BackendError(f"ssh to {self._where} did not connect within "
                                       f"{self.settings.connect_timeout + _CONTROL_SECONDS}s") from None
                errors.seek(0)
                said = errors.read().decode("utf-8", errors="replace")
            if result.returncode != 0:
                raise BackendError(self._connection_problem(said, result.returncode))

    def _connection_problem(self, said: str, code: int) -> str:
        where, known = self._where, self.settings.known_hosts or "~/.ssh/known_hosts"
        if _CHANGED in said:
            return (f"the host key of {where} does not match the one in {known}: refused (it may be a "
                    "man-in-the-middle attack, or the host was reinstalled; if you trust the new key, remove the "
                    f"old one with ssh-keygen -R and connect again)")
        if "Host key verification failed" in said:
            return (f"{where} is not in {known}, and terminal.ssh.host_key_policy is strict: add its key "
                    "(ssh-keyscan, or connect once with ssh) or set host_key_policy: accept-new")
        lines = [line for line in said.splitlines() if line.strip()]
        return f"ssh to {where} failed: {lines[-1] if lines else f'exit code {code}'}"

    def _remote(self, command: str, *, data: bytes | None = None) -> str:
        """Run ``command`` with the remote user's shell over the master; its stdout (raises on failure)."""
        self._connect()
        try:
            result = subprocess.run(self._ssh("-o", "ControlMaster=no", "--", self.destination, command),
                                    input=data or b"", capture_output=True, timeout=_CONTROL_SECONDS)
        except subprocess.TimeoutExpired:
            raise BackendError(f"ssh to {self._where}: {command.split()[0]!r} did not finish within "
                               f"{_CONTROL_SECONDS}s") from None
        if result.returncode != 0:
            said = result.stderr.decode("utf-8", errors="replace").strip()
            raise BackendError(self._connection_problem(said, result.returncode) if result.returncode == 255
                               else f"on {self._where}: {said or f'exit code {result.returncode}'}")
        return result.stdout.decode("utf-8", errors="replace")

    def _forward(self, action: Literal["forward", "cancel"], remote: str, local: Path) -> None:
        result = subprocess.run(self._ssh("-O", action, "-R", f"{remote}:{local}", "--", self.destination),
                                capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=_CONTROL_SECONDS)
        if result.returncode != 0 and action == "forward":
            raise BackendError(f"ssh to {self._where}: cannot forward a socket to {remote}: {result.stderr.strip()}")

    # -- ShellBackend ---------------------------------------------------------------------------------

    def argv(self, script: str, *, pty: bool) -> list[str]:
        self._connect()
        # the remote user's login shell reads this line: hand the script to bash (sh where there is none)
        remote = (f"S={shlex.quote(script)}; command -v bash >/dev/null 2>&1 && exec bash -c \"$S\"; "
                  'exec sh -c "$S"')
        return self._ssh("-o", "ControlMaster=no", "--", self.destination, remote)

    def signal_tree(self, process: ShellProcess, signum: signal.Signals) -> None:
        """Signal the remote shell's process group (sshd made it a session leader), then, for SIGKILL, the
        local client."""
        if process.remote_pid is not None:
            pid = process.remote_pid
            with contextlib.suppress(BackendError):
                self._remote(f"kill -{signum.name.removeprefix('SIG')} -- -{pid} {pid} 2>/dev/null; true")
        if signum == signal.SIGKILL or process.remote_pid is None:
            process.signal_group(signum)

    @contextlib.contextmanager
    def stage(self, files: Mapping[str, str], *, sockets: Iterable[str] = ()) -> Iterator[Staged]:
        """A remote temporary folder holding ``files``; each socket is forwarded from a local folder."""
        directory = self._remote('mktemp -d "${TMPDIR:-/tmp}/hermes-stage-XXXXXX"').strip()
        local = Path(tempfile.mkdtemp(prefix="hermes-ssh-stage-"))
        forwarded: list[str] = []
        try:
            for name, text in files.items():
                self._remote(f"cat > {shlex.quote(f'{directory}/{name}')}", data=text.encode("utf-8"))
            for name in sockets:
                self._forward("forward", f"{directory}/{name}", local / name)
                forwarded.append(name)
            yield Staged(directory, local)
        finally:
            for name in forwarded:
                self._forward("cancel", f"{directory}/{name}", local / name)
            with contextlib.suppress(BackendError):
                self._remote(f"rm -rf {shlex.quote(directory)}")
            shutil.rmtree(local, ignore_errors=True)

    def close(self) -> None:
        """Close the master connection."""
        if os.path.exists(self._control_path):
            subprocess.run(self._ssh("-O", "exit", "--", self.destination), capture_output=True,
                           stdin=subprocess.DEVNULL, timeout=_CONTROL_SECONDS)
        shutil.rmtree(self._control_dir, ignore_errors=True)

"""The ``docker`` backend: commands run in one long-lived container per runtime, through ``docker exec``.

The container is started when a task first uses the backend and removed when the runtime closes (or, should Hermes
be killed, as soon as it is gone: see :mod:`.container`). By default it sees nothing of this machine but the
workspace, mounted read-write at its own path; it has no network, every capability dropped but the few package
managers need (Hermes Agent's set), no privilege escalation, small ``tmpfs`` scratch folders, and CPU, memory and
process limits. Each command is a shell of its own (``setsid``, so a kill reaches everything it started); ``pty=true``
runs it in a pseudo-terminal made by ``docker exec -t``.
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import shutil
import signal
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path, PurePosixPath
from typing import Final

from hermes_core.backends import (
    PTY_SIZE,
    BackendError,
    BackendSetup,
    BackendUnavailable,
    ShellBackend,
    ShellProcess,
    Staged,
)

from .container import Container
from .settings import DockerSettings, parse_volume

__all__ = ["DockerBackend", "available", "find_executable", "run_arguments"]

#: Where ``stage`` folders appear inside the container (its own temporary folder; each staged folder is a private
#: folder of this machine mounted there).
STAGE_PATH: Final = posixpath.join("/tmp", "hermes-stage")
#: Hermes Agent's hardening: every capability dropped but what package managers need, no privilege escalation,
#: size-limited scratch folders.
_SECURITY: Final = (
    "--cap-drop", "ALL", "--cap-add", "DAC_OVERRIDE", "--cap-add", "CHOWN", "--cap-add", "FOWNER",
    "--security-opt", "no-new-privileges",
    "--tmpfs", "/tmp:rw,nosuid,size=512m", "--tmpfs", "/var/tmp:rw,noexec,nosuid,size=256m",
    "--tmpfs", "/run:rw,noexec,nosuid,size=64m",
)
#: What an image's own init drops privileges with (not needed when commands run as the host's user).
_PRIVILEGE_DROP: Final = ("--cap-add", "SETUID", "--cap-add", "SETGID")


def find_executable(configured: str | None) -> str:
    """The container CLI: ``terminal.docker.executable``, else ``docker``, else ``podman`` on PATH."""
    for name in [configured] if configured else ["docker", "podman"]:
        found = shutil.which(os.path.expanduser(name))
        if found:
            return found
    if configured:
        raise BackendUnavailable(f"terminal.docker.executable {configured!r} is not an executable program")
    raise BackendUnavailable("neither docker nor podman is installed; install one (Debian and Ubuntu: apt-get install "
                             "podman, or Docker Engine) or set terminal.docker.executable")


def available() -> bool:
    """The backend's check: a container CLI is installed (raises with what to install otherwise)."""
    find_executable(None)
    return True


def _mount(source: Path, target: str, *, read_only: bool = False) -> list[str]:
    if "," in f"{source}{target}":
        raise BackendError(f"cannot mount {source} at {target}: paths with ',' cannot be mounted")
    return ["--mount", f"type=bind,source={source},target={target}{',readonly' if read_only else ''}"]


def run_arguments(settings: DockerSettings, workspace: Path, workspace_path: str,
                  stage: Path) -> tuple[list[str], dict[str, str]]:
    """The options of ``docker run`` for ``settings``, and the environment the CLI passes into the container (by
    name, so that values never appear on a command line)."""
    arguments = ["--label", "hermes-tools=1", "--entrypoint", "sh", *_SECURITY]
    if not settings.run_as_host_user:
        arguments += _PRIVILEGE_DROP
    elif hasattr(os, "getuid"):
        arguments += ["--user", f"{os.getuid()}:{os.getgid()}"]
    else:
        raise BackendError("invalid config.yaml: terminal.docker.run_as_host_user needs a POSIX system")
    if not settings.network:
        arguments += ["--network", "none"]
    limits = {"--cpus": settings.cpu and f"{settings.cpu:g}", "--memory": settings.memory and f"{settings.memory}m",
              "--pids-limit": settings.pids_limit and str(settings.pids_limit),
              "--storage-opt": settings.disk and f"size={settings.disk}m"}
    arguments += [part for option, value in limits.items() if value for part in (option, value)]
    if settings.mount_workspace:
        arguments += _mount(workspace.resolve(), workspace_path)
    for spec in settings.volumes:
        volume = parse_volume(spec)
        arguments += _mount(volume.source.resolve(), volume.target, read_only=volume.read_only)
    arguments += _mount(stage, STAGE_PATH, read_only=True)
    env = dict(settings.env)
    env.update({name: os.environ[name] for name in settings.forward_env if name in os.environ})
    for name in env:
        arguments += ["-e", name]
    return [*arguments, *settings.extra_args], env


class DockerBackend(ShellBackend):
    """Runs commands in a container of ``terminal.docker.image`` (see the module's docstring)."""

    name = "docker"
    pty_carries_control = True

    def __init__(self, setup: BackendSetup) -> None:
        settings = setup.parse(DockerSettings)
        executable = find_executable(settings.executable)
        workspace = setup.workspace.absolute()
        # at its own path, so file tools and commands name files alike (a Windows path cannot be one in the container)
        own_path = workspace.as_posix() if PurePosixPath(workspace.as_posix()).is_absolute() else "/workspace"
        target = settings.workspace_path or own_path
        self.default_cwd = target if settings.mount_workspace else "~"
        self._stage = Path(tempfile.mkdtemp(prefix="hermes-docker-stage-"))
        self._stage.chmod(0o711)  # the container's user may be another: it reaches a stage folder it is told about
        try:
            arguments, env = run_arguments(settings, workspace, target, self._stage)
            self.container = Container(executable, arguments, settings.image, env=env,
                                       start_timeout=settings.start_timeout)
        except BaseException:
            shutil.rmtree(self._stage, ignore_errors=True)
            raise
        if self.container.setsid is None:
            self.close()
            raise BackendUnavailable(f"the image {settings.image!r} has no setsid (util-linux or busybox provides it): "
                                     "Hermes needs it to stop a command with everything it started")

    def argv(self, script: str, *, pty: bool) -> list[str]:
        shell = self.container.shell
        if pty:
            # the terminal is made in the container: "\n" stays "\n", as in a pipe; its size is set here, since the
            # client's resize may come after the command started
            rows, columns = PTY_SIZE
            setup = f"stty -onlcr rows {rows} cols {columns} 2>/dev/null"
            return self.container.exec_argv([shell, "-c", f"{setup}\n{script}"], terminal=True)
        assert self.container.setsid is not None  # (-i: a background command's input is written to, or ended)
        return self.container.exec_argv([self.container.setsid, shell, "-c", script], interactive=True)

    def signal_tree(self, process: ShellProcess, signum: signal.Signals) -> None:
        """Signal the command's process group in the container, then, for SIGKILL, the local ``docker exec``."""
        if process.remote_pid is not None:
            self.container.signal(process.remote_pid, signum)
        if signum == signal.SIGKILL or process.remote_pid is None:
            process.signal_group(signum)

    @contextlib.contextmanager
    def stage(self, files: Mapping[str, str], *, sockets: Iterable[str] = ()) -> Iterator[Staged]:
        """A folder of the backend's stage, mounted read-only in the container; sockets bound in it on this machine
        are reachable there (the same kernel)."""
        folder = Path(tempfile.mkdtemp(prefix="stage-", dir=self._stage))
        try:
            for name, text in files.items():
                (folder / name).write_text(text, encoding="utf-8")
            folder.chmod(0o755)
            yield Staged(f"{STAGE_PATH}/{folder.name}", folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        """Remove the container (with whatever still runs in it) and the stage folder."""
        self.container.remove()
        shutil.rmtree(self._stage, ignore_errors=True)

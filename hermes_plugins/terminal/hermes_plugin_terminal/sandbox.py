"""The ``sandbox`` backend: commands under bubblewrap, the workspace writable and the rest of the system read-only.

Each command gets a fresh set of namespaces (``--unshare-all``): no network unless ``terminal.sandbox.network``
is true, its own process ids (the whole tree dies with the sandbox, even what left the process group), no
capabilities, and a ``/tmp`` private to this backend (kept between its commands, removed when it closes). What that
private ``/tmp`` or the fresh ``/dev`` would hide and commands need is bound over it: the interpreter's folders and
``sys.path`` (a checkout or venv under ``/tmp`` or ``/dev/shm``, read-only) and the writable folders (the
workspace), by their real paths too; a folder that cannot be bound fails the command with bubblewrap's reason.
Without bubblewrap, or where it cannot create namespaces, the backend is unavailable with that reason; commands
never quietly run unsandboxed.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from hermes_core.backends import BackendError, BackendSetup, BackendUnavailable, ShellBackend, Staged

__all__ = ["SandboxBackend", "SandboxSettings", "available", "sandbox_problem"]

_PROBE_SECONDS: Final = 20
#: Why user namespaces may be off: the sysctl, the value that turns them off, and what it means.
_USERNS_SWITCHES: Final = (
    ("/proc/sys/user/max_user_namespaces", "0", "user namespaces are disabled (user.max_user_namespaces = 0)"),
    ("/proc/sys/kernel/unprivileged_userns_clone", "0",
     "unprivileged user namespaces are disabled (kernel.unprivileged_userns_clone = 0)"),
    ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1",
     "AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1)"),
)


class SandboxSettings(BaseModel):
    """``terminal.sandbox`` in config.yaml."""

    model_config = ConfigDict(extra="forbid")

    network: bool = Field(False, description="Let commands reach the network (they never can by default).")
    writable: list[str] = Field(default_factory=list,
                                description="Folders writable besides the workspace (they must exist).")


def _namespace_switch() -> str:
    """Which sysctl keeps user namespaces off, if one does."""
    for path, off, meaning in _USERNS_SWITCHES:
        with contextlib.suppress(OSError):
            if Path(path).read_text().strip() == off:
                return meaning
    return "user namespaces are unavailable to this user (bubblewrap needs them, or to be installed setuid)"


@cache
def _probe(bwrap: str) -> str | None:
    """Why ``bwrap`` cannot make a sandbox here (it is tried once per process), or ``None``."""
    try:
        result = subprocess.run([bwrap, *_ISOLATION, "--ro-bind", "/", "/", "--", "true"], capture_output=True,
                                text=True, stdin=subprocess.DEVNULL, timeout=_PROBE_SECONDS)
    except OSError as exc:
        return f"{bwrap} cannot be run: {exc.strerror or exc}"
    except subprocess.TimeoutExpired:
        return f"{bwrap} did not start a sandbox within {_PROBE_SECONDS}s"
    if result.returncode == 0:
        return None
    said = result.stderr.strip() or f"it exited with code {result.returncode}"
    return f"bubblewrap cannot create a sandbox here ({said}): {_namespace_switch()}"


def sandbox_problem() -> str | None:
    """Why the sandbox backend cannot work on this machine, or ``None`` when it can."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return ("bubblewrap (bwrap) is not installed; install it (Debian and Ubuntu: apt-get install bubblewrap, "
                "Fedora: dnf install bubblewrap)")
    return _probe(bwrap)


def available() -> bool:
    """The backend's check: true, or raises with the reason (shown by ``plugins doctor``)."""
    problem = sandbox_problem()
    if problem:
        raise BackendUnavailable(problem)
    return True


#: Namespaces and privileges of every sandbox: all namespaces new, no capabilities, a session of its own
#: (no access to the controlling terminal of Hermes), killed when the bwrap that started it dies.
_ISOLATION: Final = ("--unshare-all", "--new-session", "--die-with-parent", "--cap-drop", "ALL")


#: The folders the sandbox mounts afresh, hiding what the host has there.
_REPLACED: Final = (("/", "tmp"), ("/", "dev"))


def hidden_folders(paths: Iterable[str]) -> list[str]:
    """The folders in ``/tmp`` or ``/dev`` (``/dev/shm``) that hold ``paths`` (as given or resolved; none inside
    another), which the sandbox's private ``/tmp`` and fresh ``/dev`` would hide."""
    found: set[Path] = set()
    for path in paths:
        if not path:
            continue
        for variant in {Path(path).absolute(), Path(path).resolve()}:
            folder = variant if variant.is_dir() else variant.parent
            if len(folder.parts) > 2 and folder.parts[:2] in _REPLACED and folder.is_dir():
                found.add(folder)
    return sorted(str(folder) for folder in found if not any(other in folder.parents for other in found))


class SandboxBackend(ShellBackend):
    """Runs each command in a bubblewrap sandbox (see the module's docstring)."""

    name = "sandbox"
    python = sys.executable  # the read-only system is the host's, this interpreter included

    def __init__(self, setup: BackendSetup) -> None:
        settings = setup.parse(SandboxSettings)
        problem = sandbox_problem()
        if problem:
            raise BackendUnavailable(problem)
        self._bwrap = shutil.which("bwrap") or "bwrap"
        self._setsid = shutil.which("setsid")
        self._shell = shutil.which("bash") or "/bin/sh"
        self._network = settings.network
        self.default_cwd = str(setup.workspace)
        writable = [setup.workspace, *(Path(path).expanduser() for path in settings.writable)]
        missing = [str(path) for path in writable if not path.is_dir()]
        if missing:
            raise BackendError(f"invalid config.yaml: terminal.sandbox.writable: {', '.join(missing)} "
                               "does not exist or is not a folder")
        self._writable = list(dict.fromkeys(str(variant) for path in writable
                                            for variant in (path.absolute(), path.resolve())))
        self._tmp = Path(tempfile.mkdtemp(prefix="hermes-sandbox-tmp-"))
        self._hidden = hidden_folders([sys.executable, sys.prefix, sys.base_prefix, *sys.path])

    def argv(self, script: str, *, pty: bool) -> list[str]:
        binds = [*(arg for path in self._hidden for arg in ("--ro-bind", path, path)),
                 *(arg for path in self._writable for arg in ("--bind", path, path))]
        # in its own session the shell has no terminal; setsid -c makes the pseudo-terminal its controlling one
        controlling_terminal = [self._setsid, "-w", "-c"] if pty and self._setsid else []
        return [self._bwrap, *_ISOLATION, *(["--share-net"] if self._network else []),
                "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", str(self._tmp), "/tmp",
                *binds, "--setenv", "TMPDIR", "/tmp", "--",
                *controlling_terminal, self._shell, "-c", script]

    @contextlib.contextmanager
    def stage(self, files: Mapping[str, str], *, sockets: Iterable[str] = ()) -> Iterator[Staged]:
        """A folder in the sandbox's private ``/tmp``, where a socket bound on the host is reachable inside."""
        folder = Path(tempfile.mkdtemp(prefix="stage-", dir=self._tmp))
        try:
            for name, text in files.items():
                (folder / name).write_text(text, encoding="utf-8")
            yield Staged(f"/tmp/{folder.name}", folder)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def close(self) -> None:
        shutil.rmtree(self._tmp, ignore_errors=True)

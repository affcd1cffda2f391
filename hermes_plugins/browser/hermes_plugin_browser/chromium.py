"""Finding Chromium and deciding how it runs: with its own sandbox, under bubblewrap, or (opted in) without.

Chromium refuses to run as root with its sandbox, and never should run as root without it: as root, it runs
under bubblewrap in a user namespace where it is an ordinary user, so its own sandbox (namespaces and
seccomp) still holds inside. Nothing is downloaded: the browser is the system's.
"""

from __future__ import annotations

import functools
import os
import shlex
import shutil
import stat
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from .settings import BrowserSettings

__all__ = ["INSTALL_COMMAND", "ChromiumNotFound", "LaunchPlan", "find_chromium", "plan_launch"]

NAMES: Final = ("chromium", "chromium-browser", "google-chrome")
INSTALL_COMMAND: Final = "sudo apt-get install chromium"
#: The unprivileged user Chromium is inside the bubblewrap user namespace.
SANDBOX_UID: Final = 1000


class ChromiumNotFound(Exception):
    """No Chromium to start (or it cannot be started safely here); the message says what to do."""


@dataclass(frozen=True)
class LaunchPlan:
    """How Chromium is started: the program Playwright runs, and whether Chromium's sandbox is on."""

    executable: str  #: what Playwright starts (a bubblewrap wrapper script, or Chromium itself)
    chromium: str  #: the Chromium binary
    sandbox: str  #: ``bwrap+chromium`` (its own, inside bubblewrap), ``chromium`` (its own) or ``off``


def find_chromium(configured: str | None = None) -> str:
    """The Chromium to start: ``browser.executable`` or the first of :data:`NAMES` on PATH."""
    if configured:
        found = shutil.which(configured)
        if found is None:
            raise ChromiumNotFound(f"browser.executable {configured!r} is not an executable file")
        return found
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    raise ChromiumNotFound(f"no Chromium found on PATH (looked for {', '.join(NAMES)}); install it: "
                           f"{INSTALL_COMMAND} (Debian, Ubuntu), or set browser.executable in config.yaml")


def plan_launch(settings: BrowserSettings, scratch: Path) -> LaunchPlan:
    """How to start Chromium, its temporary files (the profile) in ``scratch``; raises :class:`ChromiumNotFound`.

    ``auto`` runs Chromium under bubblewrap where bubblewrap works, else with its own sandbox alone (not as root,
    where Chromium cannot have one)."""
    chromium = _real_binary(find_chromium(settings.executable))
    if settings.sandbox == "off":
        return LaunchPlan(chromium, chromium, "off")
    problem = bwrap_problem() if settings.sandbox != "chromium" else "browser.sandbox is chromium"
    if problem is None:
        wrapper = scratch / "chromium-in-bwrap"
        wrapper.write_text(_wrapper_script(shutil.which("bwrap") or "bwrap", chromium, scratch), encoding="utf-8")
        wrapper.chmod(stat.S_IRWXU)
        return LaunchPlan(str(wrapper), chromium, "bwrap+chromium")
    if settings.sandbox != "bwrap" and euid() != 0:
        return LaunchPlan(chromium, chromium, "chromium")
    raise ChromiumNotFound(
        f"Chromium's sandbox cannot run as root, and bubblewrap, which would run it as an ordinary user, cannot "
        f"({problem}): run Hermes as another user, or set browser.sandbox: off to run Chromium without its "
        "sandbox (only for pages you trust)" if euid() == 0 else f"browser.sandbox is bwrap, but {problem}")


@functools.cache
def bwrap_problem() -> str | None:
    """Why Chromium cannot run under bubblewrap here (tried once per process), or None."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap (bwrap) is not installed (sudo apt-get install bubblewrap)"
    try:
        result = subprocess.run([bwrap, "--unshare-user", "--ro-bind", "/", "/", "--", "true"], capture_output=True,
                                text=True, stdin=subprocess.DEVNULL, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap cannot be run: {exc}"
    if result.returncode != 0:
        return f"bubblewrap cannot create a user namespace here ({result.stderr.strip() or result.returncode})"
    return None


def _wrapper_script(bwrap: str, chromium: str, scratch: Path) -> str:
    # The system read-only; `scratch` (the profile's folder, at the same path as outside) the only writable folder
    # beside a /tmp of its own in memory (TMPDIR: the profile's lock socket needs a short path); new user (an
    # ordinary user inside: Chromium's own sandbox then works, as root too), pid, ipc and uts namespaces. The
    # network is shared: the guard filters it. Playwright talks to Chromium over fds 3 and 4, which bubblewrap
    # passes through.
    args = [bwrap, "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--unshare-pid",
            "--unshare-ipc", "--unshare-uts", "--die-with-parent", "--new-session", "--ro-bind", "/", "/",
            "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--bind", str(scratch), str(scratch),
            "--setenv", "HOME", str(scratch), "--setenv", "TMPDIR", "/tmp", "--", chromium]
    return "#!/bin/sh\nexec " + " ".join(shlex.quote(arg) for arg in args) + ' "$@"\n'


def _real_binary(path: str) -> str:
    """Debian's ``chromium`` is a shell launcher; start the binary it starts (found beside its library folder)."""
    resolved = Path(path).resolve()
    binary = resolved.parent.parent / "lib" / "chromium" / "chromium"
    if _is_script(resolved) and binary.is_file() and os.access(binary, os.X_OK):
        return str(binary)
    return str(resolved)


def _is_script(path: Path) -> bool:
    try:
        with path.open("rb") as file:
            return file.read(2) == b"#!"
    except OSError:
        return False


def euid() -> int:
    return os.geteuid() if hasattr(os, "geteuid") else 1  # Windows: no root, Chromium's sandbox applies

"""How ``execute_code`` keeps a script away from the agent: which isolation applies on a backend, and the
agent-side half of it (bubblewrap probed once; the agent process made non-dumpable where there is none)."""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from typing import Final

from .launcher import make_undumpable

__all__ = ["describe", "local_isolation", "protect_agent_process"]

_PROBE_SECONDS: Final = 20
#: Backends whose commands already run in a PID namespace of their own.
_NAMESPACED: Final = frozenset({"sandbox"})


@functools.cache
def _bwrap() -> str | None:
    """The bubblewrap that can make a PID namespace here (tried once per process), or None."""
    bwrap = shutil.which("bwrap")
    if bwrap is None or not sys.platform.startswith("linux"):
        return None
    try:
        probe = subprocess.run([bwrap, "--die-with-parent", "--unshare-pid", "--dev-bind", "/", "/", "--proc",
                                "/proc", "--", "true"], capture_output=True, timeout=_PROBE_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return bwrap if probe.returncode == 0 else None


def local_isolation(backend: str) -> tuple[str, str | None]:
    """``(mode, bwrap)`` for a script run on ``backend``: ``bwrap`` on this machine when it works, else
    ``session`` (on the sandbox backend and remote machines too: the launcher runs where the script does)."""
    if backend == "local" and (bwrap := _bwrap()) is not None:
        return "bwrap", bwrap
    return "session", None


@functools.cache
def protect_agent_process() -> bool:
    """Make this (the agent's) process non-dumpable, so a script of the same user cannot read its
    ``/proc/<pid>/environ`` or ``/proc/<pid>/mem`` (Linux; once per process). True when it applies."""
    return make_undumpable()


def describe(backend: str) -> str:
    """What protects the agent from scripts on ``backend``, for ``hermes plugins doctor``."""
    allow = "environment from an allow-list (PATH, LANG, LC_*, TZ, TERM... plus settings.env_passthrough), HOME a " \
            "scratch folder"
    if backend in _NAMESPACED:
        return f"scripts run in the {backend} backend's PID namespace; {allow}"
    if backend != "local":
        return (f"scripts run on the {backend} backend's machine, in a session of their own that is killed with "
                f"everything it started; {allow}")
    if shutil.which("bwrap") and sys.platform.startswith("linux"):
        return (f"bubblewrap found: scripts run in a PID namespace of their own (the agent's processes are not "
                f"visible; everything a script starts dies with it); {allow}")
    protection = "the agent process is made non-dumpable (prctl)" if sys.platform.startswith("linux") else \
        "the agent process's memory is not protected on this platform"
    return (f"no bubblewrap: {protection}, and each script's session and every process carrying its run marker "
            f"are killed when it ends; {allow}")

"""Staged beside each ``execute_code`` script and run in its place (standard library only: it runs wherever the
script does). It gives the script an environment built from an allow-list, a scratch ``HOME``, and makes sure
nothing the script started outlives it:

- ``bwrap`` mode: the script runs in a bubblewrap PID namespace with its own ``/proc`` (the agent's processes
  are not visible), which the kernel empties when the script ends or bubblewrap is killed;
- ``session`` mode: the launcher re-executes itself with the clean environment, makes itself non-dumpable,
  runs the script in a session of its own, and when the script ends (or the launcher is told to stop) kills
  that session and every process still carrying this run's marker in its environment (``setsid`` children
  and double-forked daemons included; found through ``/proc`` where there is one).

Usage: python launcher.py MODE KEEP MARKER SCRIPT [BWRAP]   (KEEP: comma-separated extra variable names)
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys

#: Variables a script gets from the agent's environment; any other is left out (credentials above all).
ALLOWED = frozenset({"PATH", "LANG", "LANGUAGE", "TZ", "TERM", "TMPDIR", "USER", "LOGNAME", "PYTHONUNBUFFERED",
                     "PYTHONDONTWRITEBYTECODE", "PYTHONIOENCODING", "PYTHONUTF8", "NO_COLOR", "COLUMNS", "LINES"})
MARKER_VARIABLE = "HERMES_EXECUTE_CODE_RUN"
_SUPERVISE = "--supervise"


def clean_environment(keep: set[str], marker: str, home: str) -> dict[str, str]:
    """The allow-listed variables of this process, ``keep`` ones too, a scratch ``HOME`` and the run marker."""
    env = {name: value for name, value in os.environ.items()
           if name in ALLOWED or name in keep or name.startswith("LC_")}
    env.update(HOME=home, **{MARKER_VARIABLE: marker})
    return env


def make_undumpable() -> bool:
    """Make this process's memory and environment unreadable to other processes of the user (Linux: prctl
    PR_SET_DUMPABLE 0); True when it applies."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) == 0  # PR_SET_DUMPABLE = 4
    except (OSError, AttributeError):
        return False


def _marked(marker: str) -> list[int]:
    """The processes of this user whose environment carries ``marker`` (none where there is no ``/proc``)."""
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    found = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as file:
                if needle in file.read().split(b"\0"):
                    found.append(int(entry))
        except OSError:
            continue
    return found


def _kill_run(session: int, marker: str) -> None:
    for _ in range(3):  # what was forking while the first pass killed is caught by the next
        with contextlib.suppress(OSError):
            os.killpg(session, signal.SIGKILL)
        pids = _marked(marker)
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        if not pids:
            return


def _supervise(marker: str, script: str) -> int:
    make_undumpable()
    child = subprocess.Popen([sys.executable, script], start_new_session=True)

    def stop(signum: int, frame: object) -> None:
        _kill_run(child.pid, marker)
        os._exit(128 + signum)

    for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(signum, stop)
    code = child.wait()
    _kill_run(child.pid, marker)
    return code


def main(argv: list[str]) -> int:
    if argv[0] == _SUPERVISE:
        return _supervise(argv[1], argv[2])
    mode, keep, marker, script = argv[:4]
    home = os.path.join(os.path.dirname(os.path.abspath(script)), "home")
    os.makedirs(home, exist_ok=True)
    env = clean_environment({name for name in keep.split(",") if name}, marker, home)
    if mode == "bwrap":
        bwrap = argv[4]
        os.execve(bwrap, [bwrap, "--die-with-parent", "--unshare-pid", "--dev-bind", "/", "/", "--proc", "/proc",
                          "--", sys.executable, script], env)
    os.execve(sys.executable, [sys.executable, os.path.abspath(__file__), _SUPERVISE, marker, script], env)
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""``hermes tools call`` at a terminal (a real pseudo-terminal): ``clarify`` prompts and takes the answer, a long
``terminal`` call draws its progress on one line; piped, questions are refused with the reason and nothing is
drawn."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hermes_core.authoring.testing import scaled_timeout

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="pseudo-terminals and the terminal pack's bash")
CLARIFY = json.dumps({"question": "Which database?", "choices": ["sqlite", "postgres"]})
LINES = json.dumps({"command": "for i in 1 2 3 4 5 6; do echo line $i; sleep 0.3; done"})


@pytest.fixture
def environment(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("plugins:\n  enabled: [agent, terminal]\n")
    return {**os.environ, "HERMES_HOME": str(home),
            "PYTHONPATH": support.pack_path(tmp_path, ("agent", "terminal"))}


def at_a_terminal(args: list[str], env: dict[str, str], typed: bytes = b"") -> str:
    """What ``hermes`` wrote to a pseudo-terminal (stdout and stderr), after ``typed`` was typed into it."""
    import pty
    import select

    pid, fd = pty.fork()
    if pid == 0:  # the child: hermes, on the pseudo-terminal
        os.execve(support.hermes_command()[0], [*support.hermes_command(), *args], env)
    written = b""
    if typed:
        os.write(fd, typed)
    deadline = scaled_timeout(60)
    while True:
        ready, _, _ = select.select([fd], [], [], deadline)
        if not ready:
            os.kill(pid, 9)
            raise AssertionError(f"hermes wrote nothing for {deadline:g} s: {written!r}")
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the child is gone
            break
        if not chunk:
            break
        written += chunk
    os.waitpid(pid, 0)
    return written.decode("utf-8", "replace")


def test_clarify_prompts_at_a_terminal_and_takes_the_pick(environment):
    shown = at_a_terminal(["tools", "call", "clarify", CLARIFY], environment, typed=b"2\n")
    assert "Which database?" in shown and "1. sqlite" in shown and "2. postgres" in shown
    result = json.loads(shown[shown.index('{"question"'):].splitlines()[0])
    assert result["user_response"] == "postgres"


def test_clarify_piped_is_refused_with_the_reason(environment):
    done = subprocess.run([*support.hermes_command(), "tools", "call", "clarify", CLARIFY], env=environment,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=scaled_timeout(60))
    assert done.returncode == 1
    assert "asks the user only when its input is a terminal" in json.loads(done.stdout)["error"]


def test_a_long_call_draws_its_progress_at_a_terminal_and_nothing_when_piped(environment):
    shown = at_a_terminal(["tools", "call", "terminal", LINES], environment)
    assert "\r\x1b[K" in shown and "terminal: " in shown and "line 6" in shown
    done = subprocess.run([*support.hermes_command(), "tools", "call", "terminal", LINES], env=environment,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=scaled_timeout(60))
    assert done.returncode == 0 and json.loads(done.stdout)["output"].count("line") == 6
    assert "\x1b" not in done.stderr and "terminal: " not in done.stderr

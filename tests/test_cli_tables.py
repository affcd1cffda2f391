"""Listings as tables: a header row, columns fitted to the terminal with ``…`` where a cell is cut, whole cells in a
pipe, and colour on a terminal only (none with ``NO_COLOR``). The terminal is a real pseudo-terminal."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from hermes_core.authoring.testing import scaled_timeout

HERMES = str(Path(sys.executable).with_name("hermes"))
ANSI = "\x1b["
LONG = "Echo the text back to the caller, with a description much longer than any narrow screen can hold"

MANIFEST = f"""\
name: demo
tools:
  - {{name: demo_echo, toolset: demo, description: "{LONG}", handler: .tools:echo}}
  - {{name: demo_keyed, toolset: demo, description: Needs a key, handler: .tools:echo, check: {{env: [DEMO_KEY]}}}}
"""


@pytest.fixture
def demo(plugins):
    plugins.folder("demo", MANIFEST, "")
    return plugins


def environment(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("NO_COLOR", "COLUMNS", "DEMO_KEY")}
    return {**env, **extra}


def on_terminal(*args: str, columns: int = 60, **env: str) -> str:
    """What ``hermes ARGS`` prints on a pseudo-terminal ``columns`` wide."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    process = subprocess.Popen([HERMES, *args], stdin=follower, stdout=follower, stderr=follower,
                               env=environment(**env))
    os.close(follower)
    output = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the other side is closed: the command ended
            break
        if not chunk:
            break
        output += chunk
    os.close(leader)
    assert process.wait(timeout=scaled_timeout(60)) == 0, output
    return output.decode().replace("\r\n", "\n")


def piped(*args: str, **env: str) -> str:
    result = subprocess.run([HERMES, *args], capture_output=True, text=True,
                            timeout=scaled_timeout(60), env=environment(**env))
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_a_listing_has_a_header_and_is_cut_to_the_terminal_with_an_ellipsis(demo):
    lines = on_terminal("tools", "list", "--all", NO_COLOR="1").splitlines()
    assert lines[0].split() == ["NAME", "TOOLSET", "DOES", "STATUS", "DESCRIPTION"]
    assert all(len(line) <= 60 for line in lines), lines
    [echo] = [line for line in lines if line.startswith("demo_echo")]
    assert echo.endswith("…") and LONG not in echo
    assert "unavailable: environment" in on_terminal("tools", "list", "--all", columns=200)


def test_a_pipe_gets_whole_cells_and_no_colour(demo):
    output = piped("tools", "list", "--all")
    assert LONG in output and "…" not in output and ANSI not in output
    assert output.splitlines()[0].split() == ["NAME", "TOOLSET", "DOES", "STATUS", "DESCRIPTION"]


def test_columns_sets_the_width_when_it_is_set(demo):
    lines = piped("tools", "list", COLUMNS="50").splitlines()
    assert all(len(line) <= 50 for line in lines) and lines[1].endswith("…")


def test_a_terminal_gets_colour_and_no_color_turns_it_off(demo):
    coloured = on_terminal("tools", "list", "--all")
    assert "\x1b[1mNAME" in coloured, "the header is bold"
    assert "\x1b[31munavailable" in coloured and "\x1b[32mavailable" in coloured
    plain = on_terminal("tools", "list", "--all", NO_COLOR="1")
    assert ANSI not in plain and "unavailable" in plain


@pytest.mark.parametrize("args", [("plugins", "list"), ("toolsets", "list"), ("tools", "list")])
def test_every_table_listing_starts_with_its_header(demo, args):
    header = piped(*args).splitlines()[0]
    assert header == header.upper() and header.split()[0] in ("ID", "NAME"), header

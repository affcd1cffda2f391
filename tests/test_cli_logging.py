"""`hermes -v`, `--log-level LEVEL` and HERMES_LOG_LEVEL show the logs of plugins and of Hermes on stderr (the
tutorial's hook logs each call at INFO); without them only warnings appear, as before."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from hermes_core.authoring.testing import scaled_timeout

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py

HOOKED = """
import json
import logging

log = logging.getLogger(__name__)


def register(ctx):
    log.debug("registering the logged plugin")
    ctx.register_tool(name="logged_echo", toolset="logged", schema={"description": "Echo"},
                      handler=lambda args, **kw: json.dumps(args))
    ctx.register_hook("post_tool_call", lambda tool_name, **kw: log.info("called %s", tool_name))
"""


def hermes(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*support.hermes_command(), *args], capture_output=True, text=True,
                          env={**os.environ, **env}, stdin=subprocess.DEVNULL, timeout=scaled_timeout(60))


@pytest.fixture
def logged(plugins):
    plugins.folder("logged", init=HOOKED)


@pytest.mark.parametrize("options, env", [
    (["-v"], {}), (["--log-level", "info"], {}), ([], {"HERMES_LOG_LEVEL": "INFO"}), (["-vv"], {}),
], ids=["-v", "--log-level", "HERMES_LOG_LEVEL", "-vv"])
def test_a_plugins_info_log_shows_on_stderr(logged, options, env):
    result = hermes(*options, "tools", "call", "logged_echo", '{"a": 1}', **env)

    assert result.returncode == 0, result.stderr
    assert "INFO hermes_plugins.logged: called logged_echo" in result.stderr
    assert '"a": 1' in result.stdout and "called" not in result.stdout
    assert ("DEBUG hermes_plugins.logged: registering the logged plugin" in result.stderr) == (options == ["-vv"])


def test_without_an_option_the_info_log_stays_quiet(logged):
    result = hermes("tools", "call", "logged_echo", "{}")

    assert result.returncode == 0 and "called logged_echo" not in result.stderr


def test_an_unknown_level_is_a_usage_error(logged):
    result = hermes("tools", "list", HERMES_LOG_LEVEL="chatty")

    assert result.returncode == 2 and "Invalid value for '--log-level'" in result.stderr
    assert "Traceback" not in result.stderr

"""OAuth 2.1 for remote MCP servers, against a local server that is its own authorization server (the MCP SDK's
server-side auth pieces, on 127.0.0.1): ``hermes mcp login`` registers, authorizes with PKCE (the browser step is a
script following the redirect) and keeps the tokens in $HERMES_HOME/mcp-tokens, mode 0600, not in config.yaml; a
call uses the token; an expired token is refreshed; a revoked or missing one says "run hermes mcp login NAME"."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_core.authoring.testing import scaled_timeout
from hermes_core.runtime import Runtime

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
SERVER = Path(__file__).resolve().parent / "fixtures" / "mcp" / "oauth_server.py"
#: The user's browser: fetches the authorization page, which redirects to Hermes' callback on 127.0.0.1.
BROWSER = "import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=60).read()"

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="file modes are POSIX")


@pytest.fixture
def guarded() -> Iterator[str]:
    """The OAuth-protected server's base address."""
    process = subprocess.Popen([sys.executable, str(SERVER)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        port = process.stdout.readline().strip()  # printed once it listens
        assert port.isdigit(), port
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=scaled_timeout(20))


def post(url: str) -> None:
    urllib.request.urlopen(urllib.request.Request(url, method="POST"), timeout=scaled_timeout(30)).read()


def stats(base: str) -> dict[str, int]:
    return json.loads(urllib.request.urlopen(f"{base}/test/stats", timeout=scaled_timeout(30)).read())


def configure(home: Path, base: str, **entry: Any) -> bytes:
    config = {"mcp_servers": {"guarded": {"url": f"{base}/mcp", "auth": "oauth", **entry}}}
    (home / "config.yaml").write_text(yaml.safe_dump(config))
    return (home / "config.yaml").read_bytes()


def hermes_cli(home: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "browser.py"
    script.write_text(BROWSER)
    env = {**os.environ, "HERMES_HOME": str(home), "BROWSER": f"{sys.executable} {script} %s"}
    return subprocess.run([*support.hermes_command(), "mcp", *args], env=env, capture_output=True, text=True,
                          timeout=scaled_timeout(120))


def call(home: Path) -> tuple[str, str | None]:
    """A call of the server's tool in a new runtime: its text, and the server's last error."""
    runtime = Runtime(home=home)
    try:
        runtime.load_plugins()
        runtime.start_mcp()
        text = runtime.handle_function_call("mcp__guarded__whoami", {})
        [status] = runtime.mcp.status() if runtime.mcp else []
        return text, status.last_error
    finally:
        runtime.close()


def tokens(home: Path) -> dict[str, Any]:
    return json.loads((home / "mcp-tokens" / "guarded.json").read_text())


def test_login_keeps_private_tokens_outside_config_yaml_and_a_call_uses_them(isolated_home, tmp_path, guarded):
    # Hermes Agent's oauth keys are accepted as they are
    config = configure(isolated_home, guarded, oauth={"client_name": "Hermes test", "scope": "mcp",
                                                      "redirect_port": 0, "timeout": 60})

    done = hermes_cli(isolated_home, tmp_path, "login", "guarded")

    assert done.returncode == 0, done.stderr
    assert "Signed in to MCP server guarded (1 tool)" in done.stdout
    assert f"{guarded}/authorize?" in done.stderr  # the address to open is shown too
    folder = isolated_home / "mcp-tokens"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for path in folder.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert (isolated_home / "config.yaml").read_bytes() == config
    assert tokens(isolated_home)["access_token"] not in config.decode()
    assert stats(guarded)["registrations"] >= 1 and stats(guarded)["sign_ins"] == 1

    text, error = call(isolated_home)

    assert text.startswith("client "), (text, error)


def test_an_expired_token_is_refreshed(isolated_home, tmp_path, guarded):
    configure(isolated_home, guarded)
    assert hermes_cli(isolated_home, tmp_path, "login", "guarded").returncode == 0
    before = tokens(isolated_home)
    expired = {**before, "expires_at": time.time() - 60}
    (isolated_home / "mcp-tokens" / "guarded.json").write_text(json.dumps(expired))
    post(f"{guarded}/test/expire")  # the server no longer takes the old access token either

    text, error = call(isolated_home)

    assert text.startswith("client "), (text, error)
    assert stats(guarded)["refreshes"] == 1
    after = tokens(isolated_home)
    assert after["access_token"] != before["access_token"] and after["expires_at"] > time.time()
    assert stat.S_IMODE((isolated_home / "mcp-tokens" / "guarded.json").stat().st_mode) == 0o600


def test_a_revoked_token_says_to_log_in_again(isolated_home, tmp_path, guarded):
    configure(isolated_home, guarded)
    assert hermes_cli(isolated_home, tmp_path, "login", "guarded").returncode == 0
    post(f"{guarded}/test/revoke")

    text, error = call(isolated_home)

    assert "run hermes mcp login guarded" in (error or "")
    assert "run hermes mcp login guarded" in text
    assert stats(guarded)["sign_ins"] == 1  # a connection never starts a sign-in itself


def test_without_a_token_a_call_says_to_log_in_and_logout_forgets_the_tokens(isolated_home, tmp_path, guarded):
    configure(isolated_home, guarded)

    text, error = call(isolated_home)
    assert "needs a sign-in" in (error or "") and "run hermes mcp login guarded" in text

    assert hermes_cli(isolated_home, tmp_path, "login", "guarded").returncode == 0
    out = hermes_cli(isolated_home, tmp_path, "logout", "guarded")
    assert out.returncode == 0 and "Signed out of MCP server guarded" in out.stdout
    assert list((isolated_home / "mcp-tokens").iterdir()) == []
    assert "run hermes mcp login guarded" in call(isolated_home)[0]


def test_login_refuses_a_server_that_does_not_use_oauth(isolated_home, tmp_path, guarded):
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {
        "plain": {"url": f"{guarded}/mcp"}, "local": {"command": "true"}}}))

    plain = hermes_cli(isolated_home, tmp_path, "login", "plain")
    local = hermes_cli(isolated_home, tmp_path, "login", "local")
    missing = hermes_cli(isolated_home, tmp_path, "login", "nope")

    assert plain.returncode != 0 and "add `auth: oauth`" in plain.stderr
    assert local.returncode != 0 and "OAuth is for servers reached by URL" in local.stderr
    assert missing.returncode != 0 and "no MCP server 'nope'" in missing.stderr

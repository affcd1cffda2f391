"""A script cannot reach the agent: its environment is an allow-list, it cannot read the agent process's
``/proc/<pid>/environ`` or ``/proc/<pid>/mem``, and nothing it starts (a ``setsid`` child, a double-forked
daemon) outlives it, at a timeout or a normal exit. Both ways of isolation run where they can: the bubblewrap
PID namespace, and the launcher's session tracking with the agent made non-dumpable."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_code import isolation
from hermes_plugin_code.run import Limits, run_code

from hermes_core.backends import LocalBackend

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and prctl are Linux's")

TIMEOUT = 120 * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE", "1"))
LEAKY = {"DATABASE_URL": "postgres://u:pw@db/x", "GITHUB_PAT": "ghp_secret", "SENTRY_DSN": "https://k@s/1",
         "DB_PASS": "pw", "MYSQL_PWD": "pw", "REDIS_URL": "redis://:pw@r", "KUBECONFIG": "/k/config",
         "OPENAI_API_KEY": "sk-secret"}


@pytest.fixture(params=["bwrap", "session"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each isolation; ``session`` is forced by hiding bubblewrap (the fallback where it is missing)."""
    if request.param == "bwrap":
        if isolation.local_isolation("local")[0] != "bwrap":
            pytest.skip("bubblewrap cannot make a PID namespace here")
    else:
        monkeypatch.setattr(isolation, "_bwrap", lambda: None)
    return request.param


def run(code: str, tmp_path: Path, passthrough: tuple[str, ...] = (), **limits: Any) -> dict[str, Any]:
    return run_code(textwrap.dedent(code), dispatch=lambda name, args: "", tool_names=[], limits=Limits(**limits),
                    backend=LocalBackend(), cwd=str(tmp_path), env_passthrough=passthrough)


def test_the_environment_is_an_allow_list_with_a_scratch_home(tmp_path, monkeypatch, mode) -> None:
    for name, value in LEAKY.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("LC_TIME", "C")
    monkeypatch.setenv("HERMES_TEST_NAMED", "passed")
    result = run("import json, os; print(json.dumps(dict(os.environ)))", tmp_path, passthrough=("HERMES_TEST_NAMED",))
    assert result["status"] == "ok", result
    env = json.loads(result["output"])
    assert not set(LEAKY) & set(env), sorted(env)
    assert env["PATH"] == os.environ["PATH"] and env["LC_TIME"] == "C" and env["HERMES_TEST_NAMED"] == "passed"
    assert env["HOME"] != os.path.expanduser("~") and env["HOME"].endswith("/home")


SNOOPER = """
import os
found = []
for target in [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        with open(f"/proc/{target}/environ", "rb") as file:
            if SECRET.encode() in file.read():
                found.append((int(target), "environ"))
        with open(f"/proc/{target}/maps") as maps:  # the environment block lies at the top of the stack
            stack = next(line.split()[0] for line in maps if line.rstrip().endswith("[stack]"))
        start, end = (int(part, 16) for part in stack.split("-"))
        with open(f"/proc/{target}/mem", "rb") as mem:
            mem.seek(start)
            if SECRET.encode() in mem.read(end - start):
                found.append((int(target), "mem"))
    except (OSError, StopIteration, ValueError):
        pass
print(found)
"""
AGENT = """
import ctypes, json, sys, tempfile
from hermes_plugin_code import isolation
from hermes_plugin_code.run import Limits, run_code
from hermes_core.backends import LocalBackend

if sys.argv[1] == "session":
    isolation._bwrap = lambda: None  # the fallback where bubblewrap is missing
script = f"SECRET = {sys.argv[2]!r}\\n" + sys.argv[3]
result = run_code(script, dispatch=lambda n, a: "", tool_names=[], limits=Limits(), backend=LocalBackend(),
                  cwd=tempfile.gettempdir())
print(json.dumps({"result": result, "dumpable": ctypes.CDLL(None).prctl(3, 0, 0, 0, 0)}))  # PR_GET_DUMPABLE
"""


def test_the_script_cannot_read_the_agents_environment_or_memory(mode) -> None:
    secret = secrets.token_hex(8)
    pack = Path(isolation.__file__).resolve().parent.parent
    env = {**os.environ, "HERMES_TEST_AGENT_SECRET": secret,  # in the agent's environ, as a real key would be
           "PYTHONPATH": os.pathsep.join(filter(None, [str(pack), os.environ.get("PYTHONPATH")]))}
    agent = subprocess.run([sys.executable, "-c", AGENT, mode, secret, SNOOPER], env=env, capture_output=True,
                           text=True, timeout=TIMEOUT)
    assert agent.returncode == 0, agent.stderr
    report = json.loads(agent.stdout.strip().splitlines()[-1])
    assert report["result"]["status"] == "ok", report
    found = report["result"]["output"]
    if mode == "bwrap":  # its own /proc: the agent is not there to read
        assert found == "[]\n"
    else:
        assert report["dumpable"] == 0  # the agent's /proc files now belong to root
        if os.geteuid() != 0:  # root reads them anyway (CAP_SYS_PTRACE), and tests may run as root
            assert found == "[]\n"


def alive(token: str) -> list[int]:
    """Processes whose command line holds ``token`` (seen from outside any PID namespace)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def gone(token: str) -> bool:
    """True once no process holds ``token``; polls, since kills are delivered asynchronously (bounded)."""
    deadline = time.monotonic() + 20
    while alive(token):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


ESCAPERS = """
    import os, subprocess, sys, time
    token = {token!r}
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)", token + "-setsid"],
                     start_new_session=True)
    if os.fork() == 0:  # a classic daemon: fork, setsid, fork again
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(600)", token + "-daemon"])
        os._exit(0)
    os.wait()
    print("started", flush=True)
"""


def test_setsid_children_and_daemons_die_when_the_script_ends(tmp_path, mode) -> None:
    token = f"hermes-escape-{secrets.token_hex(6)}"
    result = run(ESCAPERS.format(token=token), tmp_path)
    assert result["status"] == "ok", result
    assert gone(token), alive(token)


def test_setsid_children_and_daemons_die_at_the_timeout(tmp_path, mode) -> None:
    token = f"hermes-escape-{secrets.token_hex(6)}"
    result = run(ESCAPERS.format(token=token) + "\n    time.sleep(600)\n", tmp_path, timeout=5)
    assert result["status"] == "timeout", result
    assert gone(token), alive(token)


def test_doctor_note_says_which_isolation_applies() -> None:
    assert "PID namespace" in isolation.describe("sandbox")
    assert "allow-list" in isolation.describe("local")


def test_the_availability_check_carries_the_note_doctor_shows() -> None:
    from hermes_plugin_code.checks import platform_supported

    assert platform_supported() == isolation.describe("local")

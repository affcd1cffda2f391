"""Published Hermes Agent plugins that reach for Hermes Agent's internals, installed from the package index
(pinned, each into a fresh venv) and used through the compatibility shims: capsule's config.yaml set-up, hermes-ssh's
approvals against a real sshd on 127.0.0.1, telegram-reactions' gateway check, hookdeck's messaging platform,
delegate-routing's warning without the agent pack, and incontext's refusal. ``make compat`` (scripts/compat.py)
measures the whole pinned list."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.network, pytest.mark.slow]



@pytest.fixture(scope="session")
def published(published_plugin):
    """``published(plugin_id)``: the plugin's venv, with the terminal pack (its classifier answers approvals)."""
    return lambda plugin_id: published_plugin(plugin_id, "terminal")


def run(venv: Any, code: str, **env: str) -> dict:
    """Run ``code`` in ``venv``; it fills ``out``, which comes back as JSON."""
    prelude = "import json, os, sys, threading, time\nimport hermes_core\nout = {}\n"
    return venv.json(prelude + code + "\nprint(json.dumps(out))\n", env=env, timeout=300)


CAPSULE = '''
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
events = []

class Capsule(BaseHTTPRequestHandler):
    def do_POST(self):
        hook = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["hook"]
        events.append([self.path, self.headers.get("Authorization"), hook["hook_event_name"], hook.get("tool_name"),
                       hook["cwd"]])
        blocked = hook["hook_event_name"] == "pre_tool_call" and hook.get("tool_name") == "forbidden_tool"
        body = json.dumps({"block": blocked, "blockReason": "capsule says no"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

server = ThreadingHTTPServer(("127.0.0.1", 0), Capsule)
threading.Thread(target=server.serve_forever, daemon=True).start()
rt = hermes_core.Runtime()
rt.load_plugins()
out["unconfigured"] = [rt.plugin("capsule").state, rt.plugin("capsule").hooks, rt.plugin("capsule").warnings]
with open(os.path.join(os.environ["HERMES_HOME"], "config.yaml"), "w") as config:
    config.write("plugins:\\n  entries:\\n    capsule:\\n"
                 f"      endpoint: http://127.0.0.1:{server.server_address[1]}\\n      token: capsule-token\\n")
rt = hermes_core.Runtime()
rt.load_plugins()
out["configured"] = [rt.plugin("capsule").state, rt.plugin("capsule").hooks]
for name in ("allowed_tool", "forbidden_tool"):
    rt.register_tool(name, "host", {"description": name, "parameters": {"type": "object", "properties": {}}},
                     lambda args, **kw: json.dumps({"ran": True}))
out["allowed"] = json.loads(rt.handle_function_call("allowed_tool", {}, session_id="s-1", task_id="t-1"))
out["forbidden"] = json.loads(rt.handle_function_call("forbidden_tool", {}, session_id="s-1", task_id="t-1"))
deadline = time.monotonic() + 30
while sum(e[2] == "post_tool_call" for e in events) < 2 and time.monotonic() < deadline:
    time.sleep(0.05)  # capsule posts its observations from threads of its own
out["events"] = sorted(map(tuple, events))
out["cwd"] = os.getcwd()
'''


def test_capsules_config_yaml_set_up_registers_its_hooks_and_they_fire(published, isolated_home):
    out = run(published("capsule"), CAPSULE)
    state, hooks, warnings = out["unconfigured"]
    assert (state, hooks) == ("loaded", [])  # and not silent: its own warning is on the record
    assert any("endpoint missing" in warning for warning in warnings)
    state, hooks = out["configured"]  # plugins.entries.capsule, read through hermes_cli.config's cfg_get
    assert state == "loaded" and {"pre_tool_call", "post_tool_call", "on_session_start"} <= set(hooks)
    assert out["allowed"] == {"ran": True}
    assert out["forbidden"] == {"error": "capsule says no"}
    assert {(path, auth, cwd) for path, auth, _, _, cwd in out["events"]} == {
        ("/v1/hermes/hooks/events", "Bearer capsule-token", out["cwd"])}  # cwd: agent.runtime_cwd's workspace
    assert sorted((hook, tool) for _, _, hook, tool, _ in out["events"]) == [
        ("post_tool_call", "allowed_tool"), ("post_tool_call", "forbidden_tool"),
        ("pre_tool_call", "allowed_tool"), ("pre_tool_call", "forbidden_tool")]


SSH = '''
asked = []
rt = hermes_core.Runtime()
rt.load_plugins()
rt.set_approval_callback(lambda request: asked.append(request.message) or os.environ["ANSWER"])
out["record"] = [rt.plugin("hermes-ssh").state, rt.plugin("hermes-ssh").tools]
out["added"] = json.loads(rt.handle_function_call("ssh_machines", {
    "action": "add", "name": "local", "host": "127.0.0.1", "port": int(os.environ["SSH_PORT"]),
    "user": os.environ["SSH_USER"], "key": os.environ["SSH_KEY"]}))
out["safe"] = json.loads(rt.handle_function_call("ssh_terminal", {"machine": "local", "command": "echo over-ssh"}))
out["dangerous"] = json.loads(rt.handle_function_call("ssh_terminal", {
    "machine": "local", "command": "rm -r " + os.environ["VICTIM"]}, session_id="s-1"))
out["again"] = json.loads(rt.handle_function_call("ssh_terminal", {
    "machine": "local", "command": "rm -r " + os.environ["VICTIM"] + "-2"}, session_id="s-1"))
out["asked"] = asked
out["victim_exists"] = [os.path.exists(os.environ["VICTIM"]), os.path.exists(os.environ["VICTIM"] + "-2")]
'''


@pytest.mark.parametrize("answer", ["once", "session", "deny"])
def test_hermes_ssh_asks_through_hermes_approvals_and_runs_over_a_real_sshd(published, isolated_home, sshd,
                                                                           tmp_path: Path, request, answer):
    # hermes-ssh keeps its machines and control sockets under ~/.hermes/ssh-tools: a short home, since a socket's
    # path must stay under 108 bytes
    home = Path(tempfile.mkdtemp(prefix="hs-"))
    request.addfinalizer(lambda: shutil.rmtree(home, ignore_errors=True))
    wrappers = tmp_path / "bin"  # OpenSSH reads ~/.ssh from the account, not $HOME: pin known_hosts and config
    wrappers.mkdir()
    (wrappers / "ssh").write_text(f'#!/bin/sh\nexec {shutil.which("ssh")} -F {os.devnull} '
                                  f'-o UserKnownHostsFile={sshd.known_hosts} "$@"\n')
    (wrappers / "ssh").chmod(0o755)
    victim = tmp_path / "victim"
    for folder in (victim, tmp_path / "victim-2"):
        (folder / "inner").mkdir(parents=True)
    out = run(published("hermes-ssh"), SSH, HOME=str(home), PATH=f"{wrappers}{os.pathsep}{os.environ['PATH']}",
              ANSWER=answer, SSH_PORT=str(sshd.port), SSH_USER=sshd.user, SSH_KEY=str(sshd.identity_file),
              VICTIM=str(victim))
    assert out["record"] == ["loaded", ["ssh_terminal", "ssh_transfer", "ssh_machines", "ssh_sessions"]]
    assert "error" not in out["added"], out["added"]
    assert "over-ssh" in json.dumps(out["safe"]) and "error" not in out["safe"], out["safe"]
    question = out["asked"][0]  # the safe command was not asked about
    assert "deletes files recursively (rule 'recursive_delete')" in question and str(victim) in question
    # "session": remembered for the calls of session s-1, so the second command is not asked about
    assert len(out["asked"]) == (1 if answer == "session" else 2)
    if answer == "deny":
        assert "was not approved" in out["dangerous"]["error"] and "was not approved" in out["again"]["error"]
        assert out["victim_exists"] == [True, True]
    else:
        assert "error" not in out["dangerous"], out["dangerous"]
        assert "error" not in out["again"], out["again"]
        assert out["victim_exists"] == [False, False]  # ran on 127.0.0.1 over ssh


TELEGRAM = '''
rt = hermes_core.Runtime()
rt.load_plugins()
out["record"] = [rt.plugin("telegram-reactions").state, rt.plugin("telegram-reactions").tools]
out["check"] = list(rt.registry.check("set_reaction"))
out["call"] = json.loads(rt.handle_function_call("set_reaction", {"emoji": "fire"}))
'''


def test_telegram_reactions_is_unavailable_naming_the_gateway_it_lacks(published, isolated_home):
    out = run(published("telegram-reactions"), TELEGRAM)
    assert out["record"] == ["loaded", ["set_reaction"]]
    available, reason = out["check"]
    assert available is False
    assert reason == ("its check reported it unavailable: it needs Hermes Agent's messaging gateway with the "
                      "telegram platform configured, and Hermes runs no messaging gateway")
    assert out["call"]["error"] == f"Tool 'set_reaction' is unavailable: {reason}"


def test_hookdecks_platform_shows_as_registered_not_run_and_its_tools_load(published, isolated_home):
    venv = published("hookdeck")
    listed = venv.hermes_cli("plugins", "list", env={"COLUMNS": "250"})
    assert "messaging platforms: hookdeck (registered, not run: Hermes runs no messaging gateway)" in listed.stdout
    [row] = [r for r in json.loads(venv.hermes_cli("plugins", "list", "--json").stdout) if r["id"] == "hookdeck"]
    assert (row["state"], row["platforms"]) == ("loaded", ["hookdeck"])
    assert "hookdeck_queue_status" in row["tools"]
    assert not any("Could not register" in warning for warning in row["warnings"])
    doctor = json.loads(venv.hermes_cli("plugins", "doctor", "--json").stdout)
    [checked] = [r for r in doctor["plugins"] if r["id"] == "hookdeck"]
    assert "messaging platform hookdeck: registered, not run: Hermes runs no messaging gateway" in checked["notes"]


def test_delegate_routing_shows_its_warning_instead_of_a_silent_loaded(published, isolated_home):
    venv = published("delegate_routing")  # (without the agent pack: no delegate_task to advertise its fields in)
    [row] = [r for r in json.loads(venv.hermes_cli("plugins", "list", "--json").stdout)
             if r["id"] == "delegate_routing"]
    assert row["state"] == "loaded"
    assert any("delegate_task not in registry; schema fields not advertised" in w for w in row["warnings"])
    assert not any("INACTIVE" in w for w in row["warnings"])  # tools.delegate_tool is there: it patched it
    listed = venv.hermes_cli("plugins", "list", env={"COLUMNS": "250"})
    line = next(line for line in listed.stdout.splitlines() if line.startswith("delegate_routing"))
    assert "loaded, 1 warning" in line
    assert "schema fields not advertised" not in listed.stderr  # what a plugin logs while loading stays in its record
    verbose = venv.hermes_cli("-v", "plugins", "list", env={"COLUMNS": "250"})
    assert "schema fields not advertised" in verbose.stderr  # ... and reaches the terminal with -v
    strict = venv.hermes_cli("plugins", "doctor", "--strict")
    assert strict.returncode == 1


def test_incontexts_refusal_names_the_hermes_agent_internal_behind_it(published, isolated_home):
    venv = published("incontext")
    [row] = [r for r in json.loads(venv.hermes_cli("plugins", "list", "--json").stdout) if r["id"] == "incontext"]
    assert row["state"] == "error"
    assert row["reason"].startswith("register() raised SettingsError: incontext must run inside the Hermes Agent "
                                    "Python environment, because it imports 'agent.context_compressor' (")
    assert "a Hermes Agent internal module that is not part of the plugin contract" in row["reason"]

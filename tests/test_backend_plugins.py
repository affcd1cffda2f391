"""Any plugin contributes execution backends: in code (``ctx.register_execution_backend``) or declared in its
manifest (imported on first use); config.yaml or the agent loop picks one per task; the approval gate comes first;
``plugins info``/``doctor`` list them; and the documented example plugin works installed from its wheel."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from hermes_core import Runtime
from hermes_core.plugins.discovery import candidate_from_module

RECORDING = '''\
from pathlib import Path

from hermes_core.backends import LocalBackend

LOG = Path(__file__).with_name("commands.txt")


class Recording(LocalBackend):
    """local, writing down every command it is handed."""

    def argv(self, script, *, pty):
        with LOG.open("a") as log:
            log.write(script.rsplit("\\n", 1)[-1] + "\\n")
        return super().argv(script, pty=pty)


def register(ctx):
    ctx.register_execution_backend("recording", Recording, description="local, with a record")
'''


#: Records every command it is handed and runs none of them (it runs ``true`` instead).
WITNESS = '''\
import json
from pathlib import Path

from hermes_core.backends import LocalBackend

LOG = Path(__file__).with_name("commands.jsonl")


class Witness(LocalBackend):
    """local, writing down every command and running none."""

    def run(self, command, **kwargs):
        with LOG.open("a") as log:
            log.write(json.dumps(command) + "\\n")
        return super().run("true", **kwargs)


def register(ctx):
    ctx.register_execution_backend("witness", Witness, description="records, runs nothing")
'''

#: The red team's examples of issue 45 (one per family, and the rest of the classifier's families' shapes).
RED_TEAM = [
    "docker --context prod run -v /:/h alpine rm -rf /h", "coproc rm -rf /", "sudo -s <<< 'rm -rf /'",
    "sudo -i <<< 'rm -rf /'", "su <<< 'rm -rf /'", "ex -sc '!rm -rf ~|q'", "rview -c '!rm -rf ~'",
    "cat <<EOF\n`rm -rf /`\nEOF", "git gc --prune=now", "rm -rf /./", "rm$IFS-rf$IFS/",
]


def handed(folder: Path) -> list[str]:
    """The commands the recording backend of the plugin in ``folder`` was handed."""
    log = folder / "commands.txt"
    return log.read_text().splitlines() if log.exists() else []


def with_terminal(runtime: Runtime) -> Runtime:
    assert runtime.load_candidate(candidate_from_module("hermes_plugin_terminal", "terminal")).state == "declared"
    return runtime


def terminal(runtime: Runtime, command: str, task: str = "t", **args: object) -> dict:
    return json.loads(runtime.handle_function_call("terminal", {"command": command, **args}, task_id=task))


def test_a_plugin_registers_a_backend_that_config_selects(plugins, isolated_home: Path) -> None:
    folder = plugins.folder("recorder", init=RECORDING)
    (isolated_home / "config.yaml").write_text("terminal:\n  backend: recording\n")
    runtime = with_terminal(plugins.runtime())
    runtime.load_plugins()
    assert runtime.contributions.backends["recording"].plugin == "recorder"
    assert terminal(runtime, "echo recorded")["output"] == "recorded\n"
    assert handed(folder) == ["echo recorded"]


def test_the_approval_gate_comes_before_any_backend_sees_the_command(plugins, isolated_home: Path) -> None:
    folder = plugins.folder("recorder", init=RECORDING)
    (isolated_home / "config.yaml").write_text("terminal:\n  backend: recording\napprovals:\n  mode: deny\n")
    runtime = with_terminal(plugins.runtime())
    runtime.load_plugins()
    assert terminal(runtime, "rm -rf build")["error"].startswith("Blocked: ")
    assert terminal(runtime, "echo safe")["output"] == "safe\n"
    assert handed(folder) == ["echo safe"]


def test_under_deny_none_of_the_red_teams_commands_reaches_the_backend(plugins, isolated_home: Path) -> None:
    folder = plugins.folder("witness", init=WITNESS)
    (isolated_home / "config.yaml").write_text("terminal:\n  backend: witness\napprovals:\n  mode: deny\n")
    runtime = with_terminal(plugins.runtime())
    runtime.load_plugins()
    refused = {command: terminal(runtime, command).get("error", "") for command in RED_TEAM}
    assert terminal(runtime, "echo safe")["exit_code"] == 0
    log = folder / "commands.jsonl"
    assert [json.loads(line) for line in log.read_text().splitlines()] == ["echo safe"]
    assert all(error.startswith(("Blocked: ", "Refused: ")) for error in refused.values()), refused


def test_the_agent_loop_picks_a_backend_per_task(plugins, isolated_home: Path) -> None:
    folder = plugins.folder("recorder", init=RECORDING)
    runtime = with_terminal(plugins.runtime())
    runtime.load_plugins()
    runtime.set_task_backend("audited", "recording")
    assert terminal(runtime, "echo one", task="audited")["output"] == "one\n"
    assert terminal(runtime, "echo two", task="plain")["output"] == "two\n"
    assert handed(folder) == ["echo one"]
    runtime.clear_task_backend("audited")
    terminal(runtime, "echo three", task="audited")
    assert handed(folder) == ["echo one"]


def test_a_declared_backend_is_imported_only_when_a_task_uses_it(plugins, isolated_home: Path) -> None:
    manifest = ("name: lazyback\ntools: []\nbackends:\n"
                "  - {name: lazy, description: imported late, factory: lazyback_pkg.impl:Lazy}\n")
    plugins.distribution("lazyback", "lazyback_pkg", manifest=manifest,
                         files={"impl.py": "from hermes_core.backends import LocalBackend\n\n\n"
                                           "class Lazy(LocalBackend):\n    name = 'lazy'\n"})
    runtime = with_terminal(plugins.runtime())
    runtime.load_plugins()
    record = runtime.plugin("lazyback")
    assert record is not None
    assert (record.state, plugins.imported("lazyback")) == ("declared", False)
    assert terminal(runtime, "echo local")["exit_code"] == 0
    assert not plugins.imported("lazyback")
    runtime.set_task_backend("t", "lazy")
    assert terminal(runtime, "echo lazy")["output"] == "lazy\n"
    assert plugins.imported("lazyback")


def test_a_second_plugin_cannot_take_over_a_backend_name(plugins) -> None:
    plugins.folder("first", init=RECORDING)
    plugins.folder("second", init=RECORDING)
    plugins.folder("builtin", init="def register(ctx):\n    ctx.register_execution_backend('local', print)\n")
    runtime = plugins.runtime()
    records = {record.id: record for record in runtime.load_plugins()}
    assert records["first"].state == "loaded"
    assert records["second"].reason == "register() raised ValueError: backend 'recording' is already provided " \
                                       "by plugin 'first'"
    assert "already provided by Hermes itself (built in)" in records["builtin"].reason
    assert runtime.contributions.backends["recording"].plugin == "first"


def test_an_unknown_or_failing_backend_is_an_error_never_local(plugins, isolated_home: Path, tmp_path: Path) -> None:
    plugins.folder("broken", init="def register(ctx):\n"
                                  "    def fail(setup):\n        raise OSError('no such device')\n"
                                  "    ctx.register_execution_backend('broken', fail)\n")
    runtime = with_terminal(plugins.runtime())
    runtime.load_plugins()
    runtime.set_task_backend("t", "nope")
    assert terminal(runtime, "touch ran")["error"] == (
        "no plugin provides the terminal backend 'nope' (terminal.backend in config.yaml; known backends: broken, "
        "local, sandbox)")
    runtime.set_task_backend("t", "broken")
    assert terminal(runtime, "touch ran")["error"] == (
        "the terminal backend 'broken' of plugin 'broken' failed to start: OSError: no such device")
    assert not (Path.cwd() / "ran").exists()


def test_invalid_terminal_config_names_the_key(isolated_home: Path) -> None:
    from hermes_core import ConfigError

    (isolated_home / "config.yaml").write_text("terminal:\n  backend: sandbox\n  sandbox: true\n")
    with pytest.raises(ConfigError, match=r"config.yaml:1: terminal: Value error, terminal.sandbox must be a mapping"):
        Runtime(home=isolated_home, entry_points=()).config  # noqa: B018


# -- installed from wheels: the example plugin, info and doctor ------------------------------------------------


@pytest.fixture(scope="module")
def venv(make_venv):
    env = make_venv("backends")
    env.install("hermes-tools-terminal", "hermes-tools-ssh", "hermes-backend-ulimit")
    return env


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "home").mkdir()
    return {"HERMES_HOME": str(tmp_path / "home")}


def write_config(home: dict[str, str], text: str) -> None:
    (Path(home["HERMES_HOME"]) / "config.yaml").write_text(text)


def test_the_example_plugin_installed_from_its_wheel_is_selected_by_config(venv, home, tmp_path: Path) -> None:
    write_config(home, "terminal:\n  backend: ulimit\n  ulimit: {max_file_mb: 1}\n")
    args = json.dumps({"command": "ulimit -f; head -c 3000000 /dev/zero > big.bin; echo status=$?; wc -c < big.bin"})
    result = venv.hermes_cli("tools", "call", "terminal", args, env=home, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    output = json.loads(result.stdout)["output"]
    assert output.startswith("1024\n") and "File size limit exceeded" in output
    assert output.endswith("status=153\n1048576\n")


def test_info_lists_a_plugins_backends_and_their_availability(venv, home) -> None:
    info = json.loads(venv.hermes_cli("plugins", "info", "ssh", "--json", env=home).stdout)
    assert info["backends"] == ["ssh"]
    assert info["backend_availability"] == [{"name": "ssh", "available": True, "reason": None, "selected": False,
                                             "description": info["backend_availability"][0]["description"]}]
    text = venv.hermes_cli("plugins", "info", "ulimit", env=home).stdout
    assert "  backend ulimit: available\n" in text
    listed = {row["id"]: row["backends"] for row in json.loads(venv.hermes_cli("plugins", "list", "--json",
                                                                                env=home).stdout)}
    assert listed == {"terminal": ["sandbox"], "ssh": ["ssh"], "ulimit": ["ulimit"]}


def test_doctor_says_why_the_sandbox_is_unavailable_and_fails_when_it_is_selected(venv, home,
                                                                                  tmp_path: Path) -> None:
    no_bwrap = tmp_path / "bin"
    no_bwrap.mkdir()
    (no_bwrap / "ssh").symlink_to(shutil.which("ssh") or "/usr/bin/ssh")
    env = {**home, "PATH": str(no_bwrap)}
    report = json.loads(venv.hermes_cli("plugins", "doctor", "--json", env=env).stdout)
    row = next(row for row in report["plugins"] if row["id"] == "terminal")
    assert any(n.startswith("backend sandbox unavailable: bubblewrap (bwrap) is not installed") for n in row["notes"])
    assert not any("sandbox" in p for p in row["problems"])

    write_config(home, "terminal:\n  backend: sandbox\n")
    strict = venv.hermes_cli("plugins", "doctor", "--strict", env=env)
    assert strict.returncode == 1
    assert "     - backend sandbox unavailable: bubblewrap (bwrap) is not installed" in strict.stdout


def test_doctor_flags_a_selected_backend_no_plugin_provides(venv, home) -> None:
    write_config(home, "terminal:\n  backend: docker\n")
    result = venv.hermes_cli("plugins", "doctor", "--strict", env=home)
    assert result.returncode == 1
    assert ("config: terminal.backend: no loaded plugin provides the backend 'docker' (known: local, sandbox, ssh, "
            "ulimit)") in result.stdout


def test_doctor_reports_user_namespaces_unavailable(venv, home, tmp_path: Path) -> None:
    # a machine without user namespaces, for real: doctor inside a sandbox that may create none
    if not shutil.which("bwrap"):
        pytest.skip("bubblewrap is not installed (.ci/run installs it)")
    command = [shutil.which("bwrap") or "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
               "--bind", str(tmp_path), str(tmp_path), "--unshare-user", "--disable-userns", "--unshare-pid",
               "--die-with-parent", "--", venv.hermes, "plugins", "info", "terminal"]
    result = venv.run(*command, env={**home, "PATH": os.environ["PATH"]})
    assert "  backend sandbox: unavailable: bubblewrap cannot create a sandbox here (bwrap: " in result.stdout
    assert "user namespaces" in result.stdout

"""The ``docker`` backend with a real container runtime (podman, see conftest.py): it keeps the backend contract,
commands run in the image, see the workspace and nothing else of this machine, have no network unless asked, and the
container lives as long as the runtime (even when Hermes is killed)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hermes_plugin_docker.backend import STAGE_PATH

from hermes_core import Runtime
from hermes_core.authoring.backend_contract import BackendContract
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.plugins.discovery import candidate_from_module

from .podman import OS_RELEASE, Podman

PLUGINS = (("hermes_plugin_terminal", "terminal"), ("hermes_plugin_docker", "docker"))


class TestDockerContract(BackendContract):
    backend = "docker"
    plugins = (("hermes_plugin_docker", "docker"),)

    @pytest.fixture
    def backend_settings(self, docker_settings: dict[str, Any]) -> dict[str, Any]:
        return docker_settings


@pytest.fixture
def runtime_of(hermes_home: Path, hermes_workspace: Path) -> Iterator[Any]:
    """``runtime_of(docker_settings, workspace=..., **config)``: a runtime whose terminal backend is docker; closed
    afterwards."""
    made: list[Runtime] = []

    def make(settings: dict[str, Any], workspace: Path = hermes_workspace, **config: Any) -> Runtime:
        document = {"terminal": {"backend": "docker", "docker": settings}, **config}
        (hermes_home / "config.yaml").write_text(yaml.safe_dump(document))
        runtime = Runtime(home=hermes_home, workspace=workspace, entry_points=())
        made.append(runtime)
        for module, plugin_id in PLUGINS:
            assert runtime.load_candidate(candidate_from_module(module, plugin_id)).state == "declared"
        return runtime

    yield make
    for runtime in made:
        runtime.close()


def terminal(runtime: Runtime, command: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(runtime.handle_function_call("terminal", {"command": command, **args},
                                                                     task_id="t"))
    return result


def run_options(podman: Podman, runtime: Runtime) -> list[str]:
    """The command line of the ``run`` that started the container of ``runtime``."""
    name = runtime.backends.get("t").container.name
    runs = [call for call in podman.calls() if call[0] == "run" and name in call]
    assert len(runs) == 1, runs
    return runs[0]


# -- done when: commands in the image, the workspace and nothing else, no network, no container left --------------


def test_commands_run_inside_the_image(runtime_of: Any, docker_settings: dict[str, Any]) -> None:
    runtime = runtime_of(docker_settings)
    assert terminal(runtime, "cat /etc/os-release")["output"] == OS_RELEASE
    assert terminal(runtime, "readlink /bin/sh")["output"] == "busybox\n"


def test_a_terminal_whose_runtime_turns_onlcr_back_on_still_ends_lines_with_newline(
        runtime_of: Any, docker_settings: dict[str, Any]) -> None:
    # conmon sets onlcr on the container's terminal when it receives it, which may come after the shell turned it
    # off: the command does here what conmon may do, so that the race's losing side is what is tested
    runtime = runtime_of(docker_settings)
    result = terminal(runtime, "stty onlcr; printf 'a\\nb\\n\\n'; sleep 0.1; printf 'c\\n'", pty=True)
    assert result["output"] == "a\nb\n\nc\n", result


def test_writes_land_in_the_workspace_and_the_workspace_is_seen_at_its_own_path(
        runtime_of: Any, docker_settings: dict[str, Any], hermes_workspace: Path) -> None:
    (hermes_workspace / "given.txt").write_text("from the host\n")
    runtime = runtime_of(docker_settings)
    result = terminal(runtime, "cat given.txt; echo made > made.txt; mkdir -p out && echo deep > out/x")
    assert (result["output"], result["cwd"]) == ("from the host\n", str(hermes_workspace))
    assert (hermes_workspace / "made.txt").read_text() == "made\n"
    assert (hermes_workspace / "out" / "x").read_text() == "deep\n"


def test_nothing_else_of_the_host_is_visible(runtime_of: Any, docker_settings: dict[str, Any], hermes_home: Path,
                                             host_home_entry: str | None, hermes_workspace: Path) -> None:
    runtime = runtime_of(docker_settings)
    hidden = [str(hermes_home / "config.yaml"), str(Path(__file__))]
    if host_home_entry:
        hidden.append(host_home_entry)
    for path in hidden:
        assert Path(path).exists()
        assert terminal(runtime, f"ls -d '{path}' 2>/dev/null || echo hidden")["output"] == "hidden\n", path
    listed = terminal(runtime, "ls /")["output"].split()
    assert set(listed) <= {"bin", "dev", "etc", "proc", "root", "run", "sys", "tmp", "var",
                           hermes_workspace.parts[1]}, listed
    # the workspace's parent folders are made for the mount, empty
    assert terminal(runtime, f"ls -A {hermes_workspace.parent}")["output"] == f"{hermes_workspace.name}\n"


class _Server:
    """A TCP server on every address of this machine that answers each connection with one line."""

    def __init__(self) -> None:
        self.socket = socket.create_server(("0.0.0.0", 0))
        self.port = self.socket.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self.socket.accept()
            except OSError:
                return
            with connection:
                connection.sendall(b"hello from the host\n")


@pytest.fixture
def host_server() -> Iterator[_Server]:
    server = _Server()
    yield server
    server.socket.close()


REACH = "gateway=$(ip route | awk '/default/ {{print $3}}'); nc -w 3 ${{gateway:-192.0.2.1}} {port} </dev/null"


def test_the_network_is_off_by_default(runtime_of: Any, docker_settings: dict[str, Any], podman: Podman,
                                       host_server: _Server) -> None:
    runtime = runtime_of(docker_settings)
    assert terminal(runtime, "ls /sys/class/net")["output"] == "lo\n"
    result = terminal(runtime, REACH.format(port=host_server.port))
    assert "hello" not in result["output"] and result["exit_code"] != 0
    options = run_options(podman, runtime)
    assert options[options.index("--network") + 1] == "none"


def test_network_true_gives_the_container_a_network(runtime_of: Any, docker_settings: dict[str, Any],
                                                    host_server: _Server) -> None:
    runtime = runtime_of({**docker_settings, "network": True})
    assert terminal(runtime, "ls /sys/class/net")["output"] != "lo\n"
    assert terminal(runtime, REACH.format(port=host_server.port))["output"] == "hello from the host\n"


def test_the_container_is_made_on_first_use_and_close_leaves_none(runtime_of: Any, docker_settings: dict[str, Any],
                                                                   podman: Podman) -> None:
    before = set(podman.containers())
    runtime = runtime_of(docker_settings)
    assert set(podman.containers()) == before
    started = terminal(runtime, "sleep 300", background=True)
    assert started["status"] == "running"
    assert terminal(runtime, "echo same container")["exit_code"] == 0
    made = set(podman.containers()) - before
    assert len(made) == 1 and next(iter(made)).startswith("hermes-")
    runtime.close()
    assert set(podman.containers()) == before


def test_a_killed_hermes_leaves_no_container(podman: Podman, docker_settings: dict[str, Any], tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "workspace"
    home.mkdir()
    workspace.mkdir()
    (home / "config.yaml").write_text(yaml.safe_dump({"terminal": {"backend": "docker", "docker": docker_settings}}))
    script = textwrap.dedent(f"""
        import json, os, sys
        from hermes_core import Runtime
        from hermes_core.plugins.discovery import candidate_from_module
        runtime = Runtime(home={str(home)!r}, workspace={str(workspace)!r}, entry_points=())
        for module, plugin_id in {PLUGINS!r}:
            runtime.load_candidate(candidate_from_module(module, plugin_id))
        print(runtime.handle_function_call("terminal", {{"command": "echo up"}}), flush=True)
        print(runtime.backends.get().container.name, flush=True)
        sys.stdin.read()
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}  # the packs, as this test imports them
    child = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                             env=env)
    try:
        assert child.stdout is not None
        assert json.loads(child.stdout.readline())["output"] == "up\n"
        name = child.stdout.readline().strip()
        assert name in podman.containers()
    finally:
        child.kill()  # SIGKILL: no clean-up of Hermes's runs
        child.wait()
    deadline = time.monotonic() + scaled_timeout(30)
    while name in podman.containers():
        assert time.monotonic() < deadline, f"container {name} outlived the Hermes that made it"
        time.sleep(0.2)


# -- the run's options ---------------------------------------------------------------------------------------


def test_the_container_is_hardened_and_limited_as_configured(runtime_of: Any, docker_settings: dict[str, Any],
                                                            podman: Podman, monkeypatch: pytest.MonkeyPatch,
                                                            tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "data.txt").write_text("shared data\n")
    monkeypatch.setenv("HERMES_TEST_FORWARDED", "forwarded value")
    runtime = runtime_of({**docker_settings, "container_memory": 512, "cpu": 0.5, "pids_limit": 64,
                          "docker_volumes": [f"{shared}:/data:ro"], "env": {"GREETING": "hi there"},
                          "forward_env": ["HERMES_TEST_FORWARDED", "HERMES_TEST_UNSET"]})
    result = terminal(runtime, "cat /data/data.txt; "
                               'echo "$GREETING/$HERMES_TEST_FORWARDED/${HERMES_TEST_UNSET-unset}"; '
                               "touch /data/no 2>/dev/null || echo read-only")
    assert result["output"] == "shared data\nhi there/forwarded value/unset\nread-only\n"
    options = run_options(podman, runtime)
    joined = " ".join(options)
    for expected in ("--cap-drop ALL", "--security-opt no-new-privileges", "--network none", "--memory 512m",
                     "--cpus 0.5", "--pids-limit 64", f"type=bind,source={shared},target=/data,readonly",
                     "-e GREETING", "-e HERMES_TEST_FORWARDED"):
        assert expected in joined
    assert "hi there" not in joined and "forwarded value" not in joined  # values never on a command line
    assert "HERMES_TEST_UNSET" not in joined


def test_the_workspace_can_appear_elsewhere_or_not_at_all(runtime_of: Any, docker_settings: dict[str, Any],
                                                         hermes_workspace: Path) -> None:
    (hermes_workspace / "here.txt").write_text("here\n")
    moved = runtime_of({**docker_settings, "workspace_path": "/workspace"})
    assert terminal(moved, "pwd; cat here.txt")["output"] == "/workspace\nhere\n"
    unmounted = runtime_of({**docker_settings, "mount_workspace": False})
    assert terminal(unmounted, f"ls {hermes_workspace} 2>/dev/null || echo hidden")["output"] == "hidden\n"


def test_staged_files_are_readable_in_the_container(runtime_of: Any, docker_settings: dict[str, Any]) -> None:
    runtime = runtime_of(docker_settings)
    terminal(runtime, "true")
    backend = runtime.backends.get("t")
    with backend.stage({"script.txt": "staged text\n"}) as staged:
        assert staged.directory.startswith(STAGE_PATH + "/")
        result = backend.run(f"cat {staged.directory}/script.txt; touch {staged.directory}/x 2>/dev/null || echo ro",
                             cwd="/", timeout=scaled_timeout(30), max_output_chars=1000)
        assert result.output == "staged text\nro\n"


# -- what cannot work is an error that says why ---------------------------------------------------------------


def test_a_missing_image_is_an_error_naming_it(runtime_of: Any, docker_settings: dict[str, Any],
                                               podman: Podman) -> None:
    before = set(podman.containers())
    runtime = runtime_of({**docker_settings, "image": "localhost/no-such-image:1"})
    error = terminal(runtime, "echo never")["error"]
    assert error.startswith(f"{podman.executable} could not start a container of image 'localhost/no-such-image:1': ")
    assert set(podman.containers()) == before


def test_bad_settings_name_their_key(runtime_of: Any, docker_settings: dict[str, Any], tmp_path: Path) -> None:
    bad = {"nework": True, "volumes": ["relative:/x"], "env": {"1BAD": "x"}, "memory": -1}
    error = terminal(runtime_of({**docker_settings, **bad}), "echo never")["error"]
    assert error.startswith("invalid config.yaml: ")
    for key in ("terminal.docker.nework", "terminal.docker.volumes.0", "terminal.docker.env",
                "terminal.docker.memory"):
        assert key in error
    missing = terminal(runtime_of({**docker_settings, "volumes": [f"{tmp_path}/absent:/x"]}), "true")["error"]
    assert f"{tmp_path}/absent does not exist" in missing
    unknown = terminal(runtime_of({**docker_settings, "executable": "no-such-docker"}), "true")["error"]
    assert unknown == ("the terminal backend 'docker' is unavailable: terminal.docker.executable 'no-such-docker' is "
                       "not an executable program")


def test_a_workspace_docker_cannot_mount_is_an_error_and_starts_nothing(runtime_of: Any, podman: Podman,
                                                                        docker_settings: dict[str, Any],
                                                                        tmp_path: Path) -> None:
    workspace = tmp_path / "a,b"
    workspace.mkdir()
    before = set(podman.containers())
    error = terminal(runtime_of(docker_settings, workspace=workspace), "true")["error"]
    assert error == f"cannot mount {workspace} at {workspace}: paths with ',' cannot be mounted"
    assert set(podman.containers()) == before


def test_an_image_without_setsid_is_refused(runtime_of: Any, docker_settings: dict[str, Any], podman: Podman,
                                            tmp_path: Path) -> None:
    container = "hermes-no-setsid-build"
    assert podman.run("run", "--name", container, "--entrypoint", "rm", podman.image, "/bin/setsid").returncode == 0
    try:
        assert podman.run("commit", container, "localhost/hermes-no-setsid:test").returncode == 0
    finally:
        podman.run("rm", "-f", container)
    before = set(podman.containers())
    error = terminal(runtime_of({**docker_settings, "image": "localhost/hermes-no-setsid:test"}), "true")["error"]
    assert error == ("the terminal backend 'docker' is unavailable: the image 'localhost/hermes-no-setsid:test' has "
                     "no setsid (util-linux or busybox provides it): Hermes needs it to stop a command with everything "
                     "it started")
    assert set(podman.containers()) == before


def test_without_docker_or_podman_the_backend_says_what_to_install(runtime_of: Any, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    runtime = runtime_of({})
    (tmp_path / "sh").symlink_to(shutil.which("sh") or "sh")  # the terminal tool needs a shell; this PATH has no docker
    monkeypatch.setenv("PATH", str(tmp_path))
    availability = runtime.contributions.backends["docker"].availability()
    assert availability == (False, "neither docker nor podman is installed; install one (Debian and Ubuntu: "
                                   "apt-get install podman, or Docker Engine) or set terminal.docker.executable")
    assert terminal(runtime, "true")["error"].startswith("the terminal backend 'docker' is unavailable: neither")

"""What a release publishes: the distributions (the core and every pack) that install offline by name, the
`hermes-tools` command, and GitHub workflows (ours and the template's) that actionlint accepts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hermes_repository_packs import packs  # scripts/packs.py, loaded by the repository's conftest.py

from hermes_core._version import __version__
from hermes_core.authoring.scaffold import render

ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTIONS = ("hermes-tools", *(pack.distribution for pack in packs()))
ACTIONLINT = Path(sys.executable).parent / "actionlint"


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_dist_holds_a_checked_sdist_and_wheel_of_each_of_the_distributions(dist: Path) -> None:
    expected = {f"{name.replace('-', '_')}-{__version__}{suffix}" for name in DISTRIBUTIONS
                for suffix in (".tar.gz", "-py3-none-any.whl")}
    assert {p.name for p in dist.iterdir()} == expected


def test_the_distributions_share_one_version_and_a_wrong_tag_is_refused() -> None:
    script = [sys.executable, str(ROOT / "scripts" / "build_dist.py")]
    refused = subprocess.run([*script, "--expect-version", "9.9.9"], capture_output=True, text=True)
    assert refused.returncode == 1
    assert [name for name in DISTRIBUTIONS if f"{name} is {__version__}, not 9.9.9" not in refused.stderr] == []


def test_dist_installs_offline_by_name_and_its_tools_answer(make_venv, dist: Path, http_server, tmp_path) -> None:
    env = make_venv("from-dist", core=False)
    env.install("hermes-tools", "hermes-tools-web", find_links=(dist,))
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.yaml").write_text("web:\n  allow_private_networks: true\n")  # the page is on 127.0.0.1
    base, routes = http_server
    routes["/page"] = (200, b"<html><head><title>Notes</title></head><body><article><h1>Release notes</h1>"
                            b"<p>Six distributions, one version, installed offline by name.</p>"
                            b"</article></body></html>")

    listed = json.loads(ok(env.hermes_cli("tools", "list", "--all", "--json", env={"HERMES_HOME": str(home)})))
    assert sorted(tool["name"] for tool in listed) == ["web_extract", "web_search"]
    called = ok(env.hermes_cli("tools", "call", "web_extract", json.dumps({"url": f"{base}/page"}),
                               env={"HERMES_HOME": str(home)}))
    assert "installed offline by name" in called


def test_hermes_tools_is_a_second_name_for_the_same_cli(make_venv, tmp_path) -> None:
    env = make_venv("second-name")
    env.install("hermes-fixture-declared", extra=("--no-deps",))
    home = {"HERMES_HOME": str(tmp_path)}
    tools = env.path / "bin" / "hermes-tools"

    assert ok(env.run(str(tools), "--version")).strip() == f"hermes-tools {__version__}"  # the distribution's name
    assert ok(env.run(str(tools), "tools", "list", "--json", env=home)) == \
        ok(env.hermes_cli("tools", "list", "--json", env=home))


def test_doctor_says_when_another_package_took_the_hermes_command(make_venv, tmp_path) -> None:
    env = make_venv("taken-command")
    bin_dir = env.path / "bin"
    run = {"HERMES_HOME": str(tmp_path), "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}

    def doctor(*args: str) -> subprocess.CompletedProcess[str]:
        return env.run(str(bin_dir / "hermes-tools"), "plugins", "doctor", *args, env=run)

    before = json.loads(ok(doctor("--json")))["hermes_command"]
    assert before == {"path": str(bin_dir / "hermes"), "ours": True, "problem": None, "note": None}

    env.install("hermes-fixture-agent-cli", extra=("--no-deps",))  # pip replaces bin/hermes without a word

    assert ok(env.hermes_cli()).strip() == "the agent's own hermes command"
    after = json.loads(ok(doctor("--json")))["hermes_command"]
    assert (after["path"], after["ours"]) == (str(bin_dir / "hermes"), False)
    assert "run `hermes-tools` instead" in after["problem"]
    strict = doctor("--strict")
    assert strict.returncode == 1
    assert f"[!!] hermes command: the `hermes` on PATH ({bin_dir / 'hermes'}) is not this Hermes" in strict.stdout


def test_a_plugin_made_from_the_template_installs_from_dist_in_a_clean_venv(make_venv, dist: Path,
                                                                              tmp_path: Path) -> None:
    project = render("weather", tmp_path, no_input=True)
    built = tmp_path / "plugin-dist"
    ok(subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                       str(built), str(project)], capture_output=True, text=True))
    env = make_venv("template-wheel", core=False)

    env.install("hermes-plugin-weather", find_links=(dist, built))

    installed = env.json("import json; from importlib.metadata import version; "
                         "print(json.dumps([version('hermes-tools'), version('hermes-plugin-weather')]))")
    assert installed == [__version__, "0.1.0"]
    called = ok(env.hermes_cli("tools", "call", "weather_hello", '{"name": "Ada"}',
                               env={"HERMES_HOME": str(tmp_path)}))
    assert json.loads(called) == {"greeting": "Hello, Ada."}


# -- the workflows --------------------------------------------------------------------------------------------

def actionlint(*files: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ACTIONLINT), "-no-color", *map(str, files)], capture_output=True, text=True)


def workflows(folder: Path) -> dict[str, dict]:
    import yaml

    return {p.name: yaml.safe_load(p.read_text()) for p in sorted((folder / ".github" / "workflows").glob("*.yml"))}


def test_actionlint_rejects_a_broken_workflow(tmp_path: Path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n"
                      "      - run: echo ${{ matrix.nope }}\n")
    result = actionlint(broken)
    assert result.returncode == 1 and "matrix.nope" in result.stdout


@pytest.mark.parametrize("project", ["repository", "template"])
def test_workflows_pass_actionlint(project: str, tmp_path: Path) -> None:
    folder = ROOT if project == "repository" else render("weather", tmp_path, no_input=True)
    files = sorted((folder / ".github" / "workflows").glob("*.yml"))
    assert [f.name for f in files] == ["ci.yml", "release.yml"]
    result = actionlint(*files)
    assert result.returncode == 0, result.stdout + result.stderr


def test_ci_runs_the_readme_test_command_on_every_supported_python() -> None:
    ci = workflows(ROOT)["ci.yml"]
    assert set(ci[True]) == {"push", "pull_request"}  # YAML 1.1 reads the key `on` as True
    job = ci["jobs"]["test"]
    assert job["runs-on"] == "ubuntu-latest"
    assert job["strategy"]["matrix"]["python-version"] == ["3.11", "3.12", "3.13"]
    assert [step["run"] for step in job["steps"] if "run" in step] == ["make test"]
    assert "make test" in (ROOT / "README.md").read_text()


def test_ci_runs_the_core_tests_on_linux_macos_and_windows() -> None:
    job = workflows(ROOT)["ci.yml"]["jobs"]["portable"]
    assert job["strategy"]["matrix"]["os"] == ["ubuntu-latest", "macos-latest", "windows-latest"]
    command = [step["run"] for step in job["steps"] if "run" in step][-1].split()
    files = [arg for arg in command if arg.startswith("tests/")]
    assert {"tests/test_dispatch_containment.py", "tests/test_hook_executor.py", "tests/test_hooks.py"} <= set(files)
    for file in files:  # a test file run there imports nothing Unix-only (or that only the dev extra installs)
        text = (ROOT / file).read_text()
        assert not any(f"\nimport {name}\n" in text for name in ("fcntl", "termios", "pty", "pwd", "resource",
                                                                   "anyio", "mcp", "openai", "yaml")), file


@pytest.mark.parametrize("project", ["repository", "template"])
def test_release_publishes_on_a_tag_with_trusted_publishing(project: str, tmp_path: Path) -> None:
    folder = ROOT if project == "repository" else render("weather", tmp_path, no_input=True)
    release = workflows(folder)["release.yml"]
    assert release[True] == {"push": {"tags": ["v*"]}}
    publish = release["jobs"]["publish"]
    assert publish["permissions"] == {"id-token": "write"} and publish["environment"]["name"] == "pypi"
    assert publish["steps"][-1] == {"uses": "pypa/gh-action-pypi-publish@release/v1"}
    assert "with" not in publish["steps"][-1]  # no password: the token comes from OIDC
    build = "\n".join(step.get("run", "") for step in release["jobs"]["build"]["steps"])
    assert ("scripts/build_dist.py" if project == "repository" else "twine check --strict") in build


"""The plugin template and ``hermes plugins new``: what they render, what they refuse, and that a rendered
plugin installs with real pip, shows its tool, answers calls, passes its own tests and validates."""

from __future__ import annotations

import datetime
import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from hermes_core.authoring.scaffold import ScaffoldError, naming_problems, render, requires_hermes, template_dir
from hermes_core.cli import cli
from hermes_core.cli.scaffold import new
from hermes_core.origin import ci_requirement
from hermes_core.plugins.manifest import load_manifest
from hermes_core.tools.toolsets import LEGACY_TOOLSETS, PRESETS

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE = ROOT / "cookiecutter-template"
TUTORIAL = ROOT / "docs" / "writing-plugins.md"
FIRST_PARTY = sorted(d.name for d in (ROOT / "hermes_plugins").iterdir() if (d / "pyproject.toml").is_file())

#: Every template variable away from its default; text that TOML, YAML and JSON must escape.
EVERY_OPTION = {
    "project_slug": "hermes-github-issues",
    "package_name": "hermes_github_issues",
    "description": 'Search "GitHub" issues: fast, <safe> & \\ sound',
    "author": "Zoë O'Brien",
    "email": "",
    "tool_name": "issue_search",
    "license": "Apache-2.0",
    "version": "2.0.0b1",
}

DEFAULT_FILES = [
    ".github/workflows/ci.yml", ".github/workflows/release.yml", ".gitignore", "LICENSE", "README.md",
    "hermes_plugin_weather/__init__.py",
    "hermes_plugin_weather/plugin.yaml", "hermes_plugin_weather/tools.py", "pyproject.toml",
    "tests/test_plugin.py", "tests/test_tools.py",
]


@pytest.fixture(autouse=True)
def cookiecutter_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A cookiecutter user config of this test, so the machine's ~/.cookiecutterrc changes nothing."""
    config = tmp_path / "cookiecutterrc.yaml"
    config.write_text(yaml.safe_dump({"default_context": {}, "replay_dir": str(tmp_path / "replay"),
                                      "cookiecutters_dir": str(tmp_path / "cookiecutters")}))
    monkeypatch.setenv("COOKIECUTTER_CONFIG", str(config))
    return config


def files_of(project: Path) -> list[str]:
    return sorted(p.relative_to(project).as_posix() for p in project.rglob("*") if p.is_file())


def render_every_option(output_dir: Path) -> Path:
    return render("github-issues", output_dir, no_input=True, toolset="github", with_hook=True,
                  context=EVERY_OPTION)


# -- what the template renders -------------------------------------------------------------------


def test_defaults_render_a_declared_only_pip_plugin(tmp_path: Path) -> None:
    project = render("weather", tmp_path, no_input=True)

    assert project == tmp_path / "hermes-plugin-weather"
    assert files_of(project) == DEFAULT_FILES
    pyproject = tomllib.loads((project / "pyproject.toml").read_text())
    assert pyproject["build-system"] == {"requires": ["setuptools>=77"], "build-backend": "setuptools.build_meta"}
    meta = pyproject["project"]
    assert (meta["name"], meta["version"], meta["license"]) == ("hermes-plugin-weather", "0.1.0", "MIT")
    assert meta["dependencies"] == [f"hermes-tools{requires_hermes()}"]
    assert meta["entry-points"]["hermes_agent.plugins"] == {"weather": "hermes_plugin_weather"}
    assert pyproject["tool"]["setuptools"]["package-data"] == {"hermes_plugin_weather": ["plugin.yaml"]}
    manifest = load_manifest(project / "hermes_plugin_weather" / "plugin.yaml")
    assert (manifest.name, manifest.license, manifest.requires_hermes) == ("weather", "MIT", requires_hermes())
    assert manifest.declarative and manifest.provides_hooks == [] and manifest.unknown_fields == []
    [tool] = manifest.tools or []
    assert (tool.name, tool.toolset, tool.handler) == \
        ("weather_hello", "weather", "hermes_plugin_weather.tools:weather_hello")
    assert "def register" not in (project / "hermes_plugin_weather" / "__init__.py").read_text()


def test_every_option_is_rendered_and_escaped(tmp_path: Path) -> None:
    project = render_every_option(tmp_path)

    assert project == tmp_path / "hermes-github-issues"
    package = project / "hermes_github_issues"
    assert (package / "hooks.py").is_file() and (project / "tests" / "test_hooks.py").is_file()
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    assert (meta["name"], meta["version"], meta["license"]) == ("hermes-github-issues", "2.0.0b1", "Apache-2.0")
    assert meta["description"] == EVERY_OPTION["description"]
    assert meta["authors"] == [{"name": "Zoë O'Brien"}]  # an empty email is left out, not written empty
    assert meta["entry-points"]["hermes_agent.plugins"] == {"github-issues": "hermes_github_issues"}
    manifest = load_manifest(package / "plugin.yaml")
    assert (manifest.name, manifest.description, manifest.author, manifest.license) == \
        ("github-issues", EVERY_OPTION["description"], "Zoë O'Brien", "Apache-2.0")
    assert manifest.provides_hooks == ["pre_tool_call"] and not manifest.declarative
    [tool] = manifest.tools or []
    assert (tool.name, tool.toolset, tool.handler) == \
        ("issue_search", "github", "hermes_github_issues.tools:issue_search")
    assert 'ctx.register_hook("pre_tool_call", tidy_greetings)' in (package / "__init__.py").read_text()
    assert "Apache License" in (project / "LICENSE").read_text()


@pytest.mark.parametrize(("license_id", "first_line"), [
    ("MIT", "MIT License"),
    ("Apache-2.0", "Apache License"),
    ("BSD-3-Clause", "BSD 3-Clause License"),
    ("GPL-3.0-or-later", "GNU GENERAL PUBLIC LICENSE"),
])
def test_each_license_renders_its_text_and_spdx_id(tmp_path: Path, license_id: str, first_line: str) -> None:
    project = render("weather", tmp_path, no_input=True, context={"license": license_id, "author": "Ada"})

    text = (project / "LICENSE").read_text()
    assert text.strip().splitlines()[0].strip() == first_line
    assert not text.endswith("\n\n")
    if license_id in ("MIT", "BSD-3-Clause"):
        assert f"Copyright (c) {datetime.datetime.now(datetime.UTC).year}" in text and "Ada" in text
    assert tomllib.loads((project / "pyproject.toml").read_text())["project"]["license"] == license_id


def test_readme_covers_developing_testing_publishing_and_the_index(tmp_path: Path) -> None:
    readme = (render("weather", tmp_path, no_input=True) / "README.md").read_text()

    for heading in ("## Develop", "## Test", "## Publish", "## Add it to the plugin index"):
        assert heading in readme
    assert "hermes index fetch hermes-plugin-weather" in readme
    assert "registry-index/plugins/weather.yaml" in readme
    assert "{{" not in readme and "{%" not in readme


def test_ci_workflow_tests_validates_and_builds(tmp_path: Path) -> None:
    text = (render("weather", tmp_path, no_input=True) / ".github" / "workflows" / "ci.yml").read_text()

    workflow = yaml.safe_load(text)
    assert set(workflow["jobs"]) == {"test", "build"}
    steps = "\n".join(str(step.get("run", "")) for step in workflow["jobs"]["test"]["steps"])
    assert "pytest" in steps and "hermes-tools plugins validate ." in steps
    assert "${{ matrix.python-version }}" in text  # GitHub's expressions survive rendering
    assert "twine check --strict" in "\n".join(str(step.get("run", "")) for step in workflow["jobs"]["build"]["steps"])


def test_generated_python_compiles_and_is_lint_clean(tmp_path: Path) -> None:
    projects = [render("weather", tmp_path, no_input=True), render_every_option(tmp_path)]

    for path in (p for project in projects for p in project.rglob("*.py")):
        compile(path.read_text(), str(path), "exec")
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed")
    for project in projects:
        result = subprocess.run([sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache",
                                 "--select", "E,F,W,I,UP,B,SIM,RUF", "--line-length", "120", str(project)],
                                capture_output=True, text=True, cwd=project)
        assert result.returncode == 0, result.stdout + result.stderr


def test_template_requires_this_hermes_minor_version() -> None:
    """`cookiecutter` run on the template directly must require what `hermes plugins new` requires."""
    context = json.loads((TEMPLATE / "cookiecutter.json").read_text())

    assert context["_requires_hermes"] == requires_hermes()


def test_template_is_found_in_the_source_checkout() -> None:
    assert template_dir() in (TEMPLATE, ROOT / "hermes_core" / "_template")


# -- what it refuses ----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "context", "message"), [
    ("My Plugin", {}, "invalid plugin name 'My Plugin'"),
    ("weather_tools", {}, "invalid plugin name"),
    ("2fast", {}, "invalid plugin name"),
    ("double--hyphen", {}, "invalid plugin name"),
    ("../escape", {}, "invalid plugin name"),
    ("", {}, "invalid plugin name ''"),
    ("x" * 51, {}, "up to 50"),
    ("hermes-plugin-weather", {}, "give the plugin's own id, e.g. 'weather'"),
    ("web", {}, "taken by the first-party plugin hermes-tools-web"),
    ("weather", {"project_slug": "my plugin"}, "invalid project slug 'my plugin'"),
    ("weather", {"project_slug": "../escape"}, "invalid project slug"),
    ("weather", {"project_slug": "Hermes_Tools-weather"}, "in the family of the first-party distributions"),
    ("weather", {"package_name": "Weather"}, "invalid package name 'Weather'"),
    ("weather", {"package_name": "import"}, "invalid package name"),
    ("weather", {"package_name": "json"}, "would shadow the module"),
    ("weather", {"toolset": "Weather Tools"}, "invalid toolset"),
    ("weather", {"toolset": "all"}, "toolset 'all' is reserved"),
    ("weather", {"toolset": "web_tools"}, "is reserved"),
    ("weather", {"toolset": "hermes-cli"}, "is reserved"),
    ("weather", {"toolset": "mcp-github"}, "is reserved"),
    ("weather", {"tool_name": "get-weather"}, "invalid tool name 'get-weather'"),
    ("weather", {"tool_name": "class"}, "invalid tool name"),
    ("weather", {"tool_name": "todo"}, "is one of the agent's own tools"),
    ("weather", {"email": "nobody"}, "invalid email 'nobody'"),
    ("weather", {"description": "two\nlines"}, "the description must fit on one line"),
    ("weather", {"license": "WTFPL"}, "WTFPL"),
    ("weather", {"colour": "red"}, "unknown template variable colour"),
])
def test_invalid_answers_are_refused_before_anything_is_written(tmp_path: Path, name: str, context: dict,
                                                                 message: str) -> None:
    output = tmp_path / "out"

    with pytest.raises(ScaffoldError, match=re.escape(message)):
        render(name, output, no_input=True, context=context)

    assert not output.exists()


def test_naming_rules_know_the_cores_reserved_names() -> None:
    for plugin_id in FIRST_PARTY:
        assert naming_problems({"plugin_name": plugin_id}), plugin_id
    for toolset in [*LEGACY_TOOLSETS, *PRESETS, "all"]:
        assert naming_problems({"toolset": toolset}), toolset
    for tool in ("todo", "memory", "session_search", "delegate_task", "clarify"):  # the agent pack's
        assert naming_problems({"tool_name": tool}), tool
    assert naming_problems({"plugin_name": "weather", "toolset": "web", "tool_name": "weather_hello"}) == []


def test_cookiecutter_run_directly_refuses_the_same_names(tmp_path: Path, capfd: pytest.CaptureFixture) -> None:
    from cookiecutter.exceptions import FailedHookException
    from cookiecutter.main import cookiecutter

    output = tmp_path / "out"
    with pytest.raises(FailedHookException):
        cookiecutter(str(TEMPLATE), no_input=True, extra_context={"plugin_name": "My Plugin"}, output_dir=str(output))

    assert "error: invalid plugin name 'My Plugin'" in capfd.readouterr().err
    assert not output.exists() or list(output.iterdir()) == []


def test_cookiecutter_run_directly_renders_what_hermes_renders(tmp_path: Path) -> None:
    from cookiecutter.main import cookiecutter

    ours = render("weather", tmp_path / "ours", no_input=True, with_hook=True)
    # where CI installs Hermes from is found at run time (this checkout's origin, if public): given to cookiecutter
    theirs = Path(cookiecutter(str(TEMPLATE), no_input=True, output_dir=str(tmp_path / "theirs"),
                               extra_context={"plugin_name": "weather", "with_hook": True,
                                              "_hermes_from_git": ci_requirement() or ""}))

    assert files_of(theirs) == files_of(ours)
    for name in files_of(ours):
        assert (theirs / name).read_bytes() == (ours / name).read_bytes(), name


def test_existing_project_is_refused_unless_overwrite(tmp_path: Path) -> None:
    project = render("weather", tmp_path, no_input=True)
    (project / "README.md").write_text("mine")
    (project / "NOTES.md").write_text("kept")

    with pytest.raises(ScaffoldError, match=r"hermes-plugin-weather already exists; .* --overwrite"):
        render("weather", tmp_path, no_input=True)
    assert (project / "README.md").read_text() == "mine"

    assert render("weather", tmp_path, no_input=True, overwrite=True) == project
    assert (project / "README.md").read_text().startswith("# hermes-plugin-weather")
    assert (project / "NOTES.md").read_text() == "kept"


# -- the command ---------------------------------------------------------------------------------


def test_new_renders_with_its_options_and_says_what_next(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["plugins", "new", "weather", "--no-input", "-o", str(tmp_path / "out"),
                                      "--toolset", "forecast", "--with-hook"])

    assert result.exit_code == 0, result.output
    assert "Created the plugin project" in result.output and 'pip install -e ".[test]"' in result.output
    manifest = load_manifest(tmp_path / "out" / "hermes-plugin-weather" / "hermes_plugin_weather" / "plugin.yaml")
    assert manifest.tools and manifest.tools[0].toolset == "forecast"
    assert manifest.provides_hooks == ["pre_tool_call"]


def test_new_asks_for_what_was_not_given(tmp_path: Path) -> None:
    # project slug, package, description, author, email, toolset, tool, license (2 = Apache-2.0), hook, skill, version
    answers = ["", "", "Forecasts for agents", "Ada", "ada@example.com", "", "forecast", "2", "", "", ""]
    result = CliRunner().invoke(cli, ["plugins", "new", "weather", "-o", str(tmp_path)],
                                input="\n".join(answers) + "\n")

    assert result.exit_code == 0, result.output
    project = tmp_path / "hermes-plugin-weather"
    meta = tomllib.loads((project / "pyproject.toml").read_text())["project"]
    assert meta["description"] == "Forecasts for agents" and meta["license"] == "Apache-2.0"
    assert meta["authors"] == [{"name": "Ada", "email": "ada@example.com"}]
    [tool] = load_manifest(project / "hermes_plugin_weather" / "plugin.yaml").tools or []
    assert (tool.name, tool.toolset) == ("forecast", "weather")
    assert "plugin_name" not in result.output  # NAME was given: not asked again


def test_new_refuses_a_bad_name_in_one_line_before_asking_anything(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["plugins", "new", "My Plugin", "-o", str(tmp_path / "out")], input="")

    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: invalid plugin name 'My Plugin': use up to 50 lowercase letters, digits and single hyphens, "
        "starting with a letter (e.g. 'weather' or 'github-issues')"]
    assert not (tmp_path / "out").exists()


def test_new_refuses_an_existing_directory_in_one_line(tmp_path: Path) -> None:
    args = ["weather", "--no-input", "-o", str(tmp_path)]
    assert CliRunner().invoke(new, args).exit_code == 0

    result = CliRunner().invoke(new, args)

    assert result.exit_code == 1
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: ") and "already exists" in line and "--overwrite" in line
    assert CliRunner().invoke(cli, ["plugins", "new", *args, "--overwrite"]).exit_code == 0


# -- the testing kit on a rendered plugin, in this process ----------------------------------------


def test_kit_loads_a_plugin_module_that_is_not_installed_under_its_manifest_name(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, load_hermes_plugin, call_tool) -> None:
    project = render("kit-probe", tmp_path, no_input=True)
    monkeypatch.syspath_prepend(str(project))
    try:
        record = load_hermes_plugin("hermes_plugin_kit_probe")

        assert (record.id, record.state, record.warnings, record.imported) == ("kit-probe", "declared", [], False)
        assert call_tool("kit_probe_hello", name="Ada", excited="yes") == {"greeting": "Hello, Ada!"}
    finally:
        for module in [m for m in sys.modules if m.split(".")[0] == "hermes_plugin_kit_probe"]:
            del sys.modules[module]


# -- a rendered plugin in a real venv --------------------------------------------------------------


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


VARIANTS = {
    "defaults": dict(name="weather", plugin="weather", tool="weather_hello", state="declared"),
    "every-option": dict(name="github-issues", plugin="github-issues", tool="issue_search", state="loaded"),
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_rendered_plugin_installs_lists_calls_passes_its_tests_and_validates(make_venv, tmp_path: Path,
                                                                             variant: str) -> None:
    expected = VARIANTS[variant]
    project = render_every_option(tmp_path) if variant == "every-option" else \
        render("weather", tmp_path, no_input=True)
    venv = make_venv(f"scaffold-{variant}")
    venv.install(str(project), extra=("--no-build-isolation", "--no-deps"))

    # discovery from the installed wheel (core API): a declared-only plugin is not even imported
    state = venv.json(f"import json, sys; from hermes_core import default_runtime; "
                      f"r = default_runtime().plugin({expected['plugin']!r}); "
                      f"print(json.dumps([r.state, r.imported, r.tools, r.warnings, "
                      f"'{project.name.replace('-', '_')}' in sys.modules]))")
    declared = expected["state"] == "declared"
    assert state == [expected["state"], not declared, [expected["tool"]], [], not declared]

    listed = json.loads(ok(venv.hermes_cli("tools", "list", "--json")))
    assert expected["tool"] in [tool["name"] for tool in listed]

    called = ok(venv.hermes_cli("tools", "call", expected["tool"], '{"name": "Ada", "excited": true}'))
    assert json.loads(called) == {"greeting": "Hello, Ada!"}

    tests = venv.run(venv.python, "-m", "pytest", "-q", cwd=project)
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert re.search(r"\b\d+ passed\b", tests.stdout) and "failed" not in tests.stdout

    validated = ok(venv.hermes_cli("plugins", "validate", str(project)))
    assert "valid (1 declared tool" in validated
    assert "warning" not in validated


def test_hermes_plugins_new_works_from_an_installed_hermes(make_venv, tmp_path: Path) -> None:
    venv = make_venv("scaffold-cli")

    created = ok(venv.hermes_cli("plugins", "new", "weather", "--no-input", "-o", str(tmp_path / "out")))

    assert "Created the plugin project" in created
    assert files_of(tmp_path / "out" / "hermes-plugin-weather") == DEFAULT_FILES
    refused = venv.hermes_cli("plugins", "new", "weather", "--no-input", "-o", str(tmp_path / "out"))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1 and "already exists" in refused.stderr
    bad = venv.hermes_cli("plugins", "new", "Bad Name", "--no-input", "-o", str(tmp_path / "out"))
    assert bad.returncode == 1 and bad.stderr.strip().splitlines() == [
        "Error: invalid plugin name 'Bad Name': use up to 50 lowercase letters, digits and single hyphens, "
        "starting with a letter (e.g. 'weather' or 'github-issues')"]


FENCE = re.compile(r'^```(?P<language>\w+)(?: title="(?P<file>[^"]+)")?\n(?P<body>.*?)^```$', re.S | re.M)


def tutorial_blocks(language: str) -> list[str]:
    return [m["body"] for m in FENCE.finditer(TUTORIAL.read_text()) if m["language"] == language and not m["file"]]


def tutorial_script() -> str:
    """The tutorial as a reader follows it: its ```sh blocks run in order, and each block titled with a file
    (```python title="pkg/tools.py"```) is added to the end of that file where it stands."""
    steps = []
    for match in FENCE.finditer(TUTORIAL.read_text()):
        if match["file"]:
            steps.append(f"cat >> {match['file']} <<'TUTORIAL_EOF'\n{match['body']}TUTORIAL_EOF")
        elif match["language"] == "sh":
            steps.append(match["body"])
    return "set -eux\n" + "\n".join(steps)


def test_tutorial_runs_as_written(make_venv, wheelhouse: Path, tmp_path: Path, cookiecutter_config: Path) -> None:
    commands = tutorial_blocks("sh")
    assert commands, "the tutorial has no ```sh blocks"
    venv = make_venv("tutorial")
    bin_dir = venv.path / "bin"
    for tool, module in (("pip", "pip"), ("pytest", "pytest")):  # the venv shares these; give them commands
        shim = bin_dir / tool
        shim.write_text(f'#!/bin/sh\nexec "{venv.python}" -m {module} "$@"\n')
        shim.chmod(0o755)
    work = tmp_path / "tutorial"
    work.mkdir()
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(venv.path),
        # offline: packages come from the wheelhouse or are already installed; pip's inverted
        # spelling below turns build isolation off, so builds use the setuptools already present
        "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse), "PIP_NO_BUILD_ISOLATION": "0",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1", "COOKIECUTTER_CONFIG": str(cookiecutter_config),
    }
    additions = [m["file"] for m in FENCE.finditer(TUTORIAL.read_text()) if m["file"]]
    assert {Path(name).name for name in additions} >= {"tools.py", "hooks.py", "__init__.py", "plugin.yaml"}

    # the project's own tests run after each addition (a second tool, then a hook) and must still pass
    result = venv.run("bash", "-c", tutorial_script(), env=env, cwd=work, timeout=900)

    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr.count("+ pytest") >= 3 and "failed" not in result.stdout
    project = work / "hermes-plugin-weather"
    assert [tool.name for tool in load_manifest(project / "hermes_plugin_weather" / "plugin.yaml").tools or []] == \
        ["weather_hello", "weather_goodbye"]
    assert "hooks: post_tool_call" in result.stdout
    assert "warning:" not in result.stdout + result.stderr  # the tutorial's plugin validates cleanly at every step
    for shown in (block.strip() for block in tutorial_blocks("text") if "──" not in block):
        assert shown in result.stdout, f"the tutorial shows {shown!r}, the command printed something else"


# -- where the new plugin's CI installs Hermes from ---------------------------------------------------


def ci_install_steps(project: Path) -> list[str]:
    workflow = yaml.safe_load((project / ".github" / "workflows" / "ci.yml").read_text())
    return [str(step.get("run", "")) for step in workflow["jobs"]["test"]["steps"] if "pip install" in
            str(step.get("run", ""))]


def fake_checkout(root: Path, remote: str, *, pushed: bool) -> str:
    """A git checkout laid out as the Hermes repository, with ``origin`` at ``remote``; returns its commit.
    ``pushed``: a remote-tracking branch holds the commit (as after a fetch)."""
    for folder in ("hermes_core", "hermes_plugins"):
        (root / folder).mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'hermes-tools'\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}
    for args in (["init", "-q"], ["add", "pyproject.toml"], ["commit", "-qm", "x"],
                 ["remote", "add", "origin", remote]):
        subprocess.run(["git", "-C", str(root), *args], check=True, env=env, capture_output=True)
    commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()
    if pushed:
        subprocess.run(["git", "-C", str(root), "update-ref", "refs/remotes/origin/main", commit], check=True)
    return commit


def installed_core(site: Path, direct_url: dict) -> None:
    """A ``hermes-tools`` distribution's metadata first on sys.path, with the ``direct_url.json`` pip writes (PEP
    610) for an install from a VCS URL (pip cannot reach a public git host here: the file is written as pip would)."""
    info = site / "hermes_tools-0.2.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hermes-tools\nVersion: 0.2.0\n")
    (info / "direct_url.json").write_text(json.dumps(direct_url))


def test_ci_installs_hermes_from_the_git_url_pip_recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#46 item 9: the scaffolded CI installed hermes-tools from PyPI, where it is not published (`No matching
    distribution found`). Installed from a git URL, Hermes pins the new plugin's CI to that URL and commit."""
    import hermes_core.origin

    commit = "0123456789abcdef0123456789abcdef01234567"
    installed_core(tmp_path / "site", {"url": "https://github.com/example/hermes.git",
                                       "vcs_info": {"vcs": "git", "commit_id": commit, "requested_revision": "main"}})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(hermes_core.origin, "_running_tree", lambda: tmp_path / "site")  # as from site-packages

    project = render("weather", tmp_path / "out", no_input=True)

    assert ci_install_steps(project) == [
        f'python -m pip install "hermes-tools @ git+https://github.com/example/hermes.git@{commit}"',
        'python -m pip install -e ".[test]"']


@pytest.mark.parametrize(("remote", "pushed", "installs"), [
    ("https://github.com/example/hermes.git", True, "git+https://github.com/example/hermes.git@{commit}"),
    ("git@github.com:example/hermes.git", False, "git+ssh://git@github.com/example/hermes.git"),  # HEAD not pushed
    ("{local}", True, None),  # a folder of this machine: never written into the project
    ("https://ghp_token@github.com/example/hermes.git", True, None),  # a credential: never written either
], ids=["https", "ssh, unpushed", "local folder", "token in the URL"])
def test_ci_installs_hermes_from_the_origin_of_the_checkout_it_runs_from(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, remote: str, pushed: bool, installs: str | None) -> None:
    import hermes_core.origin

    checkout = tmp_path / "hermes"
    commit = fake_checkout(checkout, remote.format(local=tmp_path / "upstream"), pushed=pushed)
    installed_core(tmp_path / "site", {"url": checkout.as_uri(), "dir_info": {"editable": True}})
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setattr(hermes_core.origin, "_running_tree", lambda: checkout)

    project = render("weather", tmp_path / "out", no_input=True)

    text = (project / ".github" / "workflows" / "ci.yml").read_text()
    steps = ci_install_steps(project)
    if installs is None:
        assert steps == ['python -m pip install -e ".[test]"']
        assert "hermes-tools comes from the package index" in text and 'pip install "hermes-tools @ git+' in text
        assert str(tmp_path) not in text and "ghp_token" not in text
    else:
        assert steps[0] == f'python -m pip install "hermes-tools @ {installs.format(commit=commit)}"'
        assert "Once it is published, delete this step" in text


def test_cookiecutter_run_directly_installs_hermes_from_the_index(tmp_path: Path) -> None:
    from cookiecutter.main import cookiecutter

    project = Path(cookiecutter(str(TEMPLATE), no_input=True, output_dir=str(tmp_path),
                                extra_context={"plugin_name": "weather"}))

    assert ci_install_steps(project) == ['python -m pip install -e ".[test]"']
    assert "To install it from elsewhere" in (project / ".github" / "workflows" / "ci.yml").read_text()

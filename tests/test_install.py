"""`hermes plugins install` cannot be tricked into installing someone else's project, rolls back what is no
plugin and says what it did; `hermes plugins freeze` prints what `pip install -r` turns back into the plugins."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hermes_core.index.catalog import IndexEntry, PluginIndex
from hermes_core.index.installer import InstallRefused, frozen_plugins, install_target


def entry(plugin_id: str, distribution: str) -> IndexEntry:
    return IndexEntry(id=plugin_id, distribution=distribution, requirement=distribution, version="1.0",
                      entry_point=distribution.replace("-", "_"))


INDEX = PluginIndex.of([entry("terminal", "hermes-tools-terminal"), entry("web", "hermes-tools-web"),
                        entry("github-app", "hermes-github-app-plugin")], source="test-index.json")


# -- what an argument means (no pip involved) ---------------------------------------------------------------

@pytest.mark.parametrize(("spec", "requirement", "distribution"), [
    ("terminal", "hermes-tools-terminal", "hermes-tools-terminal"),
    ("Terminal", "hermes-tools-terminal", "hermes-tools-terminal"),
    ("hermes_tools_web", "hermes-tools-web", "hermes-tools-web"),
    ("terminal==0.4.0", "terminal==0.4.0", "terminal"),
    ("terminal>=0.4", "terminal>=0.4", "terminal"),
    ("pkg @ https://example.org/pkg-1.0.tar.gz", "pkg @ https://example.org/pkg-1.0.tar.gz", "pkg"),
    ("https://example.org/dl/pkg-1.0-py3-none-any.whl", "https://example.org/dl/pkg-1.0-py3-none-any.whl", "pkg"),
    ("git+https://example.org/pkg.git", "git+https://example.org/pkg.git", None),
    ("./wheels/my_plugin-2.0-py3-none-any.whl", "./wheels/my_plugin-2.0-py3-none-any.whl", "my-plugin"),
    ("../my-plugin", "../my-plugin", None),
])
def test_index_ids_and_clear_pip_requirements_are_accepted(spec: str, requirement: str, distribution: str | None):
    target = install_target(spec, INDEX)
    assert (target.requirement, target.distribution) == (requirement, distribution)


def test_a_bare_name_the_index_does_not_list_is_refused_with_the_closest_ids_and_the_command_anyway():
    with pytest.raises(InstallRefused) as refused:
        install_target("termnal", INDEX)
    message = str(refused.value)
    assert "'termnal' is not a plugin in the index (test-index.json), so it was not handed to pip" in message
    assert "closest plugin ids: terminal" in message
    assert "`hermes plugins install --pip termnal` installs the PyPI project of that name anyway" in message


@pytest.mark.parametrize("spec", ["requests", "hermes-tools-web[extra]", "zzzz"])
def test_names_with_no_version_or_url_are_refused(spec: str):
    with pytest.raises(InstallRefused, match="not a plugin in the index"):
        install_target(spec, INDEX)


def test_pip_flag_hands_the_argument_over_as_it_is():
    assert install_target("terminal", INDEX, as_pip=True).requirement == "terminal"
    assert install_target("requests", None, as_pip=True).distribution == "requests"


def test_an_unreadable_index_refuses_bare_names_but_not_requirements():
    with pytest.raises(InstallRefused, match=r"cannot check 'web' against the plugin index \(no such file\)"):
        install_target("web", None, index_problem="no such file")
    assert install_target("web==1.0", None, index_problem="no such file").requirement == "web==1.0"


def test_text_that_is_no_requirement_at_all_is_refused():
    with pytest.raises(InstallRefused, match="neither a plugin id nor a pip requirement"):
        install_target("what is this?", INDEX)


# -- the real command in a venv ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def env(make_venv):
    return make_venv("install")


@pytest.fixture
def run(env, tmp_path, wheelhouse):
    """Run `hermes plugins ...` offline (pip sees only the wheelhouse), logging any pip run to pip.log."""
    home = tmp_path / "home"
    home.mkdir()
    variables = {"HERMES_HOME": str(home), "PIP_LOG": str(tmp_path / "pip.log"), "PIP_NO_INDEX": "1",
                 "PIP_FIND_LINKS": str(wheelhouse)}

    def hermes(*args: str):
        return env.hermes_cli("plugins", *args, env=variables)

    hermes.home = home
    hermes.pip_ran = lambda: (tmp_path / "pip.log").exists()
    return hermes


def installed(env) -> set[str]:
    return {d["name"] for d in env.json("import json, sys; from importlib.metadata import distributions; "
                                        "print(json.dumps([{'name': d.metadata['Name']} for d in distributions()]))")}


def error_line(result) -> str:
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stdout + result.stderr
    return result.stderr.strip().splitlines()[-1]


def test_an_unknown_name_is_refused_and_pip_never_runs(env, run):
    result = run("install", "hermes-fixture-not-a-plugin")

    line = error_line(result)
    assert "'hermes-fixture-not-a-plugin' is not a plugin in the index" in line
    assert "`hermes plugins install --pip hermes-fixture-not-a-plugin`" in line
    assert not run.pip_ran()
    assert "hermes-fixture-not-a-plugin" not in installed(env)


def test_the_closest_index_ids_are_suggested(run):
    assert "closest plugin ids: terminal" in error_line(run("install", "termnal"))
    assert not run.pip_ran()


@pytest.mark.parametrize("spec", [("--pip", "hermes-fixture-not-a-plugin"), ("hermes-fixture-not-a-plugin==0.4.0",)])
def test_a_distribution_that_is_no_plugin_is_rolled_back_with_what_it_pulled_in(env, run, spec):
    before = installed(env)

    line = error_line(run("install", *spec))

    assert run.pip_ran()
    assert "provides no Hermes plugin (no `hermes_agent.plugins` entry point); rolled back: uninstalled " \
           "hermes-fixture-not-a-plugin 0.4.0, hermes-fixture-not-a-plugin-dep 1.1.0" in line
    assert installed(env) == before


def test_reinstalling_an_installed_plugin_says_so(env, run, wheelhouse):
    [wheel] = wheelhouse.glob("hermes_fixture_declared-*.whl")
    try:
        first = run("install", "--pip", "hermes-fixture-declared")
        assert "Installed plugin declared-fixture 1.2.0: fixture_echo" in first.stdout, first.stderr
        again = run("install", str(wheel))
        assert again.returncode == 0, again.stderr
        assert "Plugin declared-fixture 1.2.0 was already installed; pip changed nothing" in again.stdout
        forced = run("install", str(wheel), "--force-reinstall")
        assert forced.returncode == 0, forced.stderr
        assert forced.stdout.splitlines()[-1] == "Reinstalled plugin declared-fixture 1.2.0: fixture_echo"
        assert "provides no Hermes plugin" not in first.stdout + again.stdout + forced.stdout
    finally:
        env.uninstall("hermes-fixture-declared")


# -- freeze ------------------------------------------------------------------------------------------------

def test_freeze_round_trips_through_pip_install_r(env, run, make_venv, wheelhouse, tmp_path):
    [wheel] = wheelhouse.glob("hermes_fixture_declared-*.whl")
    folder = run.home / "plugins" / "greeter"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text("def register(ctx): pass\n")
    try:
        assert run("install", str(wheel)).returncode == 0  # from a file: frozen as pip writes it
        assert run("install", "--pip", "hermes-fixture-hooked").returncode == 0  # from an index: name==version
        frozen = run("freeze")
        assert frozen.returncode == 0, frozen.stderr
        assert frozen.stdout.splitlines() == [
            f"hermes-fixture-declared @ {wheel.as_uri()}", "hermes-fixture-hooked==0.3.0",
            f"# user plugin greeter: the folder {folder} (not a distribution; copy it)"]
        as_json = json.loads(run("freeze", "--json").stdout)
        assert [(r["plugins"], r["source"], r["requirement"]) for r in as_json] == [
            (["declared-fixture"], "pip", f"hermes-fixture-declared @ {wheel.as_uri()}"),
            (["hooked-fixture"], "pip", "hermes-fixture-hooked==0.3.0"), (["greeter"], "user", None)]
        listed = json.loads(env.hermes_cli("plugins", "list", "--json", env={"HERMES_HOME": str(tmp_path)}).stdout)
    finally:
        env.uninstall("hermes-fixture-declared", "hermes-fixture-hooked")
    requirements = tmp_path / "plugins.txt"
    requirements.write_text(frozen.stdout)
    fresh = make_venv("freeze-target")

    fresh.install("-r", str(requirements))

    relisted = json.loads(fresh.hermes_cli("plugins", "list", "--json", env={"HERMES_HOME": str(tmp_path)}).stdout)
    assert sorted((r["id"], r["version"]) for r in relisted) == sorted((r["id"], r["version"]) for r in listed)
    assert {r["id"] for r in relisted} == {"declared-fixture", "hooked-fixture"}


def test_freeze_names_a_wheel_that_is_gone_in_a_warning(env, run, wheelhouse, tmp_path):
    [wheel] = wheelhouse.glob("hermes_fixture_declared-*.whl")
    copy = tmp_path / "moved" / wheel.name
    copy.parent.mkdir()
    shutil.copy(wheel, copy)
    try:
        assert run("install", str(copy)).returncode == 0
        copy.unlink()
        frozen = run("freeze")
    finally:
        env.uninstall("hermes-fixture-declared")
    assert frozen.returncode == 0
    gone = f"hermes-fixture-declared 1.2.0 was installed from {copy.as_uri()}, which no longer exists"
    assert frozen.stdout.splitlines() == [f"# hermes-fixture-declared==1.2.0: {gone}; "
                                          "pip cannot install it again from there"]
    assert f"warning: {gone}" in frozen.stderr


@pytest.mark.parametrize(("direct_url", "line"), [
    (None, "hermes-shape==1.0"),
    ({"url": "https://example.org/hermes_shape-1.0-py3-none-any.whl", "archive_info": {}},
     "hermes-shape @ https://example.org/hermes_shape-1.0-py3-none-any.whl"),
    ({"url": "https://example.org/shape.git", "vcs_info": {"vcs": "git", "commit_id": "abc123"}},
     "hermes-shape @ git+https://example.org/shape.git@abc123"),
    ({"url": "file:///", "dir_info": {"editable": True}}, "-e file:///"),
    ({"url": "file:///", "dir_info": {}}, "hermes-shape @ file:///"),
])
def test_freeze_writes_each_origin_as_pip_would(plugins, direct_url, line):
    plugins.distribution("shape", "hermes_shape")
    if direct_url is not None:
        (plugins.site / "hermes_shape-1.0.dist-info" / "direct_url.json").write_text(json.dumps(direct_url))

    [frozen] = [f for f in frozen_plugins() if f.distribution == "hermes-shape"]
    assert (frozen.plugins, frozen.version, frozen.requirement, frozen.warning) == (["shape"], "1.0", line, None)


def test_a_first_party_pack_installs_from_the_checkout_hermes_runs_from():
    """The packs are not on the package index yet: run from a checkout (an editable install, as here), `hermes
    plugins install terminal` (the CLI's and the docs' hint) hands pip the pack's folder, which needs no index."""
    root = Path(__file__).resolve().parent.parent
    packs = PluginIndex.of([IndexEntry(id="terminal", distribution="hermes-tools-terminal",
                                       requirement="hermes-tools-terminal", version="0.2.0",
                                       entry_point="hermes_plugin_terminal", first_party=True)], source="t.json")
    target = install_target("terminal", packs)
    assert (target.requirement, target.distribution) == (str(root / "hermes_plugins" / "terminal"),
                                                         "hermes-tools-terminal")
    assert install_target("terminal", INDEX).requirement == "hermes-tools-terminal"  # not first-party: as listed

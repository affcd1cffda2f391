"""``hermes plugins install`` and ``uninstall`` in a real venv with real wheels (under the test's own HERMES_HOME):
one progress line per step on stderr, pip's own output only with ``-v`` (or when pip fails), and ``uninstall``
of several plugins at once, with ``-y`` or one confirmation, checking every id before anything is removed."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def env(make_venv):
    return make_venv("cli-install")


def installed_ids(env) -> set[str]:
    result = env.hermes_cli("plugins", "list", "--all", "--json")
    assert result.returncode == 0, result.stderr
    return {row["id"] for row in json.loads(result.stdout)}


def wheel(wheelhouse, name: str) -> str:
    [found] = wheelhouse.glob(f"{name}-*.whl")
    return str(found)


def test_install_shows_a_line_per_step_and_pip_only_with_verbose(env, wheelhouse, tmp_path):
    no_index = f"--index-url={(tmp_path / 'no-index').as_uri()}"
    quiet = env.hermes_cli("plugins", "install", wheel(wheelhouse, "hermes_fixture_declared"), no_index)
    try:
        assert quiet.returncode == 0, quiet.stderr
        steps = quiet.stderr.splitlines()
        assert [step.split()[1] for step in steps] == ["Installing", "pip", "Loading"], steps
        assert "hermes-fixture-declared 1.2.0" in steps[1]
        assert "Successfully installed" not in quiet.stdout + quiet.stderr, "pip's output without -v"
        assert quiet.stdout.strip() == "Installed plugin declared-fixture 1.2.0: fixture_echo"

        verbose = env.hermes_cli("plugins", "install", "-v", "--force-reinstall",
                                 wheel(wheelhouse, "hermes_fixture_declared"), no_index)
        assert verbose.returncode == 0, verbose.stderr
        assert "Successfully installed hermes-fixture-declared" in verbose.stdout + verbose.stderr
    finally:
        env.uninstall("hermes-fixture-declared")


def test_a_pip_failure_shows_pips_output_even_without_verbose(env, tmp_path):
    failed = env.hermes_cli("plugins", "install", "hermes-fixture-declared==99.0",
                            f"--index-url={(tmp_path / 'no-index').as_uri()}")
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert "No matching distribution found for hermes-fixture-declared==99.0" in failed.stderr
    assert failed.stderr.strip().splitlines()[-1] == \
        "Error: pip could not install 'hermes-fixture-declared==99.0' (its output is above)"


def test_uninstall_takes_several_ids_and_yes(env):
    env.install("hermes-fixture-declared", "hermes-fixture-hooked", extra=("--no-deps",))
    try:
        assert {"declared-fixture", "hooked-fixture"} <= installed_ids(env)
        done = env.hermes_cli("plugins", "uninstall", "declared-fixture", "hooked-fixture", "-y")
        assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["Uninstalled hermes-fixture-declared; plugin declared-fixture is gone.",
                                            "Uninstalled hermes-fixture-hooked; plugin hooked-fixture is gone."]
        assert "Successfully uninstalled" not in done.stdout + done.stderr
        assert not {"declared-fixture", "hooked-fixture"} & installed_ids(env)
    finally:
        env.uninstall("hermes-fixture-declared", "hermes-fixture-hooked")


def test_uninstall_checks_every_id_first_and_asks_once(env):
    env.install("hermes-fixture-declared", "hermes-fixture-hooked", extra=("--no-deps",))
    try:
        unknown = env.hermes_cli("plugins", "uninstall", "declared-fixture", "nope", "-y")
        assert unknown.returncode == 1 and "no installed distribution provides plugin 'nope'" in unknown.stderr
        assert "declared-fixture" in installed_ids(env), "an unknown id must change nothing"

        refused = env.run(env.hermes, "plugins", "uninstall", "declared-fixture", "hooked-fixture",
                          input="n\n")
        assert refused.returncode == 1
        assert refused.stdout.count("?") == 1 and "hermes-fixture-declared 1.2.0 (plugin declared-fixture); " \
            "hermes-fixture-hooked" in refused.stdout
        assert {"declared-fixture", "hooked-fixture"} <= installed_ids(env)
    finally:
        env.uninstall("hermes-fixture-declared", "hermes-fixture-hooked")


def test_the_install_line_says_which_tools_need_setting_up(env, wheelhouse, tmp_path):
    no_index = f"--index-url={(tmp_path / 'no-index').as_uri()}"
    # no search provider configured: web_search needs one of these variables, web_extract works at once
    clean = {"SEARXNG_URL": "", "BRAVE_API_KEY": "", "HERMES_HOME": str(tmp_path / "home")}
    installed = env.hermes_cli("plugins", "install", wheel(wheelhouse, "hermes_tools_web"), no_index, env=clean)
    try:
        assert installed.returncode == 0, installed.stderr
        line = installed.stdout.strip()
        assert line.startswith("Installed plugin web ") and "web_extract" in line
        assert "not available until set up: web_search (" in line
        assert "BRAVE_API_KEY" in line.split("web_search (")[1] or "SEARXNG_URL" in line.split("web_search (")[1]
    finally:
        env.uninstall("hermes-tools-web")

"""The real `hermes` executable in a fresh venv: install, list, call, disable, enable, freeze, uninstall."""

from __future__ import annotations

import json
import os

import pytest


@pytest.fixture(scope="module")
def env(make_venv):
    return make_venv("cli")


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    return {"HERMES_HOME": str(home), "HERMES_MARKER_DIR": str(tmp_path)}


def hermes(env, home, *args, **kwargs):
    return env.hermes_cli(*args, env=home, **kwargs)


def ok(result):
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def one_line_error(result):
    """A user error: non-zero exit, one line on stderr, no traceback."""
    assert result.returncode != 0
    assert "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_plugin_lifecycle_end_to_end(env, home, wheelhouse, tmp_path):
    [wheel] = wheelhouse.glob("hermes_fixture_declared-*.whl")
    installed = ok(hermes(env, home, "plugins", "install", str(wheel), "--index-url", (tmp_path / "no-index").as_uri()))
    assert "Installed plugin declared-fixture 1.2.0: fixture_echo" in installed

    listed = json.loads(ok(hermes(env, home, "plugins", "list", "--json")))
    [record] = [r for r in listed if r["id"] == "declared-fixture"]
    assert (record["state"], record["source"], record["tools"], record["imported"]) == \
        ("declared", "pip", ["fixture_echo"], False)
    tools = json.loads(ok(hermes(env, home, "tools", "list", "--json")))
    assert [t["name"] for t in tools] == ["fixture_echo"]
    assert not (tmp_path / "declared-fixture.imported").exists(), "listing must not import a declared plugin"

    assert json.loads(ok(hermes(env, home, "tools", "call", "fixture_echo", '{"text": "hi"}'))) == {"echo": "hi"}
    assert (tmp_path / "declared-fixture.imported").exists()

    assert "Disabled declared-fixture" in ok(hermes(env, home, "plugins", "disable", "declared-fixture"))
    assert json.loads(ok(hermes(env, home, "tools", "list", "--json"))) == []
    listed = json.loads(ok(hermes(env, home, "plugins", "list", "--all", "--json")))
    assert [r["state"] for r in listed if r["id"] == "declared-fixture"] == ["disabled"]
    ok(hermes(env, home, "plugins", "enable", "declared-fixture"))
    assert [t["name"] for t in json.loads(ok(hermes(env, home, "tools", "list", "--json")))] == ["fixture_echo"]

    assert ok(hermes(env, home, "plugins", "freeze")).splitlines() == [f"hermes-fixture-declared @ {wheel.as_uri()}"]

    assert "Uninstalled hermes-fixture-declared" in ok(hermes(env, home, "plugins", "uninstall",
                                                              "declared-fixture", "-y"))
    assert json.loads(ok(hermes(env, home, "plugins", "list", "--all", "--json"))) == []


def test_plugin_with_hooks_is_loaded_and_its_hook_applies(env, home, wheelhouse):
    env.install("hermes-fixture-hooked", extra=("--no-deps",))
    try:
        info = json.loads(ok(hermes(env, home, "plugins", "info", "hooked-fixture", "--json")))
        assert info["hooks"] == ["pre_tool_call"] and info["tools"] == ["fixture_shout"]
        assert json.loads(ok(hermes(env, home, "tools", "call", "fixture_shout", "--arg", "text=hey"))) == \
            {"shout": "HEY"}
        blocked = hermes(env, home, "tools", "call", "fixture_shout", '{"text": "forbidden"}')
        assert blocked.returncode == 1 and "not allowed" in json.loads(blocked.stdout)["error"]
    finally:
        env.uninstall("hermes-fixture-hooked")


def test_tools_show_prints_the_model_schema(env, home):
    env.install("hermes-fixture-declared", extra=("--no-deps",))
    try:
        shown = json.loads(ok(hermes(env, home, "tools", "show", "fixture_echo")))
        assert shown["type"] == "function" and shown["function"]["parameters"]["required"] == ["text"]
        toolset = json.loads(ok(hermes(env, home, "toolsets", "show", "fixture", "--json")))
        assert toolset["tools"] == ["fixture_echo"]
        doctor = hermes(env, home, "plugins", "doctor", "--strict")
        assert doctor.returncode == 0 and "[ok] declared-fixture" in doctor.stdout
    finally:
        env.uninstall("hermes-fixture-declared")


@pytest.mark.parametrize(("args", "expected"), [
    (("plugins", "info", "nope"), "no plugin 'nope' is installed"),
    (("plugins", "disable", "nope"), "no plugin 'nope' is installed"),
    (("plugins", "uninstall", "nope", "-y"), "no installed distribution provides plugin 'nope'"),
    (("tools", "call", "nope"), "unknown tool 'nope'"),
    (("tools", "list", "--toolsets", "nope"), "unknown toolset 'nope'"),
    (("toolsets", "show", "nope"), "unknown toolset 'nope'"),
])
def test_user_errors_are_one_line(env, home, args, expected):
    assert expected in one_line_error(hermes(env, home, *args))


def test_bad_json_arguments_are_one_line(env, home):
    env.install("hermes-fixture-declared", extra=("--no-deps",))
    try:
        assert "not valid JSON" in one_line_error(hermes(env, home, "tools", "call", "fixture_echo", "{oops"))
    finally:
        env.uninstall("hermes-fixture-declared")


def test_invalid_manifest_is_reported_by_validate(env, home, tmp_path):
    folder = tmp_path / "bad"
    folder.mkdir()
    (folder / "plugin.yaml").write_text("name: bad\ntools:\n  - name: x\n    toolset: t\n")
    result = hermes(env, home, "plugins", "validate", str(folder))
    assert result.returncode == 1 and "tools.0.description" in result.stdout and "Traceback" not in result.stderr
    (folder / "plugin.yaml").write_text("name: bad\ntools:\n  - {name: x, toolset: t, description: d, "
                                        "handler: .tools:x}\n")
    assert "valid (1 declared tool" in ok(hermes(env, home, "plugins", "validate", str(folder)))
    imports = hermes(env, home, "plugins", "validate", str(folder), "--imports")
    assert imports.returncode == 1 and "cannot import '.tools:x'" in imports.stdout


def test_invalid_config_is_one_line(env, home):
    with open(os.path.join(home["HERMES_HOME"], "config.yaml"), "w") as handle:
        handle.write("plugins:\n  hook_timeout: soon\n")
    line = one_line_error(hermes(env, home, "tools", "list"))
    assert "config.yaml:2: plugins.hook_timeout" in line


def test_unwritable_config_is_one_line(env, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    env.install("hermes-fixture-declared", extra=("--no-deps",))
    try:
        line = one_line_error(env.hermes_cli("plugins", "disable", "declared-fixture",
                                             env={"HERMES_HOME": str(blocker / "home")}))
        assert "cannot write the configuration" in line
    finally:
        env.uninstall("hermes-fixture-declared")


def test_install_refuses_an_environment_hermes_does_not_live_in(home, tmp_path, shared_site):
    import subprocess
    import venv
    from pathlib import Path

    bare = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False, symlinks=True).create(bare)
    purelib = next((bare / "lib").glob("python3*/site-packages"))
    (purelib / "_shared.pth").write_text(str(shared_site) + "\n")
    source = Path(__file__).resolve().parents[1]  # hermes_core imported from the checkout, not from the venv
    result = subprocess.run([str(bare / "bin" / "python"), "-c", "from hermes_core.cli import main; main()",
                             "plugins", "install", "anything"], capture_output=True, text=True,
                            env={**os.environ, **home, "PYTHONPATH": str(source)})
    line = one_line_error(result)
    assert "is not installed in the environment of" in line


def test_plugin_cli_commands_mount_under_hermes(env, home):
    plugin = os.path.join(home["HERMES_HOME"], "plugins", "greeter")
    os.makedirs(plugin)
    with open(os.path.join(plugin, "__init__.py"), "w") as handle:
        handle.write(
            "def setup(parser):\n    parser.add_argument('name')\n\n"
            "def run(args):\n    print(f'hello {args.name}')\n\n"
            "def register(ctx):\n    ctx.register_cli_command(name='greet', help='Say hello', setup_fn=setup,"
            " handler_fn=run)\n")
    assert ok(hermes(env, home, "greet", "world")).strip() == "hello world"
    assert "greet" in ok(hermes(env, home, "--help"))


def test_search_info_and_install_by_index_id(env, home, wheelhouse, tmp_path):
    registry = tmp_path / "registry-index"
    (registry / "plugins").mkdir(parents=True)
    [wheel] = wheelhouse.glob("hermes_fixture_declared-*.whl")
    ok(hermes(env, home, "index", "fetch", str(wheel), "--root", str(registry)))
    ok(hermes(env, home, "index", "build", "--root", str(registry)))
    index = {**home, "HERMES_INDEX_URL": str(registry / "index.json")}

    found = json.loads(ok(hermes(env, index, "plugins", "search", "fixture_echo", "--json")))
    assert found[0]["id"] == "declared-fixture"
    info = json.loads(ok(hermes(env, index, "plugins", "info", "declared-fixture", "--json")))
    assert info["installed"] is None and [t["name"] for t in info["tools"]] == ["fixture_echo"]

    installed = ok(hermes(env, index, "plugins", "install", "declared-fixture", "--find-links", str(wheelhouse),
                          "--index-url", (tmp_path / "no-index").as_uri()))
    assert "Installed plugin declared-fixture 1.2.0: fixture_echo" in installed
    env.uninstall("hermes-fixture-declared")


def test_unreadable_index_is_one_line(env, home, tmp_path):
    line = one_line_error(hermes(env, {**home, "HERMES_INDEX_URL": str(tmp_path / "missing.json")},
                                 "plugins", "search", "x"))
    assert "cannot read the plugin index" in line and "HERMES_INDEX_URL" in line


def test_inspecting_commands_never_import_declared_or_gated_out_plugins(env, home, tmp_path):
    env.install("hermes-fixture-declared", extra=("--no-deps",))
    gated = os.path.join(home["HERMES_HOME"], "plugins", "gated")
    os.makedirs(gated)
    with open(os.path.join(gated, "__init__.py"), "w") as handle:
        handle.write(f"open({str(tmp_path / 'gated.imported')!r}, 'w').write('x')\ndef register(ctx): pass\n")
    with open(os.path.join(home["HERMES_HOME"], "config.yaml"), "w") as handle:
        handle.write("plugins:\n  disabled: [gated]\n")
    try:
        for args in (("plugins", "list", "--all"), ("plugins", "info", "declared-fixture"),
                     ("plugins", "info", "gated"), ("plugins", "search", "echo"),
                     ("plugins", "validate", "declared-fixture"), ("tools", "list", "--all"),
                     ("tools", "show", "fixture_echo"), ("toolsets", "list"), ("toolsets", "show", "fixture"),
                     ("plugins", "doctor")):
            ok(hermes(env, home, *args))
        assert not (tmp_path / "declared-fixture.imported").exists()
        assert not (tmp_path / "gated.imported").exists()
    finally:
        env.uninstall("hermes-fixture-declared")


def test_list_disable_and_uninstall_work_when_a_plugin_is_broken(env, home):
    env.install("hermes-fixture-broken", extra=("--no-deps",))
    listed = json.loads(ok(hermes(env, home, "plugins", "list", "--json")))
    [broken] = [r for r in listed if r["id"] == "broken-fixture"]
    assert broken["state"] == "error" and "a_dependency_that_is_not_installed" in broken["reason"]
    doctor = hermes(env, home, "plugins", "doctor", "--strict")
    assert doctor.returncode == 1 and "failed to load" in doctor.stdout
    ok(hermes(env, home, "plugins", "disable", "broken-fixture"))
    listed = json.loads(ok(hermes(env, home, "plugins", "list", "--all", "--json")))
    assert [r["state"] for r in listed if r["id"] == "broken-fixture"] == ["disabled"]
    assert "Uninstalled hermes-fixture-broken" in ok(hermes(env, home, "plugins", "uninstall", "broken-fixture",
                                                            "-y"))

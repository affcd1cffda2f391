"""``hermes index fetch``: entries written from wheels read as zips — never installed, never imported."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from hermes_core.cli import cli
from hermes_core.index.build import IndexLayout, fetch, load_entry_file
from hermes_core.index.catalog import INDEX_URL_ENV, index_document, load_index
from hermes_core.index.wheelmeta import WheelError, read_wheel

DEMO_MANIFEST = """\
name: demo
version: 1.0.0
description: A demo plugin
requires_hermes: ">=0.1"
requires_env:
  - DEMO_TOKEN
  - {name: DEMO_URL, description: Where the demo service runs, url: https://example.org/demo}
provides_tools: [demo_ping]
provides_hooks: [pre_tool_call]
tools:
  - name: demo_echo
    toolset: demo
    description: >-
      Echo the text
      back
    handler: hermes_demo_plugin.tools:echo
toolsets:
  - {name: demo-all, includes: [demo]}
"""

#: Importing the fixture plugin is a test failure: fetch and install must read files, never run them.
TRAP = "raise ImportError('plugin code was imported; the index must only read the wheel')\n"


def make_wheel(folder: Path, name: str = "hermes-demo-plugin", version: str = "1.0.0", *,
               entry_points: str | None = "[hermes_agent.plugins]\ndemo = hermes_demo_plugin\n",
               manifest: str | None = DEMO_MANIFEST, metadata: str = "", tools_code: str = TRAP,
               extra: dict[str, str] | None = None) -> Path:
    """A real, installable wheel zipped by hand (METADATA, WHEEL, RECORD with hashes)."""
    package = name.replace("-", "_")
    dist_info = f"{package}-{version}.dist-info"
    files = {f"{package}/__init__.py": TRAP, f"{package}/tools.py": tools_code,
             f"{dist_info}/METADATA": (f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
                                       f"Summary: Demo tools for Hermes\n{metadata}"),
             f"{dist_info}/WHEEL": "Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    if manifest is not None:
        files[f"{package}/plugin.yaml"] = manifest
    files.update(extra or {})
    if entry_points is not None:
        files[f"{dist_info}/entry_points.txt"] = entry_points
    record = []
    for member, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{member},sha256={digest},{len(text.encode())}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = "\n".join(record) + "\n"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{package}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for member, text in files.items():
            archive.writestr(member, text)
    return path


@pytest.fixture
def layout(tmp_path: Path) -> IndexLayout:
    root = tmp_path / "registry-index"
    (root / "plugins").mkdir(parents=True)
    return IndexLayout(root)


def test_fetch_from_a_local_wheel_writes_the_expected_entry_and_imports_nothing(tmp_path, layout):
    links = tmp_path / "links"
    make_wheel(links, metadata="License-Expression: MIT\nKeywords: demo,Echo Tools\nAuthor-email: Ann <a@b.c>\n"
                               "Project-URL: Source, https://github.com/example/demo\n")
    before = set(sys.modules)

    written = fetch("hermes-demo-plugin==1.0.0", layout, find_links=[str(links)], no_index=True)

    assert not any(name.startswith("hermes_demo_plugin") for name in set(sys.modules) - before)
    [(path, entry)] = written
    assert path == layout.plugins_dir / "demo.yaml"
    assert yaml.safe_load(path.read_text()) == {
        "id": "demo", "distribution": "hermes-demo-plugin", "requirement": "hermes-demo-plugin",
        "version": "1.0.0", "summary": "Demo tools for Hermes", "repository": "https://github.com/example/demo",
        "license": "MIT", "author": "Ann", "tags": ["demo", "echo-tools"], "first_party": False,
        "toolsets": ["demo", "demo-all"],
        "tools": [{"name": "demo_echo", "description": "Echo the text back"}, {"name": "demo_ping"}],
        "hooks": ["pre_tool_call"],
        "requires_env": [{"name": "DEMO_TOKEN"},
                         {"name": "DEMO_URL", "description": "Where the demo service runs",
                          "url": "https://example.org/demo"}],
        "requires_hermes": ">=0.1", "entry_point": "hermes_demo_plugin",
    }
    assert load_entry_file(path) == entry


def test_fetch_never_runs_plugin_code_even_in_a_fresh_interpreter(tmp_path, layout):
    wheel = make_wheel(tmp_path / "links")
    code = ("import sys; from pathlib import Path; from hermes_core.index.build import IndexLayout, fetch;"
            f"fetch({str(wheel)!r}, IndexLayout(Path({str(layout.root)!r})));"
            "print(sorted(m for m in sys.modules if m.startswith('hermes_demo')))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_fetch_keeps_hand_added_tags_and_a_tuned_requirement(tmp_path, layout):
    wheel = make_wheel(tmp_path / "links")
    fetch(str(wheel), layout)
    path = layout.entry_path("demo")
    path.write_text(path.read_text().replace("requirement: hermes-demo-plugin", "requirement: hermes-demo-plugin>=1")
                    .replace("first_party: false", "tags: [curated]\nfirst_party: false"))

    [(_, entry)] = fetch(str(make_wheel(tmp_path / "v2", version="2.0.0")), layout)

    assert entry.version == "2.0.0" and entry.tags == ["curated"] and entry.requirement == "hermes-demo-plugin>=1"


def test_fetch_refuses_an_id_that_belongs_to_another_distribution(tmp_path, layout):
    fetch(str(make_wheel(tmp_path / "a")), layout)
    other = make_wheel(tmp_path / "b", name="other-demo",
                       entry_points="[hermes_agent.plugins]\ndemo = other_demo\n")
    with pytest.raises(Exception, match="belongs to 'hermes-demo-plugin'"):
        fetch(str(other), layout)
    [(_, entry)] = fetch(str(other), layout, force=True)
    assert entry.distribution == "other-demo"


def test_legacy_group_callable_value_and_missing_manifest_are_noted(tmp_path, layout):
    wheel = make_wheel(tmp_path, entry_points="[hermes.plugins]\nold = hermes_demo_plugin:register\n", manifest=None)
    [(_, entry)] = fetch(str(wheel), layout)
    assert entry.entry_point_group == "hermes.plugins" and entry.entry_point == "hermes_demo_plugin:register"
    assert entry.tools == [] and entry.hooks == []
    notes = " ".join(entry.notes)
    assert "deprecated entry-point group" in notes and "names a callable" in notes and "no plugin.yaml" in notes


def test_an_invalid_manifest_is_noted_and_still_read_for_facts(tmp_path, layout):
    manifest = "name: demo\nprovides_tools: [x]\nrequires_env:\n  - {name: K, prompt: Your key}\n"
    [(_, entry)] = fetch(str(make_wheel(tmp_path, manifest=manifest)), layout)
    assert entry.tool_names == ["x"] and [env.name for env in entry.requires_env] == ["K"]
    assert any("does not validate as a Hermes manifest" in note and "prompt" in note for note in entry.notes)


def test_a_wheel_without_a_hermes_entry_point_is_not_a_plugin(tmp_path, layout):
    wheel = make_wheel(tmp_path, entry_points="[console_scripts]\ndemo = hermes_demo_plugin:main\n")
    with pytest.raises(WheelError, match="not a Hermes plugin"):
        fetch(str(wheel), layout)
    assert list(layout.plugins_dir.iterdir()) == []


def test_a_file_that_is_not_a_wheel_is_named_in_the_error(tmp_path):
    bogus = tmp_path / "bogus-1.0-py3-none-any.whl"
    bogus.write_text("not a zip")
    with pytest.raises(WheelError, match=r"bogus-1\.0-py3-none-any\.whl: not a readable wheel"):
        read_wheel(bogus)


def test_an_entry_points_file_that_cannot_be_parsed_is_named_in_the_error(tmp_path):
    wheel = make_wheel(tmp_path, entry_points="[hermes_agent.plugins]\na line without a value\n")
    with pytest.raises(WheelError, match=r"hermes_demo_plugin-1\.0\.0-py3-none-any\.whl: entry_points\.txt cannot "
                                         "be parsed"):
        read_wheel(wheel)


def test_metadata_fields_are_read_as_core_metadata(tmp_path):
    wheel = make_wheel(tmp_path, metadata="Keywords: demo,Echo Tools\nProject-URL: Source Code, https://x.test/\n"
                                          "License-Expression: MIT\n\nThe long description.\n")
    with read_wheel(wheel) as info:
        assert (info.name, info.version, info.field("summary")) == ("hermes-demo-plugin", "1.0.0",
                                                                    "Demo tools for Hermes")
        assert info.metadata["keywords"] == ["demo", "Echo Tools"]
        assert info.project_urls == {"sourcecode": "https://x.test/"}
        assert [(ep.group, ep.name, ep.module) for ep in info.plugin_entry_points()] == \
            [("hermes_agent.plugins", "demo", "hermes_demo_plugin")]


def test_a_requirement_pip_cannot_find_fails_with_pips_reason(tmp_path, layout):
    with pytest.raises(WheelError, match="no-such-hermes-plugin: pip failed"):
        fetch("no-such-hermes-plugin", layout, find_links=[str(tmp_path)], no_index=True)


def test_cli_fetch_reports_what_it_wrote_and_fails_on_a_bad_package(tmp_path, layout):
    links = tmp_path / "links"
    make_wheel(links)
    runner = CliRunner()
    result = runner.invoke(cli, ["index", "fetch", "--root", str(layout.root), "--find-links", str(links), "--no-index",
                                   "hermes-demo-plugin"])
    assert result.exit_code == 0, result.output
    assert "wrote registry-index/plugins/demo.yaml (hermes-demo-plugin 1.0.0: 2 tools, 1 hook)" in result.output

    result = runner.invoke(cli, ["index", "fetch", "--root", str(layout.root), "--find-links", str(links), "--no-index",
                                   "missing-plugin"])
    assert result.exit_code == 1 and "missing-plugin: pip failed" in result.output


REGISTERS_IN_CODE = TRAP + """
PING = "demo_ping"


def register(ctx):
    ctx.register_tool(name="demo_echo", toolset="demo", schema={}, handler=print)
    ctx.register_tool(PING, "demo", {}, print)
    ctx.register_tool(name=computed_name(), toolset="demo", schema={}, handler=print)  # not knowable: left out
"""


def test_cli_fetch_counts_the_tools_registered_in_code_when_no_manifest_declares_them(tmp_path, layout):
    links = tmp_path / "links"
    make_wheel(links, manifest=None, tools_code=REGISTERS_IN_CODE)

    result = CliRunner().invoke(cli, ["index", "fetch", "--root", str(layout.root), "--find-links", str(links),
                                      "--no-index", "hermes-demo-plugin"])

    assert result.exit_code == 0, result.output
    assert "(hermes-demo-plugin 1.0.0: 2 tools, 0 hooks)" in result.output
    entry = load_entry_file(layout.plugins_dir / "demo.yaml")
    assert entry.tool_names == ["demo_echo", "demo_ping"]
    assert any("register_tool calls" in note for note in entry.notes)


def test_install_by_id_through_the_index_requirement_from_a_local_wheel_directory(tmp_path, layout, monkeypatch):
    links = tmp_path / "links"
    make_wheel(links)
    [(_, entry)] = fetch("hermes-demo-plugin", layout, find_links=[str(links)], no_index=True)
    index_file = tmp_path / "index.json"
    index_file.write_text(index_document([entry]))
    monkeypatch.setenv(INDEX_URL_ENV, str(index_file))

    requirement = load_index().get("demo").requirement
    target = tmp_path / "target"
    env = {**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--find-links", str(links),
                    "--target", str(target), requirement], check=True, capture_output=True, env=env)

    assert (target / "hermes_demo_plugin" / "plugin.yaml").is_file()
    entry_points = next(target.glob("hermes_demo_plugin-1.0.0.dist-info")) / "entry_points.txt"
    assert "demo = hermes_demo_plugin" in entry_points.read_text()


def skill_document(name: str) -> str:
    return f"---\nname: {name}\ndescription: How to use {name}.\n---\n# {name}\n"


@pytest.mark.parametrize(("entry_points", "listed"), [
    ("[hermes_agent.plugins]\ndemo = hermes_demo_plugin\n", ["demo-guide", "market-review"]),
    ("[hermes_agent.plugins]\ndemo = hermes_demo_plugin\nother = other_plugin\n", ["demo-guide"]),
], ids=["its sole plugin", "one of two plugins"])
def test_fetch_lists_the_skills_a_sole_plugin_ships_outside_its_package(tmp_path, layout, entry_points, listed):
    """stock-analysis-plugin ships its 21 skills in a top-level skills/ folder beside its package: for a wheel of one
    plugin they are its skills (`hermes skills install stock-analysis` needs them listed); for a wheel of several,
    only what is in each plugin's package is known to be its own."""
    wheel = make_wheel(tmp_path / "wheels", entry_points=entry_points, manifest=None, extra={
        "hermes_demo_plugin/skills/demo-guide/SKILL.md": skill_document("demo-guide"),
        "skills/market-review/SKILL.md": skill_document("market-review"),
        "hermes_demo_plugin-1.0.0.data/data/share/x/SKILL.md": skill_document("not-a-skill")})

    [(_, entry), *_] = fetch(str(wheel), layout)

    assert [skill.name for skill in entry.skills] == sorted(listed)
    assert {skill.path for skill in entry.skills} <= {"hermes_demo_plugin/skills/demo-guide", "skills/market-review"}

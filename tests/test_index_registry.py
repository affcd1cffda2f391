"""``registry-index/``: the entries are valid, agree with the first-party packs, and the built files are current."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from hermes_repository_packs import packs  # scripts/packs.py, loaded by the repository's conftest.py

from hermes_core.cli import cli
from hermes_core.index.build import IndexLayout, build_index, find_layout, pack_entry, read_entries, validate_index
from hermes_core.index.catalog import PluginIndexError, entry_json_schema, parse_index

ROOT = Path(__file__).resolve().parent.parent
REGISTRY = ROOT / "registry-index"


def test_the_registry_index_is_valid_and_its_built_files_are_current():
    problems = validate_index(IndexLayout(REGISTRY))
    assert problems == [], "\n".join(problems)


def test_every_first_party_pack_is_indexed_as_first_party():
    entries, _ = read_entries(IndexLayout(REGISTRY))
    first_party = sorted(pack_entry(pack.folder).id for pack in packs())
    assert first_party == sorted(plugin_id for plugin_id, (_, e) in entries.items() if e.first_party)


def test_a_plugin_measured_to_ship_skills_lists_them_for_hermes_skills_install():
    """#46 item 10: `make compat` measured hermes-tweet, stock-analysis and four others contributing skills, but
    their records, written before `index fetch` read skills, listed none: `hermes skills install ID` refused them."""
    import re

    entries, _ = read_entries(IndexLayout(REGISTRY))
    measured = {plugin_id: int(found.group(1)) for plugin_id, (_, entry) in entries.items()
                if entry.compatibility and (found := re.search(r"(\d+) skills?\b", entry.compatibility.contributes))}
    assert {"hermes-tweet", "stock-analysis", "crawlberg"} <= measured.keys()
    assert {plugin_id: len(entries[plugin_id][1].skills) for plugin_id in measured} == measured


def test_hermes_evolve_is_measured_with_the_reload_it_needs():
    """Its record said `partly` because `/evolve now` was refused (no rediscovery in a running process): measured
    again by `make compat` now that it reloads."""
    _, evolve = read_entries(IndexLayout(REGISTRY))[0]["evolve"]
    assert evolve.compatibility is not None and evolve.compatibility.status == "works", evolve.compatibility


def test_the_index_lists_at_least_twenty_published_plugins():
    published = [e for _, (_, e) in read_entries(IndexLayout(REGISTRY))[0].items() if not e.first_party]
    assert len(published) >= 20
    assert {"hermes-github-app-plugin", "blackwall-hermes-plugin"} <= {e.distribution for e in published}


def test_the_published_schema_is_the_models():
    published = json.loads((REGISTRY / "plugin-entry.schema.json").read_text())
    assert published == json.loads(json.dumps(entry_json_schema()))


def test_the_bundled_index_is_the_built_index():
    bundled = ROOT / "hermes_core" / "data" / "index.json"
    assert bundled.read_text() == (REGISTRY / "index.json").read_text()
    assert len(parse_index(bundled.read_text())) == len(list((REGISTRY / "plugins").glob("*.yaml")))


# -- a small repository to break ---------------------------------------------------------------------------------

PACK_PYPROJECT = """\
[project]
name = "hermes-plugin-demo"
version = "0.2.0"
description = "Demo pack"
license = "MIT"

[project.entry-points."hermes_agent.plugins"]
demo = "hermes_plugin_demo"
"""

PACK_MANIFEST = """\
name: demo
tools:
  - {name: demo_tool, toolset: demo, description: Does demo things, handler: "hermes_plugin_demo.x:f"}
"""

GOOD_ENTRY = """\
id: demo
distribution: hermes-plugin-demo
requirement: hermes-plugin-demo
version: 0.2.0
summary: Demo pack
license: MIT
first_party: true
toolsets: [demo]
tools:
  - {name: demo_tool, description: Does demo things}
entry_point: hermes_plugin_demo
"""

OTHER_ENTRY = """\
id: other
distribution: other-plugin
requirement: other-plugin
version: 1.0.0
entry_point: other_plugin
"""


@pytest.fixture
def repo(tmp_path: Path) -> IndexLayout:
    """``registry-index/`` with two valid entries beside ``hermes_plugins/demo`` and ``hermes_core/``; built."""
    pack = tmp_path / "hermes_plugins" / "demo"
    (pack / "hermes_plugin_demo").mkdir(parents=True)
    (pack / "pyproject.toml").write_text(PACK_PYPROJECT)
    (pack / "hermes_plugin_demo" / "plugin.yaml").write_text(PACK_MANIFEST)
    (tmp_path / "hermes_core").mkdir()
    (tmp_path / "hermes_core" / "__init__.py").write_text("")
    plugins = tmp_path / "registry-index" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "demo.yaml").write_text(GOOD_ENTRY)
    (plugins / "other.yaml").write_text(OTHER_ENTRY)
    layout = IndexLayout(tmp_path / "registry-index")
    build_index(layout)
    return layout


def test_the_fixture_repository_is_valid(repo):
    assert validate_index(repo) == []
    assert (repo.root.parent / "hermes_core" / "data" / "index.json").read_text() == repo.index_json.read_text()


def test_bad_yaml_is_reported_with_its_file_and_line(repo):
    (repo.plugins_dir / "other.yaml").write_text(OTHER_ENTRY + "tools: [\n")
    [problem] = validate_index(repo)
    assert problem.startswith("registry-index/plugins/other.yaml:7: invalid YAML: ")


def test_an_unknown_field_is_reported_with_its_file_line_and_name(repo):
    (repo.plugins_dir / "other.yaml").write_text(OTHER_ENTRY + "stars: 5\n")
    assert validate_index(repo) == ["registry-index/plugins/other.yaml:6: stars: Extra inputs are not permitted"]


def test_a_duplicate_id_is_reported_naming_both_files(repo):
    (repo.plugins_dir / "other-copy.yaml").write_text(OTHER_ENTRY)
    problems = validate_index(repo)
    assert "registry-index/plugins/other.yaml: duplicate id 'other', already used by " \
           "registry-index/plugins/other-copy.yaml" in problems
    assert any(p.startswith("registry-index/plugins/other-copy.yaml: id 'other' does not match the file name")
               for p in problems)


def test_a_first_party_entry_that_disagrees_with_its_manifest_is_reported(repo):
    manifest = repo.root.parent / "hermes_plugins" / "demo" / "hermes_plugin_demo" / "plugin.yaml"
    manifest.write_text(PACK_MANIFEST.replace("Does demo things", "Does new things")
                        + "provides_hooks: [pre_tool_call]\n")
    problems = validate_index(repo)
    assert problems == [
        "registry-index/plugins/demo.yaml: disagrees with hermes_plugins/demo: the descriptions of demo_tool differ "
        "from the manifest; run `hermes index fetch hermes_plugins/demo` then `hermes index build`",
        "registry-index/plugins/demo.yaml: disagrees with hermes_plugins/demo: hooks is [], the pack says "
        "['pre_tool_call']; run `hermes index fetch hermes_plugins/demo` then `hermes index build`",
    ]


def test_a_first_party_version_bump_without_a_new_entry_is_reported(repo):
    pyproject = repo.root.parent / "hermes_plugins" / "demo" / "pyproject.toml"
    pyproject.write_text(PACK_PYPROJECT.replace("0.2.0", "0.3.0"))
    assert validate_index(repo) == [
        "registry-index/plugins/demo.yaml: disagrees with hermes_plugins/demo: version is '0.2.0', the pack says "
        "'0.3.0'; run `hermes index fetch hermes_plugins/demo` then `hermes index build`"]


def test_a_pack_without_an_entry_and_a_first_party_entry_without_a_pack_are_reported(repo):
    (repo.plugins_dir / "demo.yaml").unlink()
    (repo.plugins_dir / "other.yaml").write_text(OTHER_ENTRY + "first_party: true\n")
    problems = validate_index(repo)
    assert problems[0].startswith("registry-index/plugins/demo.yaml: missing: the first-party pack hermes_plugins/demo")
    assert problems[1] == ("registry-index/plugins/other.yaml: first_party is true, but no pack under "
                           "hermes_plugins provides the plugin 'other'")


def test_stale_built_files_are_reported_and_build_refreshes_them(repo):
    (repo.plugins_dir / "other.yaml").write_text(OTHER_ENTRY.replace("1.0.0", "1.1.0"))
    assert validate_index(repo) == ["registry-index/index.json: out of date; run `hermes index build`",
                                    "hermes_core/data/index.json: out of date; run `hermes index build`"]
    assert sorted(p.name for p in build_index(repo)) == ["index.json", "index.json"]
    assert build_index(repo) == []  # stable: a second build changes nothing
    assert validate_index(repo) == []


def test_build_refuses_an_invalid_index_and_writes_nothing(repo):
    before = repo.index_json.read_text()
    (repo.plugins_dir / "other.yaml").write_text(OTHER_ENTRY.replace("version: 1.0.0", "version: not-a-version"))
    with pytest.raises(PluginIndexError, match=r"registry-index/plugins/other.yaml:4: version: Value error"):
        build_index(repo)
    assert repo.index_json.read_text() == before


def test_cli_validate_and_build(repo, monkeypatch):
    runner = CliRunner()
    monkeypatch.chdir(repo.root.parent / "hermes_plugins")  # the root is found from a subfolder
    result = runner.invoke(cli, ["index", "validate"])
    assert result.exit_code == 0 and "2 entries, all valid" in result.output

    (repo.plugins_dir / "other.yaml").write_text(OTHER_ENTRY + "stars: 5\n")
    result = runner.invoke(cli, ["index", "validate"])
    assert result.exit_code == 1
    assert "registry-index/plugins/other.yaml:6: stars: Extra inputs are not permitted" in result.output
    assert "Error: the index has 1 problem" in result.output

    result = runner.invoke(cli, ["index", "build", "--root", str(repo.root)])
    assert result.exit_code == 1 and "nothing was built" in result.output


def test_find_layout_without_a_registry_index_is_a_clear_error(tmp_path):
    with pytest.raises(PluginIndexError, match="no registry-index/ folder"):
        find_layout(tmp_path)


def test_fetching_a_first_party_pack_folder_marks_it_first_party(repo, tmp_path):
    """The real packs are fetched from their folders; here a copy of the agent pack is built with pip wheel."""
    pack = repo.root.parent / "hermes_plugins" / "agent"
    shutil.copytree(ROOT / "hermes_plugins" / "agent", pack,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "tests"))
    result = CliRunner().invoke(cli, ["index", "fetch", "--root", str(repo.root), str(pack)])
    assert result.exit_code == 0, result.output
    entries, _ = read_entries(repo)
    assert entries["agent"][1].first_party
    assert entries["agent"][1].model_dump(exclude={"author", "tags", "notes"}) == \
        pack_entry(pack).model_dump(exclude={"author", "tags", "notes"})

"""The plugin index: its entry model, where it is loaded from (file, http, bundled), lookup and search."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ValidationError

from hermes_core import HermesHome
from hermes_core.cli import cli
from hermes_core.index.catalog import (
    INDEX_URL_ENV,
    IndexEntry,
    PluginIndex,
    PluginIndexError,
    bundled_index_path,
    index_document,
    load_index,
)


def entry(plugin_id: str, **fields) -> IndexEntry:
    distribution = fields.pop("distribution", f"hermes-{plugin_id}")
    return IndexEntry(id=plugin_id, distribution=distribution, requirement=fields.pop("requirement", distribution),
                      version=fields.pop("version", "1.0"), entry_point=f"pkg_{plugin_id}".replace("-", "_"),
                      **fields)


SAMPLE = [
    entry("scraper", summary="Extract text from web pages; a fast web_extract alternative",
          tags=["web", "extract"], tools=[{"name": "scrape_page", "description": "web_extract a page"}]),
    entry("web", summary="Fetch pages and search the web", tools=[{"name": "web_extract"}, {"name": "web_search"}],
          toolsets=["web"]),
    entry("notes", summary="Keep notes in Markdown", tags=["memory"], tools=[{"name": "note_add"}],
          hooks=["pre_tool_call"]),
    entry("web-extract-pro", summary="Better page extraction", tools=[{"name": "extract_pro"}]),
]


@pytest.fixture
def index_file(tmp_path: Path) -> Path:
    path = tmp_path / "index.json"
    path.write_text(index_document(SAMPLE))
    return path


# -- the entry model ---------------------------------------------------------------------------------------------

def test_an_entry_rejects_unknown_fields():
    with pytest.raises(ValidationError, match="colour"):
        IndexEntry.model_validate({**entry("x").model_dump(), "colour": "blue"})


def test_the_requirement_must_install_the_entrys_distribution():
    with pytest.raises(ValidationError, match="installs 'other', not the distribution 'hermes-x'"):
        entry("x", requirement="other>=1")
    assert entry("x", requirement="Hermes_X[extra]>=1").requirement == "Hermes_X[extra]>=1"


def test_requires_env_accepts_plain_names():
    assert [env.name for env in entry("x", requires_env=["A", {"name": "B", "secret": True}]).requires_env] == ["A",
                                                                                                               "B"]


def test_the_index_document_is_sorted_and_stable():
    text = index_document(reversed(SAMPLE))
    assert text == index_document(SAMPLE) and text.endswith("}\n")
    assert [p["id"] for p in json.loads(text)["plugins"]] == ["notes", "scraper", "web", "web-extract-pro"]


# -- where the index comes from ----------------------------------------------------------------------------------

def test_the_default_is_the_index_bundled_with_hermes_core():
    plugin_index = load_index()
    assert plugin_index.source.startswith(str(bundled_index_path()))
    assert {"file", "web", "terminal", "code", "agent"} <= set(plugin_index.entries)


def test_hermes_index_url_points_at_another_index_file(index_file, monkeypatch):
    monkeypatch.setenv(INDEX_URL_ENV, str(index_file))
    plugin_index = load_index()
    assert sorted(plugin_index.entries) == ["notes", "scraper", "web", "web-extract-pro"]
    assert INDEX_URL_ENV in plugin_index.source


def test_index_url_in_config_is_used_and_relative_to_the_config_file(index_file, isolated_home, monkeypatch):
    (isolated_home / "my-index.json").write_text(index_file.read_text())
    (isolated_home / "config.yaml").write_text("index:\n  url: my-index.json\n")
    assert len(load_index(home=HermesHome(isolated_home))) == 4

    other = index_file.parent / "other.json"
    other.write_text(index_document(SAMPLE[:1]))
    monkeypatch.setenv(INDEX_URL_ENV, str(other))  # the environment wins over config.yaml
    assert list(load_index(home=HermesHome(isolated_home)).entries) == ["scraper"]


def test_a_folder_or_file_url_names_its_index_json(index_file):
    assert len(load_index(str(index_file.parent))) == 4
    assert len(load_index(index_file.as_uri())) == 4


def test_the_index_loads_from_an_http_url(http_server, monkeypatch):
    base, routes = http_server
    routes["/hermes/index.json"] = (200, index_document(SAMPLE).encode())
    monkeypatch.setenv(INDEX_URL_ENV, f"{base}/hermes/index.json")
    plugin_index = load_index()
    assert plugin_index.get("web").tool_names == ["web_extract", "web_search"]
    assert plugin_index.source == f"{base}/hermes/index.json (from {INDEX_URL_ENV})"


def test_an_http_error_is_reported_with_the_url_and_status(http_server, monkeypatch):
    base, _ = http_server
    monkeypatch.setenv(INDEX_URL_ENV, f"{base}/missing.json")
    with pytest.raises(PluginIndexError, match=rf"cannot read the plugin index at {base}/missing\.json "
                                               rf"\(from {INDEX_URL_ENV}\): HTTP 404"):
        load_index()


def test_an_unreachable_server_is_a_clear_error():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(PluginIndexError, match=f"cannot read the plugin index at http://127.0.0.1:{port}/index.json: "
                                               ".*refused"):
        load_index(f"http://127.0.0.1:{port}/index.json")


def test_a_missing_file_named_in_config_is_a_clear_error(isolated_home):
    (isolated_home / "config.yaml").write_text("index: {url: /nowhere/index.json}\n")
    with pytest.raises(PluginIndexError, match=r"/nowhere/index\.json \(from index\.url in .*config\.yaml\): "
                                               "no such file"):
        load_index(home=HermesHome(isolated_home))


def test_text_that_is_not_an_index_is_a_clear_error(tmp_path, http_server):
    base, routes = http_server
    routes["/page"] = (200, b"<html>hello</html>")
    with pytest.raises(PluginIndexError, match=r"/page: not a plugin index: invalid JSON at line 1"):
        load_index(f"{base}/page")
    wrong = tmp_path / "wrong.json"
    wrong.write_text('{"format": 1, "plugins": [{"id": "x"}]}')
    with pytest.raises(PluginIndexError, match=r"wrong\.json: invalid plugin index: plugins\[0\] \(x\): "
                                               "distribution: Field required"):
        load_index(str(wrong))
    wrong.write_text('{"format": 99, "plugins": []}')
    with pytest.raises(PluginIndexError, match="format 99 is not supported"):
        load_index(str(wrong))


# -- lookup and search -------------------------------------------------------------------------------------------

def test_get_finds_an_id_any_case_or_an_unambiguous_distribution_name():
    plugin_index = PluginIndex.of(SAMPLE)
    assert plugin_index.get("notes").id == "notes"
    assert plugin_index.get("NOTES").id == "notes"
    assert plugin_index.get("Hermes_Scraper").id == "scraper"
    assert plugin_index.get("nothing") is None


def test_search_ranks_an_exact_tool_name_match_first():
    results = PluginIndex.of(SAMPLE).search("web_extract")
    assert [e.id for _, e in results][:2] == ["web", "scraper"]
    assert results[0][0] > results[1][0]


def test_search_ranks_an_exact_id_first_and_covers_summary_tags_tools_and_hooks():
    plugin_index = PluginIndex.of(SAMPLE)
    assert plugin_index.search("web")[0][1].id == "web"
    assert [e.id for _, e in plugin_index.search("memory")] == ["notes"]
    assert [e.id for _, e in plugin_index.search("markdown")] == ["notes"]
    assert [e.id for _, e in plugin_index.search("pre_tool_call")] == ["notes"]
    assert {e.id for _, e in plugin_index.search("extract")} == {"scraper", "web", "web-extract-pro"}


def test_every_search_term_must_match_and_an_empty_query_lists_everything():
    plugin_index = PluginIndex.of(SAMPLE)
    assert [e.id for _, e in plugin_index.search("web notes")] == []
    assert plugin_index.search("web search")[0][1].id == "web"
    assert len(plugin_index.search("  ")) == 4


def test_search_finds_real_plugins_in_the_bundled_index():
    plugin_index = load_index()
    assert plugin_index.search("read_file")[0][1].id == "file"
    assert plugin_index.search("github")[0][1].distribution == "hermes-github-app-plugin"


# -- the commands ------------------------------------------------------------------------------------------------

def test_search_command_prints_ranked_json(index_file):
    result = CliRunner().invoke(cli, ["plugins", "search", "web_extract", "--json", "--index", str(index_file)])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    assert [row["id"] for row in rows][:2] == ["web", "scraper"]
    assert rows[0]["requirement"] == "hermes-web" and rows[0]["installed"] is None and rows[0]["score"] > 0


def test_search_command_text_lists_matches_or_says_there_are_none(index_file):
    runner = CliRunner()
    result = runner.invoke(cli, ["plugins", "search", "notes", "--index", str(index_file)])
    assert result.exit_code == 0 and "notes" in result.output and "Keep notes in Markdown" in result.output
    result = runner.invoke(cli, ["plugins", "search", "zebra", "--index", str(index_file)])
    assert result.exit_code == 0 and "No plugin in the index matches 'zebra'" in result.output


def test_an_unreadable_index_is_one_line_and_exit_1(tmp_path):
    result = CliRunner().invoke(cli, ["plugins", "search", "web", "--index", str(tmp_path / "none.json")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: cannot read the plugin index at {tmp_path / 'none.json'}: no such file"]


def test_index_show_describes_a_plugin_that_is_not_installed(index_file):
    runner = CliRunner()
    result = runner.invoke(cli, ["index", "show", "notes", "--index", str(index_file)])
    assert result.exit_code == 0, result.output
    assert "hermes plugins install notes" in result.output and "pip install hermes-notes" in result.output
    assert "note_add" in result.output and "(not installed)" in result.output
    result = runner.invoke(cli, ["index", "show", "nope", "--index", str(index_file)])
    assert result.exit_code == 1 and "'nope' is not in the plugin index" in result.output

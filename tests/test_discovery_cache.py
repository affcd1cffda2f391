"""The discovery cache: reused while nothing changed, invalidated by installing, removing or editing a plugin."""

from __future__ import annotations

import os

import pytest

from hermes_core import Runtime, discovery
from hermes_core.cache import cached_candidates

MANIFEST = "name: {id}\ndescription: {text}\ntools: []\n"


def ids(records):
    return sorted(r.id for r in records)


@pytest.fixture
def counted(monkeypatch):
    """Counts real discoveries (cache misses)."""
    calls = []
    real = discovery.discover_candidates

    def counting(cwd=None):
        calls.append(1)
        return real(cwd)

    monkeypatch.setattr("hermes_core.cache.discover_candidates", counting)
    return calls


def test_second_discovery_reads_the_cache(plugins, counted, isolated_home):
    plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    assert ids(cached_candidates()) == ["one"]
    assert ids(cached_candidates()) == ["one"]
    assert len(counted) == 1
    assert list((isolated_home / "cache").glob("discovery-*.json"))


def test_adding_a_plugin_is_seen_at_once(plugins, counted):
    plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    cached_candidates()
    plugins.folder("two", manifest=MANIFEST.format(id="two", text="second"))
    assert ids(cached_candidates()) == ["one", "two"]


def test_removing_a_plugin_is_seen_at_once(plugins, counted):
    import shutil

    plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    folder = plugins.folder("two", manifest=MANIFEST.format(id="two", text="second"))
    cached_candidates()
    shutil.rmtree(folder)
    assert ids(cached_candidates()) == ["one"]


def test_editing_a_manifest_is_seen_at_once(plugins, counted):
    folder = plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    cached_candidates()
    path = folder / "plugin.yaml"
    path.write_text(MANIFEST.format(id="one", text="edited"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # coarse file-system clocks
    [record] = cached_candidates()
    assert record.manifest.description == "edited"


def test_installing_a_distribution_is_seen_at_once(plugins, counted):
    cached_candidates()
    plugins.distribution("fresh", "fresh_pkg", manifest=MANIFEST.format(id="fresh", text="new"))
    assert "fresh" in ids(cached_candidates())


def test_no_cache_variable_bypasses_it(plugins, counted, monkeypatch, isolated_home):
    monkeypatch.setenv("HERMES_NO_CACHE", "1")
    plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    cached_candidates()
    cached_candidates()
    assert len(counted) == 2 and not (isolated_home / "cache").exists()


def test_cached_records_load_like_fresh_ones(plugins):
    plugins.folder("decl", manifest="name: decl\ntools:\n  - {name: d_tool, toolset: d, description: x, "
                                    "handler: .t:run}\nunknown_key: 1\n", init="")
    first, second = Runtime(), Runtime()
    first.load_plugins()
    second.load_plugins()
    assert second.plugin("decl").tools == ["d_tool"] and second.plugin("decl").warnings == first.plugin("decl").warnings

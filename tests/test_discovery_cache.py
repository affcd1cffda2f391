"""The discovery cache: reused while nothing changed, invalidated by installing, removing or editing a plugin,
and ignored (then rewritten) when its file holds anything but what Hermes wrote."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from hermes_core import Runtime

MANIFEST = "name: {id}\ndescription: {text}\ntools: []\n"


def ids(candidates):
    return sorted(c.id for c in candidates)


@pytest.fixture
def counted(monkeypatch):
    """Counts real discoveries (cache misses)."""
    import hermes_core.plugins.cache
    import hermes_core.runtime

    calls = []
    real = hermes_core.plugins.cache.discover

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    for module in (hermes_core.plugins.cache, hermes_core.runtime):
        monkeypatch.setattr(module, "discover", counting)
    return calls


def test_second_discovery_reads_the_cache(plugins, counted, isolated_home):
    plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    runtime = plugins.runtime()
    assert ids(runtime.discover()) == ["one"]
    assert ids(runtime.discover()) == ["one"]
    assert len(counted) == 1
    assert list((isolated_home / "cache").glob("discovery-*.json"))


def test_a_home_keeps_the_latest_cache_files_only(plugins, counted, isolated_home):
    # what other environments and earlier versions of Hermes left: each of another key, written before
    from hermes_core.plugins.cache import KEPT_FILES

    cache = isolated_home / "cache"
    cache.mkdir(exist_ok=True)
    left = [cache / f"discovery-{number:08x}.json" for number in range(KEPT_FILES + 3)]
    for age, file in enumerate(left):
        file.write_text('{"key": "another"}')
        os.utime(file, ns=(10**18 - age * 10**9, 10**18 - age * 10**9))
    plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    assert ids(plugins.runtime().discover()) == ["one"]
    kept = sorted(cache.glob("discovery-*.json"))
    assert len(kept) == KEPT_FILES and len(counted) == 1
    assert set(kept) - set(left)  # this environment's own file, just written, is kept
    assert set(kept) & set(left) == set(left[:KEPT_FILES - 1])  # and the most recent of the others


def test_python_writing_bytecode_into_a_plugin_folder_keeps_the_cache(plugins, counted):
    folder = plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    plugins.runtime().discover()
    os.utime(folder, ns=(0, 0))  # (the folder's own stamp changes, as importing the plugin changes it)
    (folder / "__pycache__").mkdir()
    assert ids(plugins.runtime().discover()) == ["one"]
    assert len(counted) == 1


def test_adding_a_plugin_is_seen_at_once(plugins, counted):
    plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    plugins.runtime().discover()
    plugins.folder("two", manifest=MANIFEST.format(id="two", text="second"))
    assert ids(plugins.runtime().discover()) == ["one", "two"]


def test_removing_a_plugin_is_seen_at_once(plugins, counted):
    plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    folder = plugins.folder("two", manifest=MANIFEST.format(id="two", text="second"))
    plugins.runtime().discover()
    shutil.rmtree(folder)
    assert ids(plugins.runtime().discover()) == ["one"]


def test_editing_a_manifest_is_seen_at_once(plugins, counted):
    folder = plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    plugins.runtime().discover()
    path = folder / "plugin.yaml"
    path.write_text(MANIFEST.format(id="one", text="edited"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # coarse file-system clocks
    [candidate] = plugins.runtime().discover()
    assert candidate.manifest.description == "edited"


def test_installing_a_distribution_is_seen_at_once(plugins, counted):
    assert "fresh" not in ids(plugins.runtime().discover())
    plugins.distribution("fresh", "fresh_pkg", manifest=MANIFEST.format(id="fresh", text="new"))
    assert "fresh" in ids(plugins.runtime().discover())


def test_no_cache_variable_bypasses_it(plugins, counted, monkeypatch, isolated_home):
    monkeypatch.setenv("HERMES_NO_CACHE", "1")
    plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    plugins.runtime().discover()
    plugins.runtime().discover()
    assert len(counted) == 2 and not (isolated_home / "cache").exists()


def test_cached_records_load_like_fresh_ones(plugins):
    plugins.folder("decl", manifest="name: decl\ntools:\n  - {name: d_tool, toolset: d, description: x, "
                                    "handler: .t:run}\nunknown_key: 1\n", init="")
    first, second = plugins.runtime(), plugins.runtime()
    first.load_plugins()
    second.load_plugins()
    assert second.plugin("decl").tools == ["d_tool"] and second.plugin("decl").warnings == first.plugin("decl").warnings


def test_each_home_has_its_own_cache(plugins, tmp_path, counted):
    plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    other = tmp_path / "other-home"
    assert ids(plugins.runtime().discover()) == ["one"]
    assert ids(plugins.runtime(home=other).discover()) == []
    assert list((other / "cache").glob("discovery-*.json")) and len(counted) == 2


#: (``KEY`` stands for the key of the file it replaces: the records themselves are what is wrong.)
OTHER_SHAPES = [
    "{}", "[]", "null", '"text"', "\xff\xfe not json",
    '{"key": KEY, "stamps": [], "watched": [], "records": [{"id": "x", "unknown": 1}]}\nnull',
    '{"key": KEY, "stamps": [], "watched": [], "records": [{"id": "x", "source": "user", "module": "m", '
    '"outline": {"tools": "not a list"}, "warnings": []}]}\nnull',
    '{"key": KEY, "stamps": [], "watched": [], "records": [{"id": "x", "source": "user", "module": "m", '
    '"outline": {"tools": [["x_tool", "x", false]]}, "warnings": []}]}\nnull',
    '{"key": KEY, "stamps": [], "watched": [], "records": [{"id": "x", "source": "user", "module": "m", '
    '"outline": {"tools": [["bad name\\u200b", "x", false, "", null]]}, "warnings": []}]}\nnull',
]


def header(cache_file):
    """The first line of a discovery cache file: the key, the watched files and the candidates' outlines."""
    return json.loads(cache_file.read_text().split("\n")[0])


@pytest.mark.parametrize("content", OTHER_SHAPES)
def test_a_cache_file_of_another_shape_is_ignored_and_rewritten(plugins, counted, isolated_home, content):
    plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    plugins.runtime().discover()
    [cache_file] = (isolated_home / "cache").glob("discovery-*.json")
    key = header(cache_file)["key"]
    cache_file.write_text(content.replace("KEY", json.dumps(key)), encoding="latin-1")

    assert ids(plugins.runtime().discover()) == ["one"]
    assert len(counted) == 2
    assert header(cache_file)["key"] == key
    assert ids(plugins.runtime().discover()) == ["one"] and len(counted) == 2
    runtime = plugins.runtime()
    runtime.load_plugins()
    assert runtime.plugin("one").state == "declared"


def test_a_cache_file_of_another_key_under_the_same_name_is_not_used(plugins, counted, isolated_home):
    """The file name is only a checksum of the key: a file holding another key (a checksum collision, or another
    interpreter's or sys.path's candidates) is a miss, whatever it lists."""
    plugins.folder("one", manifest=MANIFEST.format(id="one", text="first"))
    plugins.runtime().discover()
    [cache_file] = (isolated_home / "cache").glob("discovery-*.json")
    stored = header(cache_file)
    cache_file.write_text(json.dumps({**stored, "key": stored["key"].replace("[", "[ ", 1), "records": []}))

    assert ids(plugins.runtime().discover()) == ["one"] and len(counted) == 2


def test_runtime_with_injected_entry_points_discovers_only_those(plugins):
    plugins.distribution("fresh", "fresh_pkg", manifest=MANIFEST.format(id="fresh", text="new"))
    assert ids(plugins.runtime().discover()) == ["fresh"]
    assert ids(Runtime(entry_points=()).discover()) == []


DECLARED = ("name: {id}\ntools:\n  - {{name: {id}_tool, toolset: {id}, description: The {id} tool, "
            "handler: .tools:run, annotations: {{read_only: true}}}}\n")
HANDLER = {"tools.py": "def run(args, **kwargs):\n    return 'ran ' + __name__\n"}


def test_a_cached_load_reads_a_tools_details_only_when_the_tool_is_used(plugins, isolated_home):
    """The cache's first line names each declared tool with what a listing shows of it; the manifest lines after it
    are read per plugin, when one of its tools is defined or called: a line gone bad harms only the tools of its
    plugin, which say why, and the file is removed so that the next process discovers again."""
    for plugin_id in ("alpha", "beta"):
        plugins.folder(plugin_id, manifest=DECLARED.format(id=plugin_id), files=HANDLER)
    plugins.runtime().discover()
    [cache_file] = (isolated_home / "cache").glob("discovery-*.json")
    lines = cache_file.read_text().split("\n")
    assert [record["outline"]["tools"] for record in json.loads(lines[0])["records"]] == [
        [["alpha_tool", "alpha", False, "The alpha tool", {"read_only": True}]],
        [["beta_tool", "beta", False, "The beta tool", {"read_only": True}]]]
    cache_file.write_text("\n".join([*lines[:2], '{"tools": "gone bad"', *lines[3:]]))

    runtime = plugins.runtime()
    runtime.load_plugins()

    assert sorted(runtime.registry.names()) == ["alpha_tool", "beta_tool"]
    beta = runtime.registry.get("beta_tool")
    assert (beta.description, beta.annotations.read_only) == ("The beta tool", True)  # from the first line
    assert cache_file.exists()  # listed: no manifest line read
    assert runtime.handle_function_call("alpha_tool", {}).startswith("ran hermes_plugins.alpha")
    assert cache_file.exists()  # beta's line was not read: nothing used its tool
    result = json.loads(runtime.handle_function_call("beta_tool", {}))
    assert "changed while Hermes read the discovery cache" in result["error"]
    assert not cache_file.exists()
    fresh = plugins.runtime()
    fresh.load_plugins()
    assert fresh.handle_function_call("beta_tool", {}).startswith("ran hermes_plugins.beta")


def test_a_declared_tool_is_listed_and_defined_without_importing_its_plugin(plugins):
    plugins.folder("beta", manifest=DECLARED.format(id="beta"), init="", files=HANDLER)
    plugins.runtime().discover()
    runtime = plugins.runtime()
    runtime.load_plugins()

    [definition] = runtime.get_tool_definitions()

    assert definition == {"type": "function", "function": {
        "name": "beta_tool", "description": "The beta tool", "parameters": {"type": "object", "properties": {}}}}
    assert runtime.registry.get("beta_tool").annotations.read_only is True
    assert not plugins.imported("beta")
    assert runtime.handle_function_call("beta_tool", {}).startswith("ran hermes_plugins.beta")
    assert plugins.imported("beta")

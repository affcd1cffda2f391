"""The first-party packs are listed once, by their folders: scripts/packs.py reads hermes_plugins/*/pyproject.toml,
and the Makefile, scripts/build_dist.py, pytest's path, mypy and the tests take the list from there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hermes_repository_packs import Pack, packs  # scripts/packs.py, loaded by the repository's conftest.py

from hermes_core._version import __version__
from hermes_core.authoring.testing import scaled_timeout

ROOT = Path(__file__).resolve().parent.parent

DEMO_PYPROJECT = f"""\
[build-system]
requires = ["hatchling>=1.24"]
build-backend = "hatchling.build"

[project]
name = "hermes-tools-demo"
version = "{__version__}"
description = "Hermes tool pack: a demonstration"
readme = "README.md"
requires-python = ">=3.11"
license = "MIT"
dependencies = ["hermes-tools>=0.2"]

[project.entry-points."hermes_agent.plugins"]
demo = "hermes_plugin_demo"

[tool.hatch.build.targets.wheel]
packages = ["hermes_plugin_demo"]
"""
DEMO_MANIFEST = f"""\
manifest_version: 1
name: demo
version: {__version__}
description: A demonstration pack
tools:
  - name: demo_echo
    toolset: demo
    description: Echo the text back
    parameters: {{type: object, properties: {{text: {{type: string}}}}, required: [text]}}
    handler: hermes_plugin_demo.tools:echo
    annotations: {{read_only: true, open_world: false}}
"""
#: A type error mypy must find: it proves mypy reads the new pack with no edit to pyproject.toml.
DEMO_TOOLS = """\
from __future__ import annotations


def echo(args: dict[str, str], **kwargs: object) -> str:
    count: int = args["text"]
    return str(count)
"""
DEMO_TEST = """\
from hermes_plugin_demo.tools import echo


def test_the_demo_pack_imports_from_its_folder():
    assert echo({"text": "hi"}) == "hi"
"""


def repository_copy(target: Path) -> Path:
    """The repository's files (tracked and new, not ignored) copied to ``target``."""
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    if (ROOT / ".mypy_cache").is_dir():  # mypy's cache is keyed on file contents: the copy reuses it
        shutil.copytree(ROOT / ".mypy_cache", target / ".mypy_cache")
    return target


def add_demo_pack(root: Path) -> None:
    folder = root / "hermes_plugins" / "demo"
    (folder / "hermes_plugin_demo").mkdir(parents=True)
    (folder / "tests").mkdir()
    (folder / "pyproject.toml").write_text(DEMO_PYPROJECT)
    (folder / "README.md").write_text("# hermes-tools-demo\n\nA demonstration pack.\n")
    (folder / "hermes_plugin_demo" / "__init__.py").write_text('"""A demonstration pack."""\n')
    (folder / "hermes_plugin_demo" / "plugin.yaml").write_text(DEMO_MANIFEST)
    (folder / "hermes_plugin_demo" / "tools.py").write_text(DEMO_TOOLS)
    (folder / "tests" / "test_demo_pack.py").write_text(DEMO_TEST)


def test_the_packs_are_the_folders_that_hold_a_pyproject(tmp_path: Path):
    (tmp_path / "hermes_plugins" / "notes").mkdir(parents=True)
    (tmp_path / "hermes_plugins" / "notes" / "pyproject.toml").write_text('[project]\nname = "hermes-tools-notes"\n')
    (tmp_path / "hermes_plugins" / "__pycache__").mkdir()  # a folder without a pyproject is no pack

    assert packs(tmp_path) == [Pack("notes", tmp_path / "hermes_plugins" / "notes")]
    assert packs(tmp_path)[0].manifest == tmp_path / "hermes_plugins" / "notes" / "hermes_plugin_notes" / "plugin.yaml"


def test_a_pack_whose_distribution_is_misnamed_is_refused_naming_its_pyproject(tmp_path: Path):
    (tmp_path / "hermes_plugins" / "notes").mkdir(parents=True)
    (tmp_path / "hermes_plugins" / "notes" / "pyproject.toml").write_text('[project]\nname = "notes-tools"\n')

    with pytest.raises(ValueError, match=r"hermes_plugins/notes/pyproject.toml: the distribution is named "
                                         r"'notes-tools'; a pack in hermes_plugins/notes/ is 'hermes-tools-notes'"):
        packs(tmp_path)


@pytest.mark.slow
def test_a_new_pack_folder_is_picked_up_by_make_dist_the_release_and_annotation_tests_and_mypy(tmp_path: Path):
    root = repository_copy(tmp_path / "repository")
    add_demo_pack(root)
    venv_bin = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{venv_bin}{os.pathsep}{os.environ['PATH']}"}

    # the Makefile: what `make demo` and `make bench` install, and `make dist` runs build_dist.py, which builds it
    planned = subprocess.run(["make", "-n", "demo", f"PYTHON={sys.executable}"], cwd=root, env=env,
                             capture_output=True, text=True, timeout=scaled_timeout(60))
    assert planned.returncode == 0, planned.stderr
    assert " ./hermes_plugins/demo" in planned.stdout

    # the release test (which runs what `make dist` runs), the annotation tests and the pack's own tests
    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-v",
         "tests/test_release.py::test_dist_holds_a_checked_sdist_and_wheel_of_each_of_the_distributions",
         "tests/test_release.py::test_the_distributions_share_one_version_and_a_wrong_tag_is_refused",
         "tests/test_annotations.py::test_every_first_party_tool_says_whether_it_is_read_only",
         "hermes_plugins/demo/tests"],
        cwd=root, env=env, capture_output=True, text=True, timeout=scaled_timeout(600))
    assert tests.returncode == 0, tests.stdout[-4000:] + tests.stderr[-2000:]
    assert "test_every_first_party_tool_says_whether_it_is_read_only[demo] PASSED" in tests.stdout
    assert "test_demo_pack.py::test_the_demo_pack_imports_from_its_folder PASSED" in tests.stdout

    # mypy checks the new pack's package, as its own top-level package
    typed = subprocess.run([str(venv_bin / "mypy")], cwd=root, env=env, capture_output=True, text=True,
                           timeout=scaled_timeout(600))
    assert typed.returncode == 1
    assert ('hermes_plugins/demo/hermes_plugin_demo/tools.py:5: error: Incompatible types in assignment '
            '(expression has type "str", variable has type "int")') in typed.stdout

"""No lost edits: ``patch`` and ``write_file`` of one file are serialised across threads and processes, each
re-reading the file under the lock, so every edit reported as a success is in the file."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import hermes_plugin_file
import pytest
from hermes_plugin_file.patch import patch
from hermes_plugin_file.textfile import unchanged_since
from hermes_plugin_file.write import write_file

TIMEOUT = 300 * float(os.environ.get("HERMES_TEST_TIMEOUT_SCALE", "1"))


def numbered(count: int) -> str:
    return "".join(f"line {i}: old\n" for i in range(count))


def test_patches_from_ten_threads_all_land(workspace: Path, call) -> None:
    target = workspace / "shared.txt"
    target.write_text(numbered(200))

    def edit(i: int) -> dict:
        return call(patch, path="shared.txt", old_string=f"line {i}: old", new_string=f"line {i}: new")

    with ThreadPoolExecutor(10) as pool:
        results = list(pool.map(edit, range(200)))

    assert [r for r in results if "error" in r] == []
    assert target.read_text() == numbered(200).replace("old", "new")


def test_write_file_and_patch_of_one_file_are_serialised(workspace: Path, call) -> None:
    target = workspace / "mixed.txt"
    target.write_text("start\n")

    def rewrite(i: int) -> dict:
        if i % 2:
            return call(write_file, path="mixed.txt", content=f"version {i}\n")
        return call(patch, path="mixed.txt", old_string="\n", new_string=f" +{i}\n")

    with ThreadPoolExecutor(10) as pool:
        results = list(pool.map(rewrite, range(100)))
    assert all("error" not in r for r in results[1::2])  # every write lands; a patch may find nothing to patch
    text = target.read_text()
    assert text.startswith(("version ", "start")) and text.count("\n") == 1, text


SCRIPT = """
import json, sys
from pathlib import Path
from hermes_core import Runtime
from hermes_core.plugins.discovery import candidate_from_module

home, workspace, first, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
runtime = Runtime(home=Path(home), entry_points=(), workspace=workspace)
runtime.load_candidate(candidate_from_module("hermes_plugin_file", "file"))
failures = []
for i in range(first, first + count):
    result = json.loads(runtime.handle_function_call(
        "patch", {"path": "shared.txt", "old_string": f"line {i}: old", "new_string": f"line {i}: new"}))
    if "error" in result:
        failures.append(result["error"])
runtime.close()
print(json.dumps(failures))
"""


def test_patches_from_two_processes_all_land(workspace: Path, hermes_home: Path, tmp_path: Path) -> None:
    target = workspace / "shared.txt"
    target.write_text(numbered(80))
    script = tmp_path / "edit.py"
    script.write_text(textwrap.dedent(SCRIPT))
    pack = Path(hermes_plugin_file.__file__).resolve().parent.parent  # importable whether installed or not
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(pack), os.environ.get("PYTHONPATH")]))}
    processes = [subprocess.Popen([sys.executable, str(script), str(hermes_home), str(workspace), str(first), "40"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
                 for first in (0, 40)]
    outputs = [process.communicate(timeout=TIMEOUT) for process in processes]

    assert [process.returncode for process in processes] == [0, 0], outputs
    assert [out.strip() for out, _ in outputs] == ["[]", "[]"], outputs
    assert target.read_text() == numbered(80).replace("old", "new")


def test_a_file_replaced_after_it_was_read_is_noticed(workspace: Path) -> None:
    target = workspace / "moved.txt"
    target.write_text("one\n")
    before = os.stat(target)
    assert unchanged_since(target, before)
    replacement = workspace / "other.txt"
    replacement.write_text("two\n")
    os.replace(replacement, target)
    assert not unchanged_since(target, before)


def test_write_file_refuses_a_planted_lock_link_and_writes_nothing(workspace: Path, tmp_path: Path, call) -> None:
    from hermes_core.config import filelock

    if sys.platform == "win32":
        pytest.skip("symlinks need privileges on Windows")
    target = workspace / "notes.md"
    key = hashlib.sha256(os.path.realpath(target).encode()).hexdigest()[:32]
    planted = filelock._lock_folder() / f"{key}.lock"
    outside = tmp_path / "created-through-the-lock"
    planted.symlink_to(outside)
    try:
        result = call(write_file, path="notes.md", content="hi")
    finally:
        planted.unlink()
    assert "cannot be locked for editing" in result["error"] and "symbolic link" in result["error"]
    assert not outside.exists() and not target.exists()

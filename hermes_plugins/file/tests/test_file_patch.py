"""patch: exact string replacement with the unique-match rule and replace_all."""

from __future__ import annotations

from pathlib import Path

import pytest
from hermes_plugin_file.patch import patch


@pytest.fixture
def module(workspace: Path) -> Path:
    path = workspace / "mod.py"
    path.write_text("def f():\n    return 1\n\n\ndef g():\n    return 1\n")
    return path


def test_unique_match_is_replaced_with_a_diff(module, call) -> None:
    result = call(patch, path="mod.py", old_string="f():\n    return 1", new_string="f():\n    return 2")

    assert result["replacements"] == 1
    assert "-    return 1\n+    return 2\n" in result["diff"]
    assert result["diff"].startswith("--- a/mod.py\n+++ b/mod.py\n")
    assert module.read_text() == "def f():\n    return 2\n\n\ndef g():\n    return 1\n"


def test_ambiguous_match_is_refused_and_counted(module, call) -> None:
    before = module.read_text()

    error = call(patch, path="mod.py", old_string="return 1", new_string="return 2")["error"]

    assert "occurs 2 times in 'mod.py'" in error
    assert "replace_all" in error
    assert module.read_text() == before


def test_replace_all_replaces_every_occurrence(module, call) -> None:
    result = call(patch, path="mod.py", old_string="return 1", new_string="return 0", replace_all=True)

    assert result["replacements"] == 2
    assert module.read_text().count("return 0") == 2


def test_missing_text_is_refused(module, call) -> None:
    error = call(patch, path="mod.py", old_string="return  1", new_string="x")["error"]
    assert "old_string was not found in 'mod.py'" in error


def test_empty_new_string_deletes(module, call) -> None:
    call(patch, path="mod.py", old_string="\n\ndef g():\n    return 1\n", new_string="")
    assert module.read_text() == "def f():\n    return 1\n"


def test_empty_old_string_is_refused(module, call) -> None:
    assert "old_string is empty" in call(patch, path="mod.py", old_string="", new_string="x")["error"]


def test_identical_strings_are_refused(module, call) -> None:
    assert "identical" in call(patch, path="mod.py", old_string="f", new_string="f")["error"]


def test_missing_file_is_named(workspace, call) -> None:
    assert call(patch, path="gone.py", old_string="a", new_string="b")["error"] == "file not found: 'gone.py'"


def test_binary_file_is_refused(workspace, call) -> None:
    (workspace / "blob.bin").write_bytes(b"abc\x00def")
    assert "binary file" in call(patch, path="blob.bin", old_string="abc", new_string="x")["error"]


def test_invalid_utf8_is_refused_untouched(workspace, call) -> None:
    latin = workspace / "latin1.txt"
    latin.write_bytes("café\n".encode("latin-1"))

    error = call(patch, path="latin1.txt", old_string="caf", new_string="tea")["error"]

    assert "not valid UTF-8" in error
    assert latin.read_bytes() == "café\n".encode("latin-1")


def test_crlf_endings_are_kept(workspace, call) -> None:
    dos = workspace / "dos.txt"
    dos.write_bytes(b"one\r\ntwo\r\n")
    call(patch, path="dos.txt", old_string="two", new_string="2")
    assert dos.read_bytes() == b"one\r\n2\r\n"


@pytest.mark.parametrize("spelling", ["sub/../notes.txt", "{workspace}/notes.txt", "link", "~/../notes.txt",
                                      "sub/./../notes.txt"])
def test_two_edits_of_one_file_spelled_differently_in_one_batch_both_land(hermes_runtime, call, workspace,
                                                                           monkeypatch, spelling) -> None:
    (workspace / "sub").mkdir()
    (workspace / "link").symlink_to(workspace / "notes.txt")
    monkeypatch.setenv("HOME", str(workspace / "sub"))
    calls = [{"name": "patch", "arguments": {"path": "notes.txt", "old_string": "one\n", "new_string": "1\n"}},
             {"name": "patch", "arguments": {"path": spelling.format(workspace=workspace), "old_string": "two\n",
                                             "new_string": "2\n"}}]
    for attempt in range(30):  # run in parallel, one edit was lost in about half of the attempts
        (workspace / "notes.txt").write_text("one\ntwo\n")
        results = hermes_runtime.run_tool_calls(calls)
        assert all("error" not in result for result in results), results
        assert (workspace / "notes.txt").read_text() == "1\n2\n", f"an edit was lost on attempt {attempt}"

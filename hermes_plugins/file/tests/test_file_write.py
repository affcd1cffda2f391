"""write_file: creating and replacing files inside the workspace."""

from __future__ import annotations

import stat

from hermes_plugin_file.write import write_file


def test_write_creates_parent_directories(workspace, call) -> None:
    result = call(write_file, path="a/b/c/new.txt", content="hello\n")

    assert result == {"path": "a/b/c/new.txt", "bytes_written": 6, "created": True}
    assert (workspace / "a" / "b" / "c" / "new.txt").read_text() == "hello\n"


def test_write_replaces_an_existing_file(workspace, call) -> None:
    (workspace / "notes.md").write_text("old content that is longer\n")

    result = call(write_file, path="notes.md", content="new\n")

    assert result["created"] is False
    assert (workspace / "notes.md").read_text() == "new\n"


def test_write_counts_utf8_bytes(workspace, call) -> None:
    assert call(write_file, path="u.txt", content="héllo ✓")["bytes_written"] == len("héllo ✓".encode())
    assert (workspace / "u.txt").read_text(encoding="utf-8") == "héllo ✓"


def test_replacing_keeps_the_file_mode(workspace, call) -> None:
    script = workspace / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o750)

    call(write_file, path="run.sh", content="echo new\n")

    assert stat.S_IMODE(script.stat().st_mode) == 0o750
    assert not [p for p in workspace.iterdir() if p.name.endswith(".tmp")]


def test_writing_a_directory_is_refused(workspace, call) -> None:
    (workspace / "src").mkdir()
    assert "'src' is a directory" in call(write_file, path="src", content="x")["error"]


def test_parent_that_is_a_file_is_a_clear_error(workspace, call) -> None:
    (workspace / "plain.txt").write_text("x")
    error = call(write_file, path="plain.txt/child.txt", content="x")["error"]
    assert error.startswith("write_file: 'plain.txt/child.txt': ")

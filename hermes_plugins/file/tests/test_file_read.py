"""read_file: windows of numbered lines, and the refusals for binary, huge and missing files."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest
from hermes_plugin_file.patch import patch
from hermes_plugin_file.read import MAX_CONTENT_CHARS, MAX_LINE_CHARS, read_file
from hermes_plugin_file.search import search_files

from hermes_core.authoring.testing import scaled_timeout


@pytest.fixture
def ten_lines(workspace: Path) -> Path:
    path = workspace / "ten.txt"
    path.write_text("".join(f"line {n}\n" for n in range(1, 11)))
    return path


def test_whole_file_is_numbered(ten_lines, call) -> None:
    result = call(read_file, path="ten.txt")

    assert result["content"].splitlines()[0] == "     1|line 1"
    assert result["content"].splitlines()[-1] == "    10|line 10"
    assert result["total_lines"] == 10
    assert "next_offset" not in result


def test_offset_and_limit_select_a_window(ten_lines, call) -> None:
    result = call(read_file, path="ten.txt", offset=3, limit=2)

    assert result["content"] == "     3|line 3\n     4|line 4"
    assert result["lines_returned"] == 2
    assert result["next_offset"] == 5
    assert "offset=5" in result["note"]


def test_last_window_has_no_next_offset(ten_lines, call) -> None:
    result = call(read_file, path="ten.txt", offset=9, limit=5)
    assert result["content"] == "     9|line 9\n    10|line 10"
    assert "next_offset" not in result


def test_offset_past_the_end_is_an_error(ten_lines, call) -> None:
    assert call(read_file, path="ten.txt", offset=11)["error"] == (
        "offset 11 is past the end of 'ten.txt', which has 10 lines"
    )


def test_offset_below_one_is_an_error(ten_lines, call) -> None:
    assert "offset: 0 is less than the minimum of 1" in call(read_file, path="ten.txt", offset=0)["error"]


def test_empty_file_reads_as_no_lines(workspace, call) -> None:
    (workspace / "empty.txt").write_text("")
    result = call(read_file, path="empty.txt")
    assert (result["content"], result["total_lines"]) == ("", 0)


def test_crlf_line_endings_are_not_shown(workspace, call) -> None:
    (workspace / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    assert call(read_file, path="dos.txt")["content"] == "     1|one\n     2|two"


def test_binary_file_is_refused(workspace, call) -> None:
    (workspace / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    error = call(read_file, path="image.png")["error"]
    assert "'image.png' is a binary file" in error


def test_file_over_the_size_limit_is_refused(workspace, file_settings, call) -> None:
    file_settings(max_file_bytes=1000)
    (workspace / "big.log").write_text("x" * 2000)

    error = call(read_file, path="big.log")["error"]

    assert "2000 bytes, over the 1000-byte limit" in error
    assert "max_file_bytes" in error


def test_long_lines_are_cut(workspace, call) -> None:
    (workspace / "minified.js").write_text("a" * (MAX_LINE_CHARS + 500) + "\n")
    content = call(read_file, path="minified.js")["content"]
    assert content.endswith(f"… [line truncated, {MAX_LINE_CHARS + 500} chars]")
    assert len(content) < MAX_LINE_CHARS + 100


def test_output_stops_at_the_character_budget(workspace, call) -> None:
    line_count = 2 * MAX_CONTENT_CHARS // 1000
    (workspace / "wide.txt").write_text(("w" * 1000 + "\n") * line_count)

    result = call(read_file, path="wide.txt", limit=2000)

    assert len(result["content"]) <= MAX_CONTENT_CHARS
    assert result["total_lines"] == line_count
    assert result["next_offset"] == result["lines_returned"] + 1 < line_count


def test_missing_file_is_named(workspace, call) -> None:
    assert call(read_file, path="nope.txt")["error"] == "file not found: 'nope.txt'"


def test_directory_is_refused(workspace, call) -> None:
    (workspace / "docs").mkdir()
    assert "is a directory" in call(read_file, path="docs")["error"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are Unix's")
def test_a_fifo_is_refused_without_waiting_for_a_writer(workspace, call) -> None:
    fifo = workspace / "pipe"
    os.mkfifo(fifo)
    answers: list[dict] = []
    reader = threading.Thread(target=lambda: answers.append(call(read_file, path="pipe")), daemon=True)
    reader.start()
    reader.join(scaled_timeout(30))
    if reader.is_alive():  # it blocked: let it go before failing
        with open(fifo, "w"):
            pass
    assert answers and answers[0] == {"error": "'pipe' is a FIFO; the file tools read regular files only"}


@pytest.mark.skipif(not hasattr(os, "link"), reason="no hard links")
def test_a_hard_link_to_a_file_outside_the_workspace_is_not_read(workspace, outside, call) -> None:
    os.link(outside / "secret.txt", workspace / "innocent.txt")
    result = call(read_file, path="innocent.txt")
    assert "has 2 names (hard links)" in result["error"] and "allow_hard_links" in result["error"]
    assert "TOP SECRET" not in json.dumps(call(patch, path="innocent.txt", old_string="TOP", new_string="X"))
    assert call(search_files, pattern="SECRET", target="content")["matches"] == []
    assert (outside / "secret.txt").read_text() == "TOP SECRET\n"


@pytest.mark.skipif(not hasattr(os, "link"), reason="no hard links")
def test_allow_hard_links_reads_them(workspace, outside, file_settings, call) -> None:
    file_settings(allow_hard_links=True)
    os.link(outside / "secret.txt", workspace / "store-linked.txt")  # as uv and pnpm install packages
    assert call(read_file, path="store-linked.txt")["content"] == "     1|TOP SECRET"

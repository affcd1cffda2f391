"""search_files: regex over contents, glob over names, limits and what is skipped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hermes_plugin_file.search import search_files

from hermes_core.authoring.testing import scaled_timeout


@pytest.fixture
def tree(workspace: Path) -> Path:
    files = {
        "README.md": "# Project\nTODO: write docs\n",
        "src/app.py": "import os\n# TODO: handle errors\ndef main():\n    pass\n",
        "src/util.py": "def helper():\n    return 'todo later'\n",
        "src/pkg/deep.py": "# TODO deep\n",
        "notes/todo.txt": "TODO one\nTODO two\nTODO three\n",
        ".git/config": "TODO hidden\n",
        "node_modules/lib/index.js": "// TODO vendored\n",
    }
    for name, text in files.items():
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text(text)
    (workspace / "logo.png").write_bytes(b"\x89PNG\x00\x00TODO")
    return workspace


def test_regex_reports_path_line_and_text(tree, call) -> None:
    result = call(search_files, pattern=r"^# TODO:? \w+", path="src")

    assert result["matches"] == [
        {"path": "src/app.py", "line": 2, "text": "# TODO: handle errors"},
        {"path": "src/pkg/deep.py", "line": 1, "text": "# TODO deep"},
    ]
    assert result["truncated"] is False


def test_limit_caps_matches_and_says_so(tree, call) -> None:
    result = call(search_files, pattern="TODO", limit=3)

    assert result["count"] == len(result["matches"]) == 3
    assert result["truncated"] is True


def test_exactly_limit_matches_is_not_truncated(tree, call) -> None:
    result = call(search_files, pattern="TODO", path="notes", limit=3)
    assert (result["count"], result["truncated"]) == (3, False)


def test_ignore_case(tree, call) -> None:
    assert call(search_files, pattern="todo later")["count"] == 1
    assert call(search_files, pattern="TODO LATER")["count"] == 0
    assert call(search_files, pattern="TODO LATER", ignore_case=True)["count"] == 1


def test_file_glob_narrows_a_content_search(tree, call) -> None:
    paths = {m["path"] for m in call(search_files, pattern="TODO", file_glob="*.py")["matches"]}
    assert paths == {"src/app.py", "src/pkg/deep.py"}


def test_hidden_dependency_and_binary_files_are_skipped(tree, call) -> None:
    paths = {m["path"] for m in call(search_files, pattern="TODO", limit=100)["matches"]}
    assert paths == {"README.md", "src/app.py", "src/pkg/deep.py", "notes/todo.txt"}


def test_a_single_file_can_be_searched(tree, call) -> None:
    assert call(search_files, pattern="TODO", path="notes/todo.txt")["count"] == 3


def test_long_matching_lines_are_excerpted(workspace, call) -> None:
    (workspace / "long.txt").write_text("x" * 5000 + "NEEDLE" + "y" * 5000 + "\n")
    text = call(search_files, pattern="NEEDLE")["matches"][0]["text"]
    assert "NEEDLE" in text
    assert len(text) < 400


def test_invalid_regex_is_a_clear_error(tree, call) -> None:
    assert "invalid regular expression '(unclosed'" in call(search_files, pattern="(unclosed")["error"]


def test_glob_by_name_finds_nested_files(tree, call) -> None:
    result = call(search_files, pattern="*.py", target="files")
    assert result["files"] == ["src/app.py", "src/util.py", "src/pkg/deep.py"]


def test_glob_with_a_slash_matches_the_path(tree, call) -> None:
    assert call(search_files, pattern="src/*/*.py", target="files")["files"] == ["src/pkg/deep.py"]


def test_glob_by_name_respects_the_limit(tree, call) -> None:
    result = call(search_files, pattern="*", target="files", limit=2)
    assert (result["count"], result["truncated"]) == (2, True)


def test_missing_search_path_is_named(tree, call) -> None:
    assert call(search_files, pattern="x", path="nowhere")["error"] == "path not found: 'nowhere'"


def test_unknown_target_is_refused(tree, call) -> None:
    assert "'target' must be one of ['content', 'files']" in call(search_files, pattern="x", target="dirs")["error"]


# -- model-chosen patterns are untrusted: linear-time matching and a deadline --------------------------

HOSTILE_SEARCH = """
import sys
from hermes_core import Runtime
from hermes_core.plugins.discovery import candidate_from_module
runtime = Runtime(home=sys.argv[2], workspace=sys.argv[3], entry_points=())
runtime.load_candidate(candidate_from_module("hermes_plugin_file", "file"))
print(runtime.handle_function_call("search_files", {"pattern": sys.argv[1]}))
"""


def search_in_child(pattern: str, home: Path, workspace: Path, timeout: float = 20) -> dict:
    """Run search_files in a child process, so a pattern that hangs fails the test instead of the run."""
    child = subprocess.run([sys.executable, "-c", HOSTILE_SEARCH, pattern, str(home), str(workspace)],
                           capture_output=True, text=True, timeout=scaled_timeout(timeout),
                           env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert child.returncode == 0, child.stderr
    return json.loads(child.stdout)


def test_a_catastrophic_pattern_finishes_at_once(workspace, hermes_home) -> None:
    (workspace / "line.txt").write_text("a" * 40 + "b\n" + "a" * 40 + "\n")

    result = search_in_child("^(a+)+$", hermes_home, workspace)

    assert [(match["line"], match["text"]) for match in result["matches"]] == [(2, "a" * 40)]


def test_search_stops_at_its_deadline_with_what_it_found(tree, call, file_settings) -> None:
    file_settings(search_timeout=0)

    result = call(search_files, pattern="TODO")

    assert (result["count"], result["truncated"]) == (0, True)
    assert "stopped at its 0 s deadline (plugin setting search_timeout)" in result["note"]


def test_a_search_within_its_deadline_has_no_note(tree, call) -> None:
    assert "note" not in call(search_files, pattern="TODO")


def test_unsupported_syntax_is_a_clear_error(tree, call) -> None:
    error = call(search_files, pattern=r"(a)\1")["error"]

    assert error.startswith(r"invalid regular expression '(a)\\1': invalid escape sequence: \1")
    assert "RE2 syntax" in error and "no back-references" in error


def test_dollar_matches_at_the_end_of_each_line(tree, call) -> None:
    assert [m["path"] for m in call(search_files, pattern="docs$")["matches"]] == ["README.md"]


def test_output_mode_count_gives_matching_lines_per_file(tree, call) -> None:
    result = call(search_files, pattern="TODO", output_mode="count")

    assert result["counts"] == {"README.md": 1, "notes/todo.txt": 3, "src/app.py": 1, "src/pkg/deep.py": 1}
    assert result["total_count"] == 6 and result["count"] == 4


def test_output_mode_files_only_lists_each_matching_file_once(tree, call) -> None:
    assert call(search_files, pattern="TODO", output_mode="files_only", path="src")["files"] == [
        "src/app.py", "src/pkg/deep.py"]


def test_offset_pages_through_matches_with_next_offset(tree, call) -> None:
    first = call(search_files, pattern="TODO", path="notes", limit=2)
    second = call(search_files, pattern="TODO", path="notes", limit=2, offset=first["next_offset"])

    assert [m["text"] for m in first["matches"]] == ["TODO one", "TODO two"]
    assert [m["text"] for m in second["matches"]] == ["TODO three"]
    assert (second["truncated"], "next_offset" in second) == (False, False)


def test_context_adds_the_lines_around_each_match_marked_as_context(tree, call) -> None:
    result = call(search_files, pattern="handle errors", path="src", context=1)

    assert result["matches"] == [
        {"path": "src/app.py", "line": 1, "text": "import os", "context": True},
        {"path": "src/app.py", "line": 2, "text": "# TODO: handle errors"},
        {"path": "src/app.py", "line": 3, "text": "def main():", "context": True},
    ]
    assert result["count"] == 1


def test_numbers_out_of_range_are_brought_into_range_as_hermes_agent_does(tree, call) -> None:
    assert call(search_files, pattern="TODO", path="notes", limit=0, offset=-3)["count"] == 1

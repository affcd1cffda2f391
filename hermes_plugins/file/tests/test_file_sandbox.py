"""The workspace sandbox: which paths the file tools refuse, which they accept, and where the root is."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_file.patch import patch
from hermes_plugin_file.read import read_file
from hermes_plugin_file.search import search_files
from hermes_plugin_file.workspace import WorkspacePathError, resolve_path
from hermes_plugin_file.write import write_file


@pytest.fixture
def world(workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A workspace full of ways out: symlinks to a file, a directory, a nested directory, a missing file."""
    (workspace / "inside.txt").write_text("inside\n")
    (workspace / "sub").mkdir()
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    (workspace / "linkdir").symlink_to(outside, target_is_directory=True)
    (workspace / "sub" / "escape").symlink_to(outside, target_is_directory=True)
    (workspace / "dangling").symlink_to(outside / "created-by-escape.txt")
    monkeypatch.setenv("HOME", str(outside))
    return {"ws": workspace, "outside": outside}


def _snapshot(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in directory.rglob("*") if p.is_file()}


ESCAPES: list[tuple[str, Callable[..., str], dict[str, Any]]] = [
    ("dotdot", read_file, {"path": "../outside/secret.txt"}),
    ("absolute_outside", read_file, {"path": "{outside}/secret.txt"}),
    ("absolute_inside_then_dotdot", read_file, {"path": "{ws}/../outside/secret.txt"}),
    ("symlink_file_out", read_file, {"path": "link.txt"}),
    ("symlink_dir_out", read_file, {"path": "linkdir/secret.txt"}),
    ("symlink_in_parent_component", read_file, {"path": "sub/escape/secret.txt"}),
    ("nested_dotdot_after_real_dir", read_file, {"path": "sub/../../outside/secret.txt"}),
    ("dotdot_after_symlinked_dir", read_file, {"path": "sub/escape/../outside/secret.txt"}),
    ("tilde_expansion", read_file, {"path": "~/secret.txt"}),
    ("write_through_symlink_file", write_file, {"path": "link.txt", "content": "pwned"}),
    ("write_through_dangling_symlink", write_file, {"path": "dangling", "content": "pwned"}),
    ("write_into_symlinked_dir", write_file, {"path": "linkdir/new.txt", "content": "pwned"}),
    ("write_dotdot_making_dirs", write_file, {"path": "../outside/deep/new.txt", "content": "pwned"}),
    ("patch_through_symlink", patch, {"path": "link.txt", "old_string": "TOP", "new_string": "pwned"}),
    ("patch_absolute_outside", patch, {"path": "{outside}/secret.txt", "old_string": "T", "new_string": "x"}),
    ("search_path_outside", search_files, {"pattern": "SECRET", "path": ".."}),
    ("search_path_symlinked_dir", search_files, {"pattern": "SECRET", "path": "linkdir"}),
    ("search_names_absolute_outside", search_files, {"pattern": "*", "target": "files", "path": "{outside}"}),
]


@pytest.mark.parametrize(("handler", "args"), [case[1:] for case in ESCAPES], ids=[c[0] for c in ESCAPES])
def test_escape_is_refused_and_touches_nothing_outside(world, call, handler, args) -> None:
    args = {k: v.format(**world) if isinstance(v, str) else v for k, v in args.items()}
    before = _snapshot(world["outside"])

    result = call(handler, **args)

    assert "outside the workspace" in result["error"]
    assert _snapshot(world["outside"]) == before


def test_nul_byte_in_path_is_refused(world, call) -> None:
    assert "NUL byte" in call(read_file, path="inside.txt\0../../outside/secret.txt")["error"]


def test_empty_path_is_refused(world, call) -> None:
    assert call(write_file, path="  ", content="x")["error"] == "path is empty"


def test_refusal_names_the_symlink(world, call) -> None:
    error = call(read_file, path="sub/escape/secret.txt")["error"]
    assert "'sub/escape/secret.txt'" in error
    assert "through a symlink" in error


def test_search_never_reads_or_lists_through_symlinks_out(world, call) -> None:
    assert call(search_files, pattern="SECRET")["matches"] == []
    assert call(search_files, pattern="*", target="files")["files"] == ["inside.txt"]


def test_absolute_path_inside_is_accepted(world, call) -> None:
    assert "inside" in call(read_file, path=str(world["ws"] / "inside.txt"))["content"]


def test_dotdot_that_stays_inside_is_accepted(world, call) -> None:
    result = call(read_file, path="sub/../inside.txt")
    assert result["path"] == "inside.txt"


def test_symlink_within_workspace_is_followed_and_kept(world, call) -> None:
    (world["ws"] / "alias.txt").symlink_to(world["ws"] / "inside.txt")

    assert call(write_file, path="alias.txt", content="rewritten\n")["path"] == "inside.txt"

    assert (world["ws"] / "alias.txt").is_symlink()
    assert (world["ws"] / "inside.txt").read_text() == "rewritten\n"


def test_resolve_path_returns_the_real_path(world) -> None:
    root = Path(os.path.realpath(world["ws"]))
    assert resolve_path("sub/./../inside.txt", root) == root / "inside.txt"
    with pytest.raises(WorkspacePathError, match="outside the workspace"):
        resolve_path("linkdir", root)


def test_workspace_reached_through_a_symlink(tmp_path, workspace, call_with) -> None:
    (workspace / "a.txt").write_text("a\n")
    (tmp_path / "ws-link").symlink_to(workspace, target_is_directory=True)
    call = call_with(workspace=tmp_path / "ws-link")

    assert call(read_file, path="a.txt")["content"] == "     1|a"
    assert call(read_file, path=str(tmp_path / "ws-link" / "a.txt"))["path"] == "a.txt"


def test_setting_beats_the_runtime_workspace(tmp_path, workspace, file_settings, call) -> None:
    configured = tmp_path / "configured"
    configured.mkdir()
    file_settings(workspace=str(configured))

    call(write_file, path="where.txt", content="here")

    assert (configured / "where.txt").exists()
    assert not (workspace / "where.txt").exists()


def test_the_default_workspace_is_hermes_workspace_else_the_current_directory(tmp_path, call_with,
                                                                               monkeypatch) -> None:
    monkeypatch.delenv("HERMES_WORKSPACE", raising=False)
    monkeypatch.chdir(tmp_path)
    call_with()(write_file, path="cwd.txt", content="x")
    assert (tmp_path / "cwd.txt").exists()

    named = tmp_path / "named"
    named.mkdir()
    monkeypatch.setenv("HERMES_WORKSPACE", str(named))
    call_with()(write_file, path="env.txt", content="x")
    assert (named / "env.txt").exists()


def test_the_workspace_setting_is_read_at_call_time(tmp_path, workspace, file_settings, call) -> None:
    other = tmp_path / "other"
    other.mkdir()
    call(write_file, path="first.txt", content="1")
    file_settings(workspace=str(other))
    call(write_file, path="second.txt", content="2")

    assert (workspace / "first.txt").exists()
    assert (other / "second.txt").exists()


def test_runtimes_with_different_workspaces_write_to_their_own(tmp_path, workspace, call, call_with) -> None:
    other = tmp_path / "other"
    other.mkdir()
    call_with(workspace=other)(write_file, path="mine.txt", content="other")
    call(write_file, path="mine.txt", content="kit")

    assert (other / "mine.txt").read_text() == "other" and (workspace / "mine.txt").read_text() == "kit"


def test_missing_workspace_root_is_a_clear_error(tmp_path, call_with) -> None:
    error = call_with(workspace=tmp_path / "nowhere")(read_file, path="a.txt")["error"]
    assert "workspace root" in error
    assert "not an existing directory" in error


def test_world_symlinks_are_real(world) -> None:
    """Guard: the escape cases above only prove something if the links really point outside."""
    assert os.path.realpath(world["ws"] / "sub" / "escape") == str(world["outside"])
    assert (world["ws"] / "link.txt").read_text() == "TOP SECRET\n"

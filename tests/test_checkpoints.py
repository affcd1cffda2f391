"""Checkpoints: the workspace snapshotted into one shadow git store under $HERMES_HOME/checkpoints (Hermes Agent's
layout), listed, compared and restored byte for byte; files over the size cap left out; a restore never writes
outside the workspace and is itself checkpointed; pruning; ``hermes checkpoints``."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from hermes_core import Runtime
from hermes_core.checkpoints.store import CheckpointStore, workspace_key
from hermes_core.config.model import CheckpointsConfig
from hermes_core.errors import CheckpointError

ALL_BYTES = bytes(range(256)) * 3 + b"\r\nno newline at the end"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


def store_of(home: Path, **settings: Any) -> CheckpointStore:
    return CheckpointStore(home / "checkpoints", CheckpointsConfig(enabled=True, **settings))


def git_of(store: CheckpointStore, *args: str) -> str:
    """Plain git, reading the store the way Hermes Agent does (``GIT_DIR`` the store)."""
    env = {**os.environ, "GIT_DIR": str(store.path), "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], env=env, capture_output=True, text=True, check=True).stdout


def test_a_checkpoint_is_restored_byte_for_byte(isolated_home: Path, workspace: Path) -> None:
    (workspace / "binary.bin").write_bytes(ALL_BYTES)
    (workspace / "src").mkdir()
    (workspace / "src" / "main.py").write_text("print('one')\n")
    (workspace / "gone.txt").write_text("to be deleted\n")
    store = store_of(isolated_home)
    first = store.take(workspace, "before write_file")
    assert first is not None and first.reason == "before write_file"
    assert store.take(workspace, "nothing changed") is None

    (workspace / "binary.bin").write_bytes(b"overwritten")
    (workspace / "src" / "main.py").write_text("print('two')\n")
    (workspace / "gone.txt").unlink()
    (workspace / "made since.txt").write_text("new\n")
    restored = store.restore(workspace, first.id[:7])

    assert (workspace / "binary.bin").read_bytes() == ALL_BYTES
    assert (workspace / "src" / "main.py").read_text() == "print('one')\n"
    assert (workspace / "gone.txt").read_text() == "to be deleted\n"
    assert not (workspace / "made since.txt").exists()
    assert (restored.id, restored.reason, restored.path) == (first.id, "before write_file", ".")
    # the restore was checkpointed first: restoring that one undoes it
    assert restored.before.reason == f"before restoring {first.id[:8]}"
    store.restore(workspace, restored.before.id)
    assert (workspace / "binary.bin").read_bytes() == b"overwritten"
    assert not (workspace / "gone.txt").exists()
    assert (workspace / "made since.txt").read_text() == "new\n"


def test_list_is_newest_first_with_what_changed_and_diff_shows_the_change(isolated_home: Path,
                                                                         workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\ntwo\n")
    store = store_of(isolated_home)
    first = store.take(workspace, "first")
    (workspace / "a.txt").write_text("one\nTWO\nthree\n")
    (workspace / "b.txt").write_text("bee\n")
    second = store.take(workspace, "second")
    assert first and second
    listed = store.list(workspace)
    assert [(entry.id, entry.reason) for entry in listed] == [(second.id, "second"), (first.id, "first")]
    assert (listed[0].files_changed, listed[0].insertions, listed[0].deletions) == (2, 3, 1)

    (workspace / "a.txt").write_text("changed again\n")
    diff = store.diff(workspace, second.id)
    assert diff.stat.splitlines()[-1].strip() == "1 file changed, 1 insertion(+), 3 deletions(-)"
    assert "-TWO\n" in diff.patch and "+changed again\n" in diff.patch
    # the diff staged the change; the next checkpoint still holds it
    after = store.take(workspace, "after the diff")
    assert after is not None and store.list(workspace)[0].files_changed == 1


def test_the_store_has_hermes_agents_layout(isolated_home: Path, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    store = store_of(isolated_home)
    taken = store.take(workspace, "first")
    key = hashlib.sha256(str(workspace.resolve()).encode()).hexdigest()[:16]
    assert workspace_key(workspace) == key
    assert store.path == isolated_home / "checkpoints" / "store"
    assert taken and git_of(store, "rev-parse", f"refs/hermes/{key}").strip() == taken.id
    assert (store.path / "indexes" / key).is_file()
    assert json.loads((store.path / "projects" / f"{key}.json").read_text())["workdir"] == str(workspace.resolve())
    excludes = (store.path / "info" / "exclude").read_text().splitlines()
    assert {"node_modules/", ".env", "*.log", ".git/"} <= set(excludes)


def test_excluded_and_oversized_files_are_left_out(isolated_home: Path, workspace: Path) -> None:
    (workspace / "kept.txt").write_text("kept\n")
    for name in ("node_modules/pkg/index.js", ".env", "debug.log", ".git/config"):
        (workspace / name).parent.mkdir(parents=True, exist_ok=True)
        (workspace / name).write_text("left out\n")
    big = workspace / "data" / "big.bin"
    big.parent.mkdir()
    with big.open("wb") as sparse:  # 200 MB, made in no time
        sparse.truncate(200 * 1024 * 1024)
    store = store_of(isolated_home)
    taken = store.take(workspace, "first")
    assert taken is not None
    assert git_of(store, "ls-tree", "-r", "--name-only", taken.id).split() == ["kept.txt"]
    stored = sum(f.stat().st_size for f in (store.path / "objects").rglob("*") if f.is_file())
    assert stored < 1024 * 1024  # the 200 MB were never read into the store

    # a file that grows past the cap after it was checkpointed is left out too, and a restore leaves it alone
    (workspace / "kept.txt").write_bytes(b"x" * (11 * 1024 * 1024))
    later = store.take(workspace, "later")
    assert later is not None and git_of(store, "ls-tree", "-r", "--name-only", later.id).split() == []
    store.restore(workspace, later.id)
    assert big.stat().st_size == 200 * 1024 * 1024 and (workspace / "kept.txt").stat().st_size == 11 * 1024 * 1024


def test_a_restore_never_writes_outside_the_workspace(isolated_home: Path, workspace: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("outside\n")
    (workspace / "sub").mkdir()
    (workspace / "sub" / "secret.txt").write_text("inside\n")
    store = store_of(isolated_home)
    taken = store.take(workspace, "first")
    assert taken is not None
    for path in ("../outside/secret.txt", str(outside / "secret.txt"), "sub/../../outside"):
        with pytest.raises(CheckpointError, match="is outside the workspace"):
            store.restore(workspace, taken.id, path)
    # a folder of the workspace replaced by a link out of it: refused as a path, and a whole restore replaces the
    # link instead of writing through it
    (workspace / "sub" / "secret.txt").unlink()
    (workspace / "sub").rmdir()
    (workspace / "sub").symlink_to(outside)
    with pytest.raises(CheckpointError, match="is outside the workspace"):
        store.restore(workspace, taken.id, "sub/secret.txt")
    store.restore(workspace, taken.id)
    assert (outside / "secret.txt").read_text() == "outside\n"
    assert (workspace / "sub" / "secret.txt").read_text() == "inside\n"
    assert not (workspace / "sub").is_symlink()


def test_one_path_is_restored_alone(isolated_home: Path, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a1\n")
    (workspace / "b.txt").write_text("b1\n")
    store = store_of(isolated_home)
    taken = store.take(workspace, "first")
    assert taken is not None
    (workspace / "a.txt").write_text("a2\n")
    (workspace / "b.txt").write_text("b2\n")
    assert store.restore(workspace, taken.id, "a.txt").path == "a.txt"
    assert ((workspace / "a.txt").read_text(), (workspace / "b.txt").read_text()) == ("a1\n", "b2\n")
    with pytest.raises(CheckpointError, match=f"the checkpoint {taken.id[:8]} has no missing.txt"):
        store.restore(workspace, taken.id, "missing.txt")


def test_bad_ids_and_other_workspaces_checkpoints_are_refused(isolated_home: Path, workspace: Path,
                                                              tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    (other / "x.txt").write_text("x\n")
    (workspace / "a.txt").write_text("a\n")
    store = store_of(isolated_home)
    theirs = store.take(other, "other's")
    assert theirs is not None and store.take(workspace, "mine") is not None
    for bad in ("--patch", "HEAD", "zzzz", "abc"):
        with pytest.raises(CheckpointError, match="is not a checkpoint id"):
            store.restore(workspace, bad)
    with pytest.raises(CheckpointError, match=f"no checkpoint {theirs.id} of the workspace"):
        store.restore(workspace, theirs.id)
    assert not (workspace / "x.txt").exists()


def test_history_is_cut_to_max_snapshots_keeping_the_newest(isolated_home: Path, workspace: Path) -> None:
    store = store_of(isolated_home, max_snapshots=2)
    for number in range(9):
        (workspace / "n.txt").write_text(f"{number}\n")
        store.take(workspace, f"checkpoint {number}")
    listed = store.list(workspace, limit=50)
    assert 2 <= len(listed) <= 7 and listed[0].reason == "checkpoint 8"
    assert [entry.reason for entry in listed] == [f"checkpoint {n}" for n in range(8, 8 - len(listed), -1)]
    store.restore(workspace, listed[-1].id)
    assert (workspace / "n.txt").read_text() == f"{9 - len(listed)}\n"


def test_prune_drops_gone_workspaces_and_trims_to_the_size_cap(isolated_home: Path, workspace: Path,
                                                              tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    (gone / "g.txt").write_text("g\n")
    store = store_of(isolated_home, max_total_size_mb=1)
    assert store.take(gone, "gone's") is not None
    for number in range(3):  # three checkpoints of 600 KB that do not compress: over the 1 MB cap
        (workspace / "data.bin").write_bytes(os.urandom(600 * 1024))
        store.take(workspace, f"data {number}")
    gone_key = workspace_key(gone)
    (gone / "g.txt").unlink()
    gone.rmdir()
    assert store.prune(force=True) == [str(gone.resolve())]
    assert f"refs/hermes/{gone_key}" not in git_of(store, "for-each-ref")
    assert [entry.reason for entry in store.list(workspace)] == ["data 2"]
    assert (isolated_home / "checkpoints" / ".last_prune").exists()
    assert store.prune() == []  # not again before min_interval_hours


def test_too_many_changed_files_are_not_checkpointed(isolated_home: Path, workspace: Path) -> None:
    for number in range(5):
        (workspace / f"{number}.txt").write_text("x\n")
    with pytest.raises(CheckpointError, match=r"5 files of .* are new or changed, more than checkpoints.max_files"):
        store_of(isolated_home, max_files=3).take(workspace, "too many")


def test_the_users_git_configuration_is_ignored(isolated_home: Path, workspace: Path, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "gitconfig"
    config.write_text("[commit]\n\tgpgsign = true\n[gpg]\n\tprogram = false\n[core]\n\thooksPath = /nonexistent\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "elsewhere"))
    (workspace / "a.txt").write_text("a\n")
    assert store_of(isolated_home).take(workspace, "signed?") is not None
    assert not (tmp_path / "elsewhere").exists()


def test_without_git_checkpoints_are_unavailable_with_the_reason(isolated_home: Path, workspace: Path,
                                                                 tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    runtime = Runtime(home=isolated_home, workspace=workspace, entry_points=())
    reason = "git is not installed; checkpoints need it (Debian and Ubuntu: apt-get install git)"
    assert runtime.checkpoints.availability() == (False, reason)
    with pytest.raises(CheckpointError, match="git is not installed"):
        runtime.checkpoints.list()


# -- hermes checkpoints ----------------------------------------------------------------------------------------


def hermes(*args: str, workspace: Path) -> Any:
    from hermes_core.cli import cli

    return CliRunner().invoke(cli, [*args[:2], "--workspace", str(workspace), *args[2:]])


def test_the_cli_lists_diffs_and_restores(isolated_home: Path, workspace: Path) -> None:
    (workspace / "a.txt").write_text("one\n")
    runtime = Runtime(home=isolated_home, workspace=workspace, entry_points=())
    taken = runtime.checkpoints.take("by hand")
    assert taken is not None
    (workspace / "a.txt").write_text("two\n")

    listed = hermes("checkpoints", "list", workspace=workspace)
    assert listed.exit_code == 0 and taken.short_id in listed.output and "by hand" in listed.output
    assert json.loads(hermes("checkpoints", "list", "--json", workspace=workspace).output)[0]["id"] == taken.id
    diff = hermes("checkpoints", "diff", taken.short_id, workspace=workspace)
    assert diff.exit_code == 0 and "-one\n+two\n" in diff.output
    restored = hermes("checkpoints", "restore", taken.short_id, workspace=workspace)
    assert restored.exit_code == 0, restored.output
    assert restored.output.startswith(f"Restored the workspace from checkpoint {taken.short_id} (by hand).\n")
    assert (workspace / "a.txt").read_text() == "one\n"

    refused = hermes("checkpoints", "restore", taken.short_id, "--path", "../elsewhere", workspace=workspace)
    assert refused.exit_code == 1
    assert refused.output == (f"Error: ../elsewhere is outside the workspace {workspace.resolve()}: a restore only "
                              "writes inside it\n")
    unknown = hermes("checkpoints", "diff", "abcdef12", workspace=workspace)
    assert unknown.exit_code == 1 and "no checkpoint abcdef12 of the workspace" in unknown.output


def test_the_cli_says_when_there_are_none_and_whether_they_are_on(isolated_home: Path, workspace: Path) -> None:
    result = hermes("checkpoints", "list", workspace=workspace)
    assert result.output == (f"No checkpoints of {workspace}; checkpoints are off (checkpoints: true in config.yaml "
                             "turns them on).\n")


# -- before file-changing calls, once per turn ------------------------------------------------------------------


PACKS = (("hermes_plugin_file", "file"), ("hermes_plugin_terminal", "terminal"))


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def test_write_file_patch_and_rm_are_restored_byte_for_byte(pack_runtime: Any, workspace: Path) -> None:
    (workspace / "notes.txt").write_bytes(b"first line\r\nsecond line\n")
    (workspace / "app.py").write_text("def greet():\n    return 'hello'\n")
    (workspace / "data.bin").write_bytes(ALL_BYTES)
    originals = {name: (workspace / name).read_bytes() for name in ("notes.txt", "app.py", "data.bin")}
    runtime = pack_runtime({"checkpoints": True}, *PACKS)

    results = [runtime.run_tool_calls([tool_call("write_file", {"path": "notes.txt", "content": "replaced\n"})]),
               runtime.run_tool_calls([tool_call("patch", {"path": "app.py", "old_string": "'hello'",
                                                           "new_string": "'goodbye'"})]),
               runtime.run_tool_calls([tool_call("terminal", {"command": "rm data.bin"})])]
    assert all("error" not in json.loads(result[0]) for result in results), results
    assert not (workspace / "data.bin").exists()
    listed = runtime.checkpoints.list()
    assert [entry.reason for entry in listed] == ["before terminal", "before patch", "before write_file"]

    restored = hermes("checkpoints", "restore", listed[-1].short_id, workspace=workspace)
    assert restored.exit_code == 0, restored.output
    assert {name: (workspace / name).read_bytes() for name in originals} == originals


def test_one_checkpoint_per_turn_and_none_for_read_only_calls(pack_runtime: Any, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    runtime = pack_runtime({"checkpoints": True}, *PACKS)
    runtime.run_tool_calls([tool_call("read_file", {"path": "a.txt"}, "r")])
    assert runtime.checkpoints.list() == []
    # one batch, three file-changing calls (the two writes run in parallel): one checkpoint, before the first
    runtime.run_tool_calls([tool_call("write_file", {"path": "b.txt", "content": "b\n"}, "1"),
                            tool_call("write_file", {"path": "c.txt", "content": "c\n"}, "2"),
                            tool_call("terminal", {"command": "echo d > d.txt"}, "3")])
    assert len(runtime.checkpoints.list()) == 1
    # the calls made inside turn() are one turn too; calls made on their own are a turn each
    from hermes_core import turn

    with turn():
        runtime.handle_function_call("write_file", {"path": "a.txt", "content": "e\n"})
        runtime.handle_function_call("write_file", {"path": "a.txt", "content": "f\n"})
    assert len(runtime.checkpoints.list()) == 2
    runtime.handle_function_call("write_file", {"path": "a.txt", "content": "g\n"})
    runtime.handle_function_call("write_file", {"path": "a.txt", "content": "h\n"})
    assert [entry.reason for entry in runtime.checkpoints.list()][:2] == ["before write_file", "before write_file"]
    assert len(runtime.checkpoints.list()) == 4


def test_read_only_terminal_commands_take_no_checkpoint(pack_runtime: Any, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    runtime = pack_runtime({"checkpoints": True, "terminal": {"read_only_commands": ["make lint"]}}, *PACKS)
    for command in ("ls -la", "cat a.txt", "git status", "grep -c a a.txt | wc -l", "make lint"):
        result = json.loads(runtime.run_tool_calls([tool_call("terminal", {"command": command})])[0])
        assert "error" not in result, (command, result)
        assert runtime.checkpoints.list() == [], command
    # each of these may change files: a checkpoint before each (a file written first, so each has news to keep)
    changing = ("rm a.txt", "sed -i s/b/c/ b.txt", "echo b > b.txt", "./make-things.sh", "python3 -c 'pass'")
    for index, command in enumerate(changing, 1):
        (workspace / f"step{index}.txt").write_text(command)
        runtime.run_tool_calls([tool_call("terminal", {"command": command})])
        assert len(runtime.checkpoints.list()) == index, command
    first = runtime.checkpoints.list()[-1]
    assert first.reason == "before terminal" and "a.txt" in runtime.checkpoints.diff(first.short_id).stat


def test_a_failing_changes_files_judge_still_checkpoints(pack_runtime: Any, workspace: Path,
                                                          caplog: pytest.LogCaptureFixture) -> None:
    (workspace / "a.txt").write_text("a\n")
    runtime = pack_runtime({"checkpoints": True}, *PACKS)
    entry = runtime.registry.get("terminal")
    assert entry is not None and entry.changes_files is not None  # (reading it builds the declared entry)

    def broken(args: dict[str, Any], config: Any) -> bool:
        raise RuntimeError("judge broke")

    entry.changes_files = broken
    runtime.run_tool_calls([tool_call("terminal", {"command": "ls"})])
    assert [checkpoint.reason for checkpoint in runtime.checkpoints.list()] == ["before terminal"]
    assert "judge broke" in caplog.text


def test_a_call_the_pipeline_blocks_takes_no_checkpoint(pack_runtime: Any, workspace: Path) -> None:
    (workspace / "a.txt").write_text("a\n")
    runtime = pack_runtime({"checkpoints": True, "approvals": {"mode": "deny", "policy": "writes"}}, *PACKS)
    blocked = runtime.run_tool_calls([tool_call("write_file", {"path": "a.txt", "content": "b\n"})])
    assert json.loads(blocked[0])["error"].startswith("Blocked by the approval policy 'writes'")
    assert runtime.checkpoints.list() == []
    # (the terminal pack asks about a dangerous command in its handler, after the checkpoint, as Hermes Agent does)


def test_checkpoints_are_off_by_default(pack_runtime: Any, workspace: Path, isolated_home: Path) -> None:
    runtime = pack_runtime({}, *PACKS)
    runtime.run_tool_calls([tool_call("write_file", {"path": "a.txt", "content": "a\n"})])
    assert (workspace / "a.txt").read_text() == "a\n"
    assert not (isolated_home / "checkpoints").exists()
    assert runtime.dispatcher.checkpoints is None


def test_without_git_a_file_changing_call_still_runs(pack_runtime: Any, workspace: Path, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     caplog: pytest.LogCaptureFixture) -> None:
    runtime = pack_runtime({"checkpoints": True}, *PACKS)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = runtime.handle_function_call("write_file", {"path": "a.txt", "content": "a\n"})
    assert "error" not in json.loads(result)
    assert "checkpoints need it" in caplog.text


def test_doctor_fails_when_checkpoints_are_on_and_git_is_missing(isolated_home: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from hermes_core.cli import cli

    (isolated_home / "config.yaml").write_text("checkpoints: true\n")
    assert CliRunner().invoke(cli, ["plugins", "doctor", "--strict"]).exit_code == 0
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = CliRunner().invoke(cli, ["plugins", "doctor", "--strict"])
    assert result.exit_code == 1
    assert "config: checkpoints: git is not installed; checkpoints need it" in result.output

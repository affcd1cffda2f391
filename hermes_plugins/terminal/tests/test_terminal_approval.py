"""Dangerous-command approval through the approval callback: once, session, always, deny and hardline."""

from __future__ import annotations

from pathlib import Path

import yaml

CONFIG_WITH_COMMENTS = """\
# my Hermes settings
approvals:
  mode: ask  # ask me first
command_allowlist:
  - git_force_push  # I force-push my own branches
"""


def allowlist(config_file: Path) -> list[str]:
    return (yaml.safe_load(config_file.read_text()) or {}).get("command_allowlist", []) if config_file.exists() else []


def victim(workspace: Path, name: str = "victim") -> Path:
    directory = workspace / name
    (directory / "inner").mkdir(parents=True)
    return directory


def test_a_safe_command_runs_without_asking(call, approvals):
    assert call("terminal", command="echo fine")["output"] == "fine\n"
    assert approvals.requests == []


def test_approve_once_runs_the_command_and_asks_again_next_time(call, approvals, workspace: Path):
    approvals.answers = ["once", "once"]
    first, second = victim(workspace, "first"), victim(workspace, "second")
    assert call("terminal", command="rm -r first")["exit_code"] == 0
    assert call("terminal", command="rm -r second")["exit_code"] == 0
    assert not first.exists() and not second.exists()
    assert approvals.asked == ["recursive_delete", "recursive_delete"]


def test_the_request_describes_the_command_and_its_rule(call, approvals, workspace: Path):
    approvals.answers = ["once"]
    victim(workspace)
    call("terminal", session="s1", command="rm -r victim")
    request = approvals.requests[0]
    assert (request.rule_key, request.tool_name) == ("recursive_delete", "terminal")
    assert request.session_id.startswith("s1-")
    assert request.args == {"command": "rm -r victim"}
    assert "deletes files recursively" in request.message and "rm -r victim" in request.message


def test_approve_for_the_session_is_not_asked_again_in_that_session(call, approvals, workspace: Path):
    approvals.answers = ["session"]
    for name in ("a", "b", "c"):
        victim(workspace, name)
    call("terminal", session="s1", command="rm -r a")
    call("terminal", session="s1", command="rm -r b")
    assert approvals.asked == ["recursive_delete"]
    blocked = call("terminal", session="s2", command="rm -r c")
    assert approvals.asked == ["recursive_delete", "recursive_delete"]
    assert "was not approved" in blocked["error"]
    assert (workspace / "c").exists()


def test_approve_always_writes_the_rule_to_the_allowlist_keeping_comments(call, approvals, workspace: Path,
                                                                         config_file: Path):
    config_file.write_text(CONFIG_WITH_COMMENTS, encoding="utf-8")
    approvals.answers = ["always"]
    victim(workspace, "a")
    victim(workspace, "b")
    call("terminal", session="s1", command="rm -r a")
    assert allowlist(config_file) == ["git_force_push", "recursive_delete"]
    text = config_file.read_text(encoding="utf-8")
    for comment in ("# my Hermes settings", "# ask me first", "# I force-push my own branches"):
        assert comment in text
    call("terminal", session="s2", command="rm -r b")
    assert approvals.asked == ["recursive_delete"]
    assert not (workspace / "b").exists()


def test_a_rule_already_in_the_allowlist_is_not_asked(call, approvals, config_file: Path):
    config_file.write_text(CONFIG_WITH_COMMENTS, encoding="utf-8")
    result = call("terminal", command="true || git push --force")
    assert result["exit_code"] == 0
    assert approvals.requests == []


def test_deny_blocks_the_command_with_a_clear_error(call, approvals, workspace: Path):
    approvals.answers = ["deny"]
    target = victim(workspace)
    result = call("terminal", command="rm -rf victim")
    assert result == {"error": "Blocked: this command deletes files recursively (rule 'recursive_delete') and was "
                               "not approved. Do not retry it; ask the user to run it themselves or to approve it."}
    assert target.exists()


def test_a_background_command_needs_approval_too(call, approvals, workspace: Path):
    target = victim(workspace)
    assert "was not approved" in call("terminal", command="rm -r victim", background=True)["error"]
    assert call("process", action="list") == {"processes": []}
    assert target.exists()


def test_every_rule_a_command_matches_must_be_approved(call, approvals, workspace: Path):
    approvals.answers = ["once", "deny"]
    victim(workspace)
    result = call("terminal", command="rm -r victim && git reset --hard")
    assert approvals.asked == ["recursive_delete", "git_reset_hard"]
    assert "git_reset_hard" in result["error"]
    assert (workspace / "victim").exists()


def test_hardline_is_refused_even_when_the_callback_approves(call, approvals, workspace: Path, config_file: Path):
    approvals.answers = ["always"] * 3
    marker = workspace / "marker"
    result = call("terminal", command=f"touch {marker}; :(){{ :|:& }};:")
    assert result["error"].startswith("Refused: this command is a fork bomb (rule 'fork_bomb').")
    assert "never run, even with approval" in result["error"]
    assert approvals.requests == []
    assert not marker.exists()
    assert allowlist(config_file) == []


def test_hardline_is_refused_even_when_its_key_is_in_the_allowlist(call, approvals, config_file: Path):
    config_file.write_text("command_allowlist: [delete_root, recursive_delete]\n", encoding="utf-8")
    assert call("terminal", command="rm -rf ~")["error"].startswith("Refused:")
    assert approvals.requests == []


def test_approvals_mode_deny_refuses_without_asking(call, approvals, workspace: Path, config_file: Path):
    config_file.write_text("approvals:\n  mode: deny\n", encoding="utf-8")
    victim(workspace)
    assert "was not approved" in call("terminal", command="rm -r victim")["error"]
    assert approvals.requests == []

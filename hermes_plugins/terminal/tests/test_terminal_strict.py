"""The stricter readings a user opts into: ``approvals.mode: strict`` (only read-only programs run without a
question) and ``terminal.workspace_only`` (paths outside the workspace ask), classified and through the tool."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hermes_plugin_terminal.danger import Level, ReadOnlyList, Strictness, Workspace, classify

STRICT = Strictness(read_only=ReadOnlyList.extended(["make test", "cargo check"]))
WORKSPACE = Strictness(workspace=Workspace("/home/me/project", "/home/me/project", "/home/me"))


@pytest.mark.parametrize("command", [
    "git status", "ls -la", "rg foo", "git log --oneline -5 | head", "cat README.md | wc -l", "grep -rn TODO src",
    "find . -name '*.py'", "sed -n '1,20p' notes.txt", "sed 's/a/b/g' notes.txt", "LC_ALL=C sort data.txt",
    "ls > /dev/null 2>&1", "git diff HEAD~1 --stat", "git branch -a", "git config user.name", "echo $(whoami)",
    "cd src && ls", "make test", "make test -j4", "cargo check --all", "head -c 100 /dev/urandom | base64",
])
def test_strict_runs_read_only_commands(command: str) -> None:
    verdict = classify(command, STRICT)
    assert (verdict.level, verdict.unlisted) == (Level.SAFE, ()), verdict.rules


@pytest.mark.parametrize(("command", "unlisted"), [
    ("python -c 'print(1)'", "python"), ("make", "make"), ("curl -s https://example.com", "curl"),
    ("make install", "make"), ("npm test", "npm"), ("bash -c 'ls'", "bash"), ("sudo ls", "sudo"),
    ("xargs ls", "xargs"), ("cat notes.txt > copy.txt", ">"), ("PATH=/srv/bin ls", "$PATH"),
    ("LD_PRELOAD=/srv/x.so ls", "$LD_PRELOAD"), ("env GIT_EXTERNAL_DIFF=x git diff", "$GIT_EXTERNAL_DIFF"),
    ("$TOOL --version", ""), ("find . -delete", "find"), ("find . -exec cat {} +", "find"), ("sed -i s/a/b/ f", "sed"),
    ("sort -uo out.txt in.txt", "sort"), ("rg --pre ./x foo", "rg"), ("fd -x cat", "fd"), ("git branch topic", "git"),
    ("git -c core.pager=less log", "git"), ("git config user.name me", "git"), ("git diff --output=d.txt", "git"),
    ("git commit -m x", "git"), ("date -s tomorrow", "date"), ("tree -o tree.txt", "tree"), ("ls; touch x", "touch"),
    ("echo $(curl -s https://example.com)", "curl"),
])
def test_strict_asks_for_everything_else(command: str, unlisted: str) -> None:
    verdict = classify(command, STRICT)
    assert verdict.level is Level.DANGEROUS
    assert "not_read_only" in {rule.key for rule in verdict.rules} and unlisted in verdict.unlisted


def test_the_default_reading_asks_for_none_of_them() -> None:
    for command in ("make", "python3 -m pytest", "cat ../../etc/passwd", "cp x /srv/y", "npm test"):
        assert classify(command).level is Level.SAFE


@pytest.mark.parametrize(("command", "outside"), [
    ("cat ../../etc/passwd", "../../etc/passwd"), ("cp x /srv/y", "/srv/y"), ("cat ~/.ssh/id_rsa", "~/.ssh/id_rsa"),
    ("cat $HOME/.netrc", "$HOME/.netrc"), ("cd .. && ls", ".."), ("cat < /etc/shadow", "/etc/shadow"),
    ("echo x > /srv/out", "/srv/out"), ("ls /etc/*", "/etc/*"), ("make DESTDIR=/opt/x install", "/opt/x"),
    ("tar -xf a.tar --directory=/srv", "/srv"), ("cat /home/me/project/../other/x", "/home/me/project/../other/x"),
    ('cat "$f"', "$f"), ("find / -name passwd", "/"), ("cat ~other/.profile", "~other/.profile"),
    ("git -C ../other status", "../other"), ("../other/run.sh", "../other/run.sh"),
])
def test_workspace_only_flags_paths_outside_the_workspace(command: str, outside: str) -> None:
    verdict = classify(command, WORKSPACE)
    assert verdict.level is Level.DANGEROUS and verdict.rule_key == "outside_workspace"
    assert outside in verdict.outside


@pytest.mark.parametrize("command", [
    "cat ./x", "cat x", "cat src/../README.md", "cat /home/me/project/notes.md", "ls > /dev/null 2>&1",
    "grep -r '/api/v1' src", "sed 's/a/b/' f.txt", "find . -name '/x/*'", "git log origin/main",
    "scp f.txt host:/tmp/", "curl -o out.html https://example.com/a/b", "cat $PWD/x", "echo /etc/passwd",
    "ls *.py", "cp -r src/ build/", "docker run --rm -v $PWD:/src node npm test",
])
def test_workspace_only_lets_paths_inside_it_through(command: str) -> None:
    verdict = classify(command, WORKSPACE)
    assert (verdict.level, verdict.outside) == (Level.SAFE, ()), verdict.rules


# -- through the terminal tool ------------------------------------------------------------------------------


def test_strict_mode_asks_for_python_make_and_curl_and_runs_git_ls_and_rg(call, approvals, workspace: Path,
                                                                          config_file: Path) -> None:
    config_file.write_text("approvals:\n  mode: strict\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(workspace)], check=True)
    for command in ("git status", "ls -la", "rg foo"):
        result = call("terminal", command=command)
        assert "exit_code" in result and "error" not in result, (command, result)
    assert approvals.requests == []
    marker = workspace / "ran"
    for command in (f"python3 -c 'open(\"{marker}\", \"w\")'", "make", "curl -s https://example.invalid"):
        assert "was not approved" in call("terminal", command=command)["error"]
    assert approvals.asked == ["interpreter_code", "not_read_only:make", "not_read_only:curl"]
    assert not marker.exists()
    assert "runs make, which is not on the read-only list" in approvals.requests[1].message


def test_strict_mode_remembers_a_program_for_the_session_not_every_program(call, approvals, workspace: Path,
                                                                            config_file: Path) -> None:
    config_file.write_text("approvals:\n  mode: strict\nterminal:\n  read_only_commands: [getent passwd]\n")
    approvals.answers = ["session"]
    assert call("terminal", session="s", command="whoami && uname -s")["exit_code"] == 0
    assert call("terminal", session="s", command="getent passwd root")["exit_code"] == 0  # a listed prefix
    assert call("terminal", session="s", command="printf x | od -c")["exit_code"] == 0
    assert call("terminal", session="s", command="tr a b < /dev/null")["exit_code"] == 0
    assert approvals.requests == []
    assert call("terminal", session="s", command="make --version")["exit_code"] == 0
    assert call("terminal", session="s", command="make --version")["exit_code"] == 0  # remembered for s
    assert "not_read_only:touch" in call("terminal", session="s", command="touch f")["error"]
    assert approvals.asked == ["not_read_only:make", "not_read_only:touch"]


def test_workspace_only_asks_for_paths_outside_and_not_for_paths_inside(call, approvals, workspace: Path,
                                                                        config_file: Path, tmp_path: Path) -> None:
    config_file.write_text("terminal:\n  workspace_only: true\n", encoding="utf-8")
    (workspace / "x").write_text("inside\n")
    assert call("terminal", command="cat ./x")["output"] == "inside\n"
    assert approvals.requests == []
    outside = tmp_path / "y"
    assert "outside the workspace" in call("terminal", command="cat ../../etc/passwd")["error"]
    assert "outside the workspace" in call("terminal", command=f"cp x {outside}")["error"]
    assert approvals.asked == ["outside_workspace", "outside_workspace"]
    assert "../../etc/passwd" in approvals.requests[0].message and not outside.exists()


def test_workspace_only_resolves_paths_against_the_calls_working_directory(call, approvals, workspace: Path,
                                                                           config_file: Path) -> None:
    config_file.write_text("terminal:\n  workspace_only: true\n", encoding="utf-8")
    (workspace / "sub" / "deeper").mkdir(parents=True)
    (workspace / "sub" / "x").write_text("one up\n")
    assert call("terminal", command="cat ../x", workdir="sub/deeper")["output"] == "one up\n"
    assert "outside the workspace" in call("terminal", command="cat ../../../x", workdir="sub/deeper")["error"]


@pytest.mark.parametrize(("config", "asked"), [
    ("approvals:\n  mode: ask\n", []),
    ("approvals:\n  mode: strict\n", ["outside_workspace"]),
    ("approvals:\n  mode: strict\nterminal:\n  workspace_only: false\n", []),
])
def test_workspace_only_is_off_by_default_and_on_in_strict_mode(call, approvals, workspace: Path, config_file: Path,
                                                                config: str, asked: list[str]) -> None:
    config_file.write_text(config, encoding="utf-8")
    call("terminal", command="cat ../../etc/hostname")
    assert approvals.asked == asked

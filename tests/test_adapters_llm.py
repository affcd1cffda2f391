"""The ``llm`` plugin: Hermes tools in simonw's ``llm``, through its real entry point group ``llm`` and CLI, in a
venv where the hermes-tools and hermes-tools-file wheels are installed; the ``llm-echo`` test model requests the
tool calls and shows the tool results it is given on its next turn. The async test runs llm's Python API in
process."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_core.authoring.testing import scaled_timeout

support = pytest.importorskip("hermes_adapter_test_support")
pytest.importorskip("llm")
pytest.importorskip("llm_echo")

BLOCKER = """\
def register(ctx):
    ctx.register_hook("pre_tool_call", lambda tool_name, **kw:
                      {"action": "block", "message": "reading is blocked by policy X"} if tool_name == "read_file"
                      else None)
"""


@pytest.fixture(scope="module")
def llm_venv(make_venv: Any) -> Any:
    """A venv of the hermes-tools and hermes-tools-file wheels; llm and llm-echo come from the shared site."""
    env = make_venv("llm-venv")
    env.install("hermes-tools-file", extra=("--no-deps",))
    return env


@pytest.fixture
def llm_cli(llm_venv: Any, isolated_home: Path, workspace: Path, tmp_path: Path) -> Any:
    """``llm_cli(*args)``: ``python -m llm`` of the venv, with this test's Hermes home, workspace and llm folder."""
    (workspace / "notes.txt").write_text(support.NOTE + "\n")
    env = {"HERMES_HOME": str(isolated_home), "HERMES_WORKSPACE": str(workspace),
           "LLM_USER_PATH": str(tmp_path / "llm-user")}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return llm_venv.run(llm_venv.python, "-m", "llm", *args, env=env, cwd=workspace, timeout=120)

    return run


def configure(home: Path, config: dict[str, Any]) -> None:
    (home / "config.yaml").write_text(yaml.safe_dump(config))


def listed(llm_cli: Any) -> dict[str, dict[str, Any]]:
    """The tools ``llm tools --json`` lists, by name."""
    result = llm_cli("tools", "--json")
    assert result.returncode == 0, result.stderr
    return {tool["name"]: tool for tool in json.loads(result.stdout)["tools"]}


def call(llm_cli: Any, tool: str, arguments: dict[str, Any]) -> list[dict[str, Any]]:
    """Run ``llm -m echo -T tool`` asking for one call; the tool results the echo model's next turn was given."""
    prompt = json.dumps({"tool_calls": [{"name": tool, "arguments": arguments}]})
    result = llm_cli("-m", "echo", "-T", tool, prompt)
    assert result.returncode == 0, result.stderr
    decoder, text, turns = json.JSONDecoder(), result.stdout.strip(), []
    while text:
        turn, end = decoder.raw_decode(text)
        turns.append(turn)
        text = text[end:].strip()
    return turns[-1]["tool_results"]


def test_llm_tools_lists_the_read_only_tools_of_the_file_pack_with_their_schema(llm_cli: Any, llm_venv: Any):
    tools = listed(llm_cli)

    hermes = {name for name, tool in tools.items() if tool.get("plugin") == "hermes"}
    assert hermes == {"read_file", "search_files"}  # by default the read-only ones: no write_file, no patch
    definitions = llm_venv.json("import hermes_core, json; print(json.dumps(hermes_core.get_tool_definitions()))")
    [read] = [d["function"] for d in definitions if d["function"]["name"] == "read_file"]
    assert tools["read_file"]["arguments"] == read["parameters"]
    assert tools["read_file"]["description"] == read["description"]


def test_llm_T_read_file_calls_it_and_the_result_reaches_the_next_turn(llm_cli: Any):
    [result] = call(llm_cli, "read_file", {"path": "notes.txt"})
    assert result["name"] == "read_file"
    assert support.NOTE in json.loads(result["output"])["content"]


def test_a_blocking_pre_tool_call_hook_blocks_it(llm_cli: Any, isolated_home: Path):
    plugin = isolated_home / "plugins" / "blocker"
    plugin.mkdir(parents=True)
    (plugin / "__init__.py").write_text(BLOCKER)

    [result] = call(llm_cli, "read_file", {"path": "notes.txt"})
    assert "reading is blocked by policy X" in json.loads(result["output"])["error"]
    assert support.NOTE not in result["output"]


def test_configured_toolsets_under_writes_offer_write_file_which_asks_and_unanswered_does_not_run(
        llm_cli: Any, isolated_home: Path, workspace: Path):
    configure(isolated_home, {"adapters": {"llm": {"toolsets": ["file"]}}, "approvals": {"policy": "writes"}})

    assert {"read_file", "write_file", "patch", "search_files"} <= set(listed(llm_cli))
    # no terminal to answer on: the question goes unanswered, which refuses
    [result] = call(llm_cli, "write_file", support.WRITE)
    assert "was not approved" in json.loads(result["output"])["error"]
    assert not (workspace / "written.txt").exists()


@pytest.mark.parametrize(("adapters", "said"), [
    ({"llm": {"toolsets": "file"}}, "must be a list of toolset names"),
    ({"llm": {"toolsets": ["no-such-toolset"]}}, "no-such-toolset"),
    ({"llm": ["file"]}, "adapters.llm in"),
    ("llm", "must be a mapping")])
def test_bad_settings_register_no_hermes_tool_and_say_why(llm_cli: Any, isolated_home: Path, adapters: Any,
                                                          said: str):
    configure(isolated_home, {"adapters": adapters})

    result = llm_cli("tools", "--json")
    assert result.returncode == 0, result.stderr
    assert "hermes: no tools registered with llm" in result.stderr and said in result.stderr
    assert not [tool for tool in json.loads(result.stdout)["tools"] if tool.get("plugin") == "hermes"]


def test_loading_the_plugin_imports_neither_llm_nor_any_hermes_plugin():
    code = ("import sys; sys.modules['llm'] = None\n"  # as if llm were not installed
            "import hermes_core.adapters.llm\n"
            "print(sorted(name for name, module in sys.modules.items() if module is not None and name.startswith("
            "('hermes_plugin', 'llm', 'pydantic_ai', 'agents', 'langchain'))))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=scaled_timeout(60))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_with_llms_async_models_an_async_handler_runs_on_the_callers_loop(pack_runtime: Any, workspace: Path,
                                                                         tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch):
    import llm

    from hermes_core.adapters.llm import llm_tools

    monkeypatch.setenv("LLM_USER_PATH", str(tmp_path / "llm-user"))
    runtime = support.files_runtime(pack_runtime, workspace)
    where = support.Where(runtime)
    model = llm.get_async_model("echo")
    prompt = json.dumps({"tool_calls": [{"name": "where", "arguments": {}}]})

    async def main() -> tuple[asyncio.AbstractEventLoop, str]:
        tools = llm_tools(runtime, toolsets=["where"], asynchronous=True)
        return asyncio.get_running_loop(), await model.chain(prompt, tools=tools).text()

    loop, text = asyncio.run(main())
    assert where.loops == [loop]
    assert "ran on the caller's loop" in text

"""``execute_code`` loaded from its manifest into a real ``hermes_core.Runtime``."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path
from typing import Any

import hermes_plugin_code
import pytest

from hermes_core import Runtime

NUMBERS = {
    "type": "object",
    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
    "required": ["a", "b"],
}
NAME = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@pytest.fixture
def seen() -> list[dict[str, Any]]:
    """The dispatch keyword arguments each call of the ``add`` tool received."""
    return []


@pytest.fixture
def runtime(hermes_runtime: Runtime, load_hermes_plugin, seen: list[dict[str, Any]]) -> Runtime:
    runtime = hermes_runtime
    load_hermes_plugin(Path(hermes_plugin_code.__file__).parent, plugin_id="code")

    def add(args: dict[str, Any], **kwargs: Any) -> str:
        seen.append(kwargs)
        return json.dumps({"sum": args["a"] + args["b"]})

    def greet(args: dict[str, Any], **kwargs: Any) -> str:
        return f"hello {args['name']}"

    runtime.register_tool("add", "math", {"description": "Add two integers", "parameters": NUMBERS}, add)
    runtime.register_tool("greet", "greetings", {"description": "Greet someone", "parameters": NAME}, greet)
    return runtime


def execute(runtime: Runtime, code: str, **context: Any) -> dict[str, Any]:
    return json.loads(
        runtime.handle_function_call("execute_code", {"code": textwrap.dedent(code)}, **context)
    )


def test_a_script_calls_two_registered_tools_through_the_runtime(runtime, seen):
    result = execute(
        runtime,
        """
        from hermes_tools import add, greet
        print(add(a=2, b="40")["sum"], greet(name="Ada"))
        """,
        task_id="task-1",
        session_id="session-1",
    )
    assert result["status"] == "ok", result["output"]
    assert result["output"] == "42 hello Ada\n"
    assert result["tool_calls"] == 2
    assert seen[0]["task_id"] == "task-1"
    assert seen[0]["session_id"] == "session-1"


def test_hooks_apply_to_the_scripts_tool_calls(runtime):
    def no_greetings(tool_name: str, **kwargs: Any) -> dict[str, str] | None:
        return {"action": "block", "message": "greetings are off"} if tool_name == "greet" else None

    runtime.context("guard").register_hook("pre_tool_call", no_greetings)
    result = execute(runtime, "from hermes_tools import greet\nprint(greet(name='Ada'))")
    assert result["status"] == "ok", result["output"]
    assert "greetings are off" in result["output"]


def test_execute_code_cannot_call_itself(runtime):
    result = execute(runtime, "from hermes_tools import execute_code")
    assert result["status"] == "error"
    assert "ImportError: cannot import name 'execute_code'" in result["output"]


def test_settings_from_config_yaml_limit_the_run(runtime):
    config = "plugins:\n  entries:\n    code:\n      settings:\n        max_tool_calls: 1\n"
    runtime.home.config_file.write_text(config)
    result = execute(runtime, "from hermes_tools import add\nadd(a=1, b=1)\nadd(a=1, b=1)")
    assert result["status"] == "error"
    assert "tool call limit reached: execute_code allows 1 per run" in result["output"]
    assert result["tool_calls"] == 1


def test_an_invalid_setting_is_reported_as_an_error(runtime):
    config = "plugins:\n  entries:\n    code:\n      settings:\n        timeout: soon\n"
    runtime.home.config_file.write_text(config)
    result = execute(runtime, "print(1)")
    assert result == {"error": "plugins.entries.code.settings.timeout must be a positive number, got 'soon'"}


def test_the_model_is_told_which_tools_the_script_can_call(runtime):
    [definition] = [
        d["function"] for d in runtime.get_tool_definitions() if d["function"]["name"] == "execute_code"
    ]
    assert definition["description"].startswith("Run a Python script in a subprocess")
    assert definition["description"].endswith("(from hermes_tools import ...): add, greet")


def test_the_check_that_lists_tools_imports_no_runner() -> None:
    """``hermes tools list`` runs the check of ``execute_code`` (the manifest's ``check_fn``): its module imports
    nothing but ``os``, neither the runner nor its sockets."""
    folder = Path(hermes_plugin_code.__file__).parent
    assert "check_fn: hermes_plugin_code.checks:platform_supported" in (folder / "plugin.yaml").read_text("utf-8")
    tree = ast.parse((folder / "checks.py").read_text(encoding="utf-8"))
    imported = {alias.name for node in tree.body if isinstance(node, ast.Import | ast.ImportFrom)
                for alias in node.names}
    assert imported == {"annotations", "os"}


def test_the_scripts_output_lines_are_reported_as_progress(runtime: Runtime) -> None:
    heard: list[Any] = []
    runtime.set_progress_callback(heard.append)
    result = execute(runtime, """
        import time
        for n in range(1, 4):
            print(f"step {n}", flush=True)
            time.sleep(0.3)
    """, tool_call_id="c1")
    assert result["status"] == "ok"
    # (lines that arrive together are one report, and reports closer than 0.1 s are dropped: how many, depends)
    counts = [progress.done for progress in heard]
    assert counts and counts == sorted(set(counts)) and counts[-1] <= 3
    assert all(progress.message == f"step {progress.done:g}" for progress in heard)
    assert {progress.tool_call_id for progress in heard} == {"c1"}

"""``HermesToolset``: Hermes tools in pydantic-ai agents, run by pydantic-ai's own loop with its offline
``FunctionModel`` (a scripted model that sees what a real one would)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from hermes_core.adapters.pydantic_ai import HermesToolset

support = pytest.importorskip("hermes_adapter_test_support")


class Scripted:
    """A model that calls ``name`` with ``args`` once, then answers with the tool results it got back."""

    def __init__(self, name: str, args: dict[str, Any]) -> None:
        self.call = ToolCallPart(name, args, tool_call_id="call_1")
        self.offered: list[Any] = []
        self.returned: list[str] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.offered = list(info.function_tools)
        returns = [part for part in messages[-1].parts if isinstance(part, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[self.call])
        self.returned = [part.model_response_str() for part in returns]
        return ModelResponse(parts=[TextPart("done: " + " | ".join(self.returned))])


def run(toolset: HermesToolset, model: Scripted) -> Any:
    return Agent(FunctionModel(model), toolsets=[toolset]).run_sync("go").output


def test_read_file_of_the_file_pack_is_offered_with_its_schema_and_its_result_reaches_the_next_turn(
        pack_runtime: Any, workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    model = Scripted("read_file", {"path": "notes.txt"})

    output = run(HermesToolset(runtime), model)

    [read] = [tool for tool in model.offered if tool.name == "read_file"]
    [definition] = [d["function"] for d in runtime.get_tool_definitions(format="openai")
                    if d["function"]["name"] == "read_file"]
    assert read.parameters_json_schema == definition["parameters"]
    assert read.description == definition["description"] and read.kind == "function"
    assert read.sequential is False  # parallel_safe: may run beside other calls
    assert next(t for t in model.offered if t.name == "write_file").sequential is True
    assert support.NOTE in json.loads(model.returned[0])["content"]
    assert support.NOTE in output


def test_a_blocking_pre_tool_call_hook_blocks_the_call_and_the_model_reads_why(pack_runtime: Any, workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    seen = support.block_reads(runtime)
    model = Scripted("read_file", {"path": "notes.txt"})

    run(HermesToolset(runtime), model)

    assert seen == ["read_file"]
    assert "reading is blocked by policy X" in json.loads(model.returned[0])["error"]
    assert support.NOTE not in model.returned[0]


def test_under_writes_write_file_asks_and_unanswered_does_not_run(pack_runtime: Any, workspace: Path):
    runtime, unanswered = support.writes_runtime(pack_runtime, workspace)
    model = Scripted("write_file", support.WRITE)
    try:
        run(HermesToolset(runtime), model)
    finally:
        unanswered.release.set()

    assert unanswered.tools == ["write_file"]
    assert "was not approved" in json.loads(model.returned[0])["error"]
    assert not (workspace / "written.txt").exists()


def test_framework_approval_makes_write_file_a_deferred_approval_whose_answer_hermes_takes(pack_runtime: Any,
                                                                                          workspace: Path):
    runtime, unanswered = support.writes_runtime(pack_runtime, workspace)
    model = Scripted("write_file", support.WRITE)
    agent = Agent(FunctionModel(model), toolsets=[HermesToolset(runtime, approval="framework")],
                  output_type=[str, DeferredToolRequests])

    first = agent.run_sync("go")
    assert isinstance(first.output, DeferredToolRequests)
    assert [call.tool_name for call in first.output.approvals] == ["write_file"]
    assert next(t for t in model.offered if t.name == "write_file").kind == "unapproved"
    assert next(t for t in model.offered if t.name == "read_file").kind == "function"
    assert not (workspace / "written.txt").exists()  # asked, unanswered: not run

    second = agent.run_sync(message_history=first.all_messages(),
                            deferred_tool_results=DeferredToolResults(approvals={"call_1": True}))
    assert (workspace / "written.txt").read_text() == support.WRITE["content"]
    assert unanswered.requests == []  # pydantic-ai's approval was the answer: Hermes did not ask again
    assert "bytes_written" in second.output


def test_a_filtered_read_only_view_offers_no_write_tool(pack_runtime: Any, workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    model = Scripted("read_file", {"path": "notes.txt"})

    run(HermesToolset(runtime.filtered(read_only=True)), model)

    assert sorted(tool.name for tool in model.offered) == ["read_file", "search_files"]
    assert support.NOTE in model.returned[0]


def test_an_async_handler_runs_on_the_callers_event_loop(pack_runtime: Any, workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    where = support.Where(runtime)
    model = Scripted("where", {})

    async def main() -> asyncio.AbstractEventLoop:
        await Agent(FunctionModel(model), toolsets=[HermesToolset(runtime)]).run("go")
        return asyncio.get_running_loop()

    assert where.loops == [asyncio.run(main())]
    assert model.returned == ["ran on the caller's loop"]


def test_an_unknown_approval_mode_is_a_clear_error(pack_runtime: Any, workspace: Path):
    with pytest.raises(ValueError, match="approval must be 'hermes' or 'framework'"):
        HermesToolset(support.files_runtime(pack_runtime, workspace), approval="yes")


@pytest.mark.parametrize(("arguments", "problem"), [
    ("not json{", "not valid JSON"), ("[1, 2]", "must be a JSON object"),
    ({"path": "notes.txt", "limit": "many"}, "'limit' must be integer")])
def test_malformed_arguments_get_hermes_error_as_the_result_not_a_retry_that_ends_the_run(
        pack_runtime: Any, workspace: Path, arguments: Any, problem: str):
    runtime = support.files_runtime(pack_runtime, workspace)
    model = Scripted("read_file", arguments)

    assert run(HermesToolset(runtime), model).startswith("done: ")
    assert problem in json.loads(model.returned[0])["error"]

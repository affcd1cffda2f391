"""``function_tools``: Hermes tools in OpenAI Agents SDK agents, run by the SDK's ``Runner`` with its
``OpenAIChatCompletionsModel`` and a real ``AsyncOpenAI`` client pointed at a fake endpoint on 127.0.0.1 (the SDK
has no offline model of its own) that answers with the scripted tool call, then with the results it got."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, set_tracing_disabled
from openai import AsyncOpenAI

from hermes_core.adapters.latest import Latest
from hermes_core.adapters.openai_agents import function_tools

support = pytest.importorskip("hermes_adapter_test_support")
fakes = sys.modules["hermes_fake_provider"]  # loaded by conftest.py


@pytest.fixture(autouse=True)
def no_tracing() -> Any:
    set_tracing_disabled(True)  # the SDK would export traces to OpenAI's servers
    yield
    set_tracing_disabled(False)


def agent(fake: Any, tools: list[Any]) -> Agent[Any]:
    client = AsyncOpenAI(base_url=f"{fake.url}/v1", api_key="test-key", max_retries=0)
    return Agent(name="worker", model=OpenAIChatCompletionsModel(model="test-model", openai_client=client),
                 tools=tools)


def run(fake: Any, tools: list[Any]) -> Any:
    return asyncio.run(Runner.run(agent(fake, tools), "go"))


def offered(fake: Any) -> dict[str, dict[str, Any]]:
    """The functions the first request offered, by name."""
    return {tool["function"]["name"]: tool["function"] for tool in fake.bodies("/chat/completions")[0]["tools"]}


def tool_messages(fake: Any) -> list[str]:
    """What the second request sent back as tool results."""
    return [m["content"] for m in fake.bodies("/chat/completions")[1]["messages"] if m["role"] == "tool"]


def test_read_file_of_the_file_pack_is_offered_strict_and_its_result_reaches_the_next_turn(pack_runtime: Any,
                                                                                           workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    with fakes.fake_provider([("read_file", {"path": "notes.txt", "offset": None, "limit": None})]) as fake:
        result = run(fake, function_tools(runtime))

    [strict] = [d["function"] for d in runtime.get_tool_definitions(strict=True)
                if d["function"]["name"] == "read_file"]
    read = offered(fake)["read_file"]
    assert read["parameters"] == strict["parameters"] and read["strict"] is True
    assert read["description"] == strict["description"]
    [content] = tool_messages(fake)
    assert support.NOTE in json.loads(content)["content"]
    assert support.NOTE in result.final_output


def test_a_schema_that_cannot_be_strict_is_offered_as_it_is_with_the_warning_of_strict_definitions(
        pack_runtime: Any, workspace: Path, caplog: pytest.LogCaptureFixture):
    runtime = support.files_runtime(pack_runtime, workspace)
    free_form = {"type": "object", "properties": {"data": {"type": "object"}}, "required": ["data"]}
    runtime.register_tool("store", "store", {"description": "Store anything", "parameters": free_form},
                          lambda args, **kw: "stored")
    with caplog.at_level(logging.WARNING):
        tools = {tool.name: tool for tool in function_tools(runtime)}

    assert tools["store"].strict_json_schema is False and tools["store"].params_json_schema == free_form
    assert tools["read_file"].strict_json_schema is True
    assert "tool 'store' left out of the strict definitions: its schema cannot be made strict" in caplog.text


def test_a_blocking_pre_tool_call_hook_blocks_the_call_and_the_model_reads_why(pack_runtime: Any, workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    seen = support.block_reads(runtime)
    with fakes.fake_provider([("read_file", {"path": "notes.txt", "offset": None, "limit": None})]) as fake:
        run(fake, function_tools(runtime))

    assert seen == ["read_file"]
    [content] = tool_messages(fake)
    assert "reading is blocked by policy X" in json.loads(content)["error"]


def test_under_writes_write_file_asks_and_unanswered_does_not_run(pack_runtime: Any, workspace: Path):
    runtime, unanswered = support.writes_runtime(pack_runtime, workspace)
    try:
        with fakes.fake_provider([("write_file", support.WRITE)]) as fake:
            run(fake, function_tools(runtime))
    finally:
        unanswered.release.set()

    assert unanswered.tools == ["write_file"]
    [content] = tool_messages(fake)
    assert "was not approved" in json.loads(content)["error"]
    assert not (workspace / "written.txt").exists()


def test_framework_approval_interrupts_the_run_and_the_sdks_approval_is_hermes_answer(pack_runtime: Any,
                                                                                     workspace: Path):
    runtime, unanswered = support.writes_runtime(pack_runtime, workspace)
    tools = function_tools(runtime, approval="framework")

    async def main(fake: Any) -> tuple[Any, Any]:
        worker = agent(fake, tools)
        first = await Runner.run(worker, "go")
        assert not (workspace / "written.txt").exists()  # asked, unanswered: not run
        state = first.to_state()
        state.approve(first.interruptions[0])
        return first, await Runner.run(worker, state)

    with fakes.fake_provider([("write_file", support.WRITE)]) as fake:
        first, second = asyncio.run(main(fake))

    assert [item.name for item in first.interruptions] == ["write_file"]
    assert (workspace / "written.txt").read_text() == support.WRITE["content"]
    assert unanswered.requests == []  # the SDK's approval was the answer: Hermes did not ask again
    assert "bytes_written" in second.final_output


def test_a_filtered_read_only_view_offers_no_write_tool(pack_runtime: Any, workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    with fakes.fake_provider([("read_file", {"path": "notes.txt", "offset": None, "limit": None})]) as fake:
        run(fake, function_tools(runtime.filtered(read_only=True)))

    assert sorted(offered(fake)) == ["read_file", "search_files"]


def test_an_async_handler_runs_on_the_callers_event_loop(pack_runtime: Any, workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    where = support.Where(runtime)

    async def main(fake: Any) -> asyncio.AbstractEventLoop:
        await Runner.run(agent(fake, function_tools(runtime, toolsets=["where"])), "go")
        return asyncio.get_running_loop()

    with fakes.fake_provider([("where", {})]) as fake:
        loop = asyncio.run(main(fake))

    assert where.loops == [loop]
    assert tool_messages(fake) == ["ran on the caller's loop"]


@pytest.mark.parametrize(("parallel_safe", "most_at_once"), [(False, 1), (True, 2)])
def test_a_tool_that_is_not_parallel_safe_runs_alone_when_the_sdk_starts_calls_together(
        pack_runtime: Any, workspace: Path, parallel_safe: bool, most_at_once: int):
    runtime = support.files_runtime(pack_runtime, workspace)
    overlap = support.Overlap(runtime, parallel_safe)
    with fakes.fake_provider([("first", {}), ("second", {})]) as fake:
        run(fake, function_tools(runtime, toolsets=["overlap"]))

    assert tool_messages(fake) == ["done", "done"]
    assert overlap.most_at_once == most_at_once


def test_a_tool_registered_after_the_agent_was_made_is_offered_and_called_through_latest(pack_runtime: Any,
                                                                                        workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    latest = Latest(function_tools, runtime)
    made = latest()
    assert latest() is made  # nothing changed: the same list, not made again

    async def main(fake: Any) -> None:
        worker = agent(fake, made)
        await Runner.run(worker, "go")  # before: the tool is not there yet
        runtime.register_tool("late", "late", {"description": "Registered later", "parameters": {
            "type": "object", "properties": {}}}, lambda args, **kw: "late ran", annotations={"read_only": True})
        await Runner.run(worker.clone(tools=latest()), "go")  # the documented way: a clone per run

    with fakes.fake_provider([("late", {})]) as fake:
        asyncio.run(main(fake))

    # the first run: one request, nothing to call; the second: the call, then a request with its result
    first, second, third = fake.bodies("/chat/completions")
    before, after = ({tool["function"]["name"] for tool in body["tools"]} for body in (first, second))
    assert "late" not in before and {"late", "read_file"} <= after
    assert [m["content"] for m in third["messages"] if m["role"] == "tool"] == ["late ran"]
    assert latest() is not made and latest() is latest()


def test_arguments_that_are_not_json_get_hermes_error_as_the_result(pack_runtime: Any, workspace: Path):
    from agents import RunContextWrapper
    from agents.tool_context import ToolContext

    runtime = support.files_runtime(pack_runtime, workspace)
    [read] = [tool for tool in function_tools(runtime) if tool.name == "read_file"]
    context = ToolContext(RunContextWrapper(None).context, tool_name="read_file", tool_call_id="call_1",
                          tool_arguments="not json{")

    result = asyncio.run(read.on_invoke_tool(context, "not json{"))
    assert "not valid JSON" in json.loads(result)["error"]

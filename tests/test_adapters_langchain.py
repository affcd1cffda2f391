"""``langchain_tools``: Hermes tools in LangChain and LangGraph, run by a LangGraph graph of a model and LangGraph's
``ToolNode``, with langchain-core's ``GenericFakeChatModel`` scripted to send tool calls."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from hermes_core.adapters.langchain import langchain_tools
from hermes_core.adapters.latest import Latest

support = pytest.importorskip("hermes_adapter_test_support")
prebuilt = pytest.importorskip("langgraph.prebuilt")
graphs = pytest.importorskip("langgraph.graph")


class ScriptedChatModel(GenericFakeChatModel):
    """langchain-core's fake chat model, which answers with the messages it is given, plus what it lacks to be
    handed tools: ``bind_tools`` keeps the OpenAI definitions a real model would send; every turn's input is kept."""

    offered: list[dict[str, Any]] = Field(default_factory=list)
    seen: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChatModel:
        self.offered = [convert_to_openai_tool(tool) for tool in tools]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.seen = [*self.seen, list(messages)]
        return super()._generate(messages, *args, **kwargs)


def scripted(name: str, args: dict[str, Any]) -> ScriptedChatModel:
    return ScriptedChatModel(messages=iter([AIMessage("", tool_calls=[{"name": name, "args": args, "id": "call_1"}]),
                                            AIMessage("done")]))


def agent(model: ScriptedChatModel, tools: list[Any]) -> Any:
    """The usual agent graph: the model, then LangGraph's ToolNode while the model sends tool calls."""
    bound = model.bind_tools(tools)
    builder = graphs.StateGraph(graphs.MessagesState)
    builder.add_node("model", lambda state: {"messages": [bound.invoke(state["messages"])]})
    builder.add_node("tools", prebuilt.ToolNode(tools))
    builder.add_edge(graphs.START, "model")
    builder.add_conditional_edges("model", prebuilt.tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile()


def run(model: ScriptedChatModel, tools: list[Any]) -> list[BaseMessage]:
    return agent(model, tools).invoke({"messages": [("user", "go")]})["messages"]


def tool_results(model: ScriptedChatModel) -> list[str]:
    """The tool results the model's second turn was given."""
    return [str(m.content) for m in model.seen[1] if isinstance(m, ToolMessage)]


def test_read_file_of_the_file_pack_is_offered_with_its_schema_and_its_result_reaches_the_next_turn(
        pack_runtime: Any, workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    model = scripted("read_file", {"path": "notes.txt"})

    messages = run(model, langchain_tools(runtime))

    [read] = [tool["function"] for tool in model.offered if tool["function"]["name"] == "read_file"]
    [definition] = [d["function"] for d in runtime.get_tool_definitions() if d["function"]["name"] == "read_file"]
    assert read["parameters"] == definition["parameters"] and read["description"] == definition["description"]
    [result] = tool_results(model)
    assert support.NOTE in json.loads(result)["content"]
    assert messages[-1].content == "done"  # the result went back to the model: return_direct is False


def test_a_blocked_call_is_a_tool_message_not_an_exception_that_breaks_the_graph(pack_runtime: Any,
                                                                                 workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    seen = support.block_reads(runtime)
    model = scripted("read_file", {"path": "notes.txt"})

    messages = run(model, langchain_tools(runtime))

    assert seen == ["read_file"]
    [result] = tool_results(model)
    assert "reading is blocked by policy X" in json.loads(result)["error"]
    assert messages[-1].content == "done"


def test_bad_arguments_are_hermes_error_as_the_tool_message(pack_runtime: Any, workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    model = scripted("read_file", {"path": "notes.txt", "limit": "many"})

    run(model, langchain_tools(runtime))

    [result] = tool_results(model)
    assert "limit" in json.loads(result)["error"]


def test_under_writes_write_file_asks_and_unanswered_does_not_run(pack_runtime: Any, workspace: Path):
    runtime, unanswered = support.writes_runtime(pack_runtime, workspace)
    model = scripted("write_file", support.WRITE)
    try:
        run(model, langchain_tools(runtime))
    finally:
        unanswered.release.set()

    assert unanswered.tools == ["write_file"]
    [result] = tool_results(model)
    assert "was not approved" in json.loads(result)["error"]
    assert not (workspace / "written.txt").exists()


def test_a_filtered_read_only_view_offers_no_write_tool(pack_runtime: Any, workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    tools = langchain_tools(runtime.filtered(read_only=True))

    assert sorted(tool.name for tool in tools) == ["read_file", "search_files"]
    assert all(tool.return_direct is False for tool in tools)
    assert tools[0].metadata == {"hermes": {"annotations": {"read_only": True, "open_world": False},
                                            "parallel_safe": True}}


def test_an_async_handler_runs_on_the_callers_event_loop(pack_runtime: Any, workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    where = support.Where(runtime)
    model = scripted("where", {})

    async def main() -> asyncio.AbstractEventLoop:
        await agent(model, langchain_tools(runtime, toolsets=["where"])).ainvoke({"messages": [("user", "go")]})
        return asyncio.get_running_loop()

    assert where.loops == [asyncio.run(main())]
    assert tool_results(model) == ["ran on the caller's loop"]


@pytest.mark.parametrize("asynchronous", [False, True])
def test_a_pre_tool_call_hook_sees_the_tool_call_id_the_model_sent(pack_runtime: Any, workspace: Path,
                                                                   asynchronous: bool):
    runtime = support.files_runtime(pack_runtime, workspace)
    seen: list[str | None] = []
    runtime.context().register_hook("pre_tool_call", lambda tool_call_id, **kwargs: seen.append(tool_call_id))
    model = scripted("read_file", {"path": "notes.txt"})
    graph = agent(model, langchain_tools(runtime))

    if asynchronous:
        asyncio.run(graph.ainvoke({"messages": [("user", "go")]}))
    else:
        graph.invoke({"messages": [("user", "go")]})

    assert seen == ["call_1"]
    assert support.NOTE in json.loads(tool_results(model)[0])["content"]


def test_a_tool_registered_after_the_graph_was_built_is_called_by_the_graph_latest_builds(pack_runtime: Any,
                                                                                          workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    model = scripted("late", {})
    graph = Latest(lambda view: agent(model, langchain_tools(view)), runtime)
    built = graph()
    assert graph() is built  # nothing changed: the same graph, not built again

    runtime.register_tool("late", "late", {"description": "Registered later", "parameters": {
        "type": "object", "properties": {}}}, lambda args, **kw: "late ran", annotations={"read_only": True})
    messages = graph().invoke({"messages": [("user", "go")]})["messages"]

    assert "late" in [tool["function"]["name"] for tool in model.offered]
    assert tool_results(model) == ["late ran"] and messages[-1].content == "done"
    assert graph() is not built


def test_a_sync_invoke_goes_through_handle_function_call(pack_runtime: Any, workspace: Path):
    runtime = support.files_runtime(pack_runtime, workspace)
    [read] = langchain_tools(runtime, toolsets=["file"])[:1]
    assert support.NOTE in json.loads(read.invoke({"path": "notes.txt"}))["content"]


@pytest.mark.parametrize(("parallel_safe", "most_at_once"), [(False, 1), (True, 2)])
def test_a_tool_that_is_not_parallel_safe_runs_alone_when_tool_node_starts_calls_together(
        pack_runtime: Any, workspace: Path, parallel_safe: bool, most_at_once: int):
    runtime = support.files_runtime(pack_runtime, workspace)
    overlap = support.Overlap(runtime, parallel_safe)
    calls = [{"name": name, "args": {}, "id": f"call_{name}"} for name in ("first", "second")]
    model = ScriptedChatModel(messages=iter([AIMessage("", tool_calls=calls), AIMessage("done")]))

    asyncio.run(agent(model, langchain_tools(runtime, toolsets=["overlap"])).ainvoke({"messages": [("user", "go")]}))

    assert tool_results(model) == ["done", "done"]
    assert overlap.most_at_once == most_at_once


@pytest.mark.parametrize("name", ["config", "callbacks", "run_manager", "self"])
def test_an_argument_named_like_langchains_own_reaches_hermes_as_the_model_sent_it(pack_runtime: Any,
                                                                                   workspace: Path, name: str):
    runtime = support.files_runtime(pack_runtime, workspace)
    received: list[dict[str, Any]] = []
    schema = {"description": "Echo", "parameters": {"type": "object", "properties": {name: {"type": "string"}},
                                                     "required": [name]}}
    runtime.register_tool("echo", "echo", schema, lambda args, **kw: received.append(args) or json.dumps(args))
    [echo] = langchain_tools(runtime, toolsets=["echo"])

    assert json.loads(echo.invoke({name: "from the model"})) == {name: "from the model"}
    assert json.loads(asyncio.run(echo.ainvoke({name: "from the model"}))) == {name: "from the model"}
    assert received == [{name: "from the model"}] * 2

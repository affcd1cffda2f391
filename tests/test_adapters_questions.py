"""``clarify`` in the frameworks: LangGraph's ``interrupt()`` pauses a real graph with the question and its
``Command(resume=...)`` answers it; pydantic-ai defers the call as a question answered through
``DeferredToolResults``; otherwise (and in the Agents SDK) the runtime's user callback answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hermes_core import Runtime
from hermes_core.adapters.questions import check_questions

PACKS = (("hermes_plugin_agent", "agent"),)
CLARIFY = {"question": "Which database?", "choices": ["sqlite", "postgres"]}


@pytest.fixture
def runtime(pack_runtime: Any) -> Runtime:
    made: Runtime = pack_runtime({}, *PACKS)
    return made


# -- LangGraph ------------------------------------------------------------------------------------------------


def tools_graph(tools: list[Any]) -> Any:
    """A graph whose one node is LangGraph's ToolNode, with a checkpointer (an interrupt needs one)."""
    graphs = pytest.importorskip("langgraph.graph")
    prebuilt = pytest.importorskip("langgraph.prebuilt")
    from langgraph.checkpoint.memory import InMemorySaver

    builder = graphs.StateGraph(graphs.MessagesState)
    builder.add_node("tools", prebuilt.ToolNode(tools))
    builder.add_edge(graphs.START, "tools")
    return builder.compile(checkpointer=InMemorySaver())


def asking(*calls: dict[str, Any]) -> dict[str, Any]:
    from langchain_core.messages import AIMessage

    return {"messages": [AIMessage("", tool_calls=[{"name": "clarify", "args": args, "id": f"call_{n}"}
                                                   for n, args in enumerate(calls, 1)])]}


@pytest.mark.parametrize("asynchronous", [False, True])
def test_langgraph_pauses_on_the_question_and_resumes_with_the_answer(runtime, asynchronous):
    import asyncio

    from langgraph.types import Command

    from hermes_core.adapters.langchain import langchain_tools

    graph = tools_graph(langchain_tools(runtime, questions="framework"))
    config = {"configurable": {"thread_id": f"t-{asynchronous}"}}

    def invoke(value: Any) -> Any:
        return asyncio.run(graph.ainvoke(value, config)) if asynchronous else graph.invoke(value, config)

    paused = invoke(asking(CLARIFY))
    [interrupt] = paused["__interrupt__"]
    assert interrupt.value == {"hermes_question": "Which database?", "choices": ["sqlite", "postgres"],
                               "multi_select": False, "free_text": True, "tool": "clarify"}
    done = invoke(Command(resume="postgres"))
    answer = json.loads(done["messages"][-1].content)
    assert answer == {"question": "Which database?", "choices_offered": ["sqlite", "postgres"],
                      "user_response": "postgres"}


def test_langgraph_questions_by_default_go_to_the_runtimes_user_callback(runtime):
    from hermes_core.adapters.langchain import langchain_tools

    runtime.set_user_callback(lambda question: question.choices[0])
    done = tools_graph(langchain_tools(runtime)).invoke(asking(CLARIFY), {"configurable": {"thread_id": "t"}})
    assert "__interrupt__" not in done
    assert json.loads(done["messages"][-1].content)["user_response"] == "sqlite"


# -- pydantic-ai ----------------------------------------------------------------------------------------------


def test_pydantic_ai_defers_the_question_and_the_answer_reaches_the_model(runtime):
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from hermes_core.adapters.pydantic_ai import HermesToolset

    returned: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [part for part in messages[-1].parts if isinstance(part, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("clarify", CLARIFY, tool_call_id="call_1")])
        returned.extend(part.model_response_str() for part in returns)
        return ModelResponse(parts=[TextPart("using " + returned[-1])])

    agent = Agent(FunctionModel(model), toolsets=[HermesToolset(runtime, questions="framework")],
                  output_type=[str, DeferredToolRequests])
    first = agent.run_sync("go")
    assert isinstance(first.output, DeferredToolRequests)
    [call] = first.output.calls
    assert call.tool_name == "clarify" and first.output.kind(call.tool_call_id) == "question"
    assert first.output.metadata[call.tool_call_id]["hermes_question"] == "Which database?"
    second = agent.run_sync(message_history=first.all_messages(),
                            deferred_tool_results=DeferredToolResults(calls={call.tool_call_id: "postgres"}))
    assert second.output == "using postgres" and returned == ["postgres"]


def test_pydantic_ai_questions_by_default_go_to_the_runtimes_user_callback(runtime):
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from hermes_core.adapters.pydantic_ai import HermesToolset

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [part for part in messages[-1].parts if isinstance(part, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("clarify", CLARIFY, tool_call_id="call_1")])
        return ModelResponse(parts=[TextPart(returns[0].model_response_str())])

    runtime.set_user_callback(lambda question: "sqlite")
    output = Agent(FunctionModel(model), toolsets=[HermesToolset(runtime)]).run_sync("go").output
    assert json.loads(output)["user_response"] == "sqlite"


# -- the OpenAI Agents SDK: the runtime's user callback ---------------------------------------------------------


def test_agents_sdk_questions_go_to_the_runtimes_async_user_callback(runtime):
    import asyncio

    from hermes_core.adapters.openai_agents import function_tools

    async def ask(question: Any) -> list[str]:
        await asyncio.sleep(0)
        return [question.choices[1]]

    runtime.set_user_callback(ask)
    [clarify] = [tool for tool in function_tools(runtime) if tool.name == "clarify"]

    class Context:
        tool_call_id = "call_1"

    result = asyncio.run(clarify.on_invoke_tool(Context(), json.dumps(CLARIFY)))  # type: ignore[arg-type]
    assert json.loads(result)["user_response"] == "postgres"


def test_an_unknown_questions_mode_is_refused():
    with pytest.raises(ValueError, match="questions must be 'hermes' or 'framework'"):
        check_questions("model")

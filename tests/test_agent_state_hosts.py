"""The state tools in every host (the first "Done when" of issue 39): in ``hermes tools call``, ``hermes mcp serve``
driven by the MCP SDK client, a pydantic-ai agent with its offline ``FunctionModel`` and a LangGraph ``ToolNode``,
``todo`` writes and reads back a list, ``memory`` adds an entry that a new process sees in
``runtime.memory_prompt()``, and ``session_search`` finds a phrase recorded earlier in another session.

The agent pack is a plugin folder of the home (its ``plugin.yaml``) with its package on ``PYTHONPATH``: the same
manifest-declared plugin an installed pack is, without a venv per test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import hermes_plugin_agent
import pytest

from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout

support = pytest.importorskip("hermes_mcp_test_support")
PACK = Path(hermes_plugin_agent.__file__).resolve().parent
PHRASE = "rotate the deploy keys every Friday"
TODOS = [{"id": "1", "content": "check the rotation", "status": "in_progress"},
         {"id": "2", "content": "tell the team", "status": "pending"}]


@pytest.fixture
def home(isolated_home: Path) -> Path:
    """A home with the agent pack as a plugin folder, and a session recorded earlier holding :data:`PHRASE`."""
    folder = isolated_home / "plugins" / "agent"
    folder.mkdir(parents=True)
    shutil.copy(PACK / "plugin.yaml", folder / "plugin.yaml")
    (isolated_home / "config.yaml").write_text("plugins:\n  enabled: [agent]\n")
    runtime = Runtime(home=isolated_home, entry_points=())
    runtime.sessions.record("earlier", "user", f"Remember: we {PHRASE}.", source="cli")
    runtime.close()
    return isolated_home


def env(home: Path) -> dict[str, str]:
    return {**os.environ, "HERMES_HOME": str(home),
            "PYTHONPATH": os.pathsep.join([str(PACK.parent), os.environ.get("PYTHONPATH", "")])}


def prompt_in_a_new_process(home: Path) -> str:
    """``runtime.memory_prompt()`` as another program sees it."""
    done = subprocess.run([sys.executable, "-c", "from hermes_core import Runtime; print(Runtime().memory_prompt())"],
                          env=env(home), capture_output=True, text=True, timeout=scaled_timeout(60), check=True)
    return done.stdout


def assert_found_earlier(answer: dict[str, Any]) -> None:
    assert [r["session_id"] for r in answer["results"]] == ["earlier"]
    assert PHRASE in answer["results"][0]["messages"][0]["content"]


# -- hermes tools call ------------------------------------------------------------------------------------------

def tools_call(home: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run([*support.hermes_command(), "tools", "call", *args], env=env(home), capture_output=True,
                          text=True, timeout=scaled_timeout(120))
    assert done.returncode == 0, done.stdout + done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def test_hermes_tools_call(home):
    written = tools_call(home, "todo", json.dumps({"todos": TODOS}), "--session", "cli-1")
    assert tools_call(home, "todo", "--session", "cli-1") == written  # another process, the same session
    assert written["todos"] == TODOS
    assert tools_call(home, "memory", json.dumps({"action": "add", "target": "user", "content": "Works in UTC"}))[
        "success"]
    assert "Works in UTC" in prompt_in_a_new_process(home)
    assert_found_earlier(tools_call(home, "session_search", json.dumps({"query": "deploy keys"})))
    recorded = Runtime(home=home, entry_points=()).sessions.messages("cli-1")
    assert [m["role"] for m in recorded] == ["assistant", "tool", "assistant", "tool"]


# -- hermes mcp serve ------------------------------------------------------------------------------------------

def texts(result: Any) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads("".join(part.text for part in result.content))
    return answer


def test_hermes_mcp_serve_over_stdio(home):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main() -> None:
        command = [*support.hermes_command(), "mcp", "serve"]
        params = StdioServerParameters(command=command[0], args=command[1:], env=env(home))
        async with AsyncExitStack() as stack:
            errlog = stack.enter_context(open(home / "serve.log", "a"))  # noqa: SIM115
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            served = {tool.name for tool in (await session.list_tools()).tools}
            assert {"todo", "memory", "session_search", "clarify", "delegate_task"} <= served
            written = texts(await session.call_tool("todo", {"todos": TODOS}))
            assert texts(await session.call_tool("todo", {})) == written
            assert written["todos"] == TODOS
            added = await session.call_tool("memory", {"action": "add", "target": "memory",
                                                       "content": "Staging runs on port 8443"})
            assert texts(added)["success"]
            assert_found_earlier(texts(await session.call_tool("session_search", {"query": "deploy keys"})))

    anyio.run(main)
    assert "Staging runs on port 8443" in prompt_in_a_new_process(home)


def test_stateless_http_takes_the_session_from_a_header_or_says_it_needs_one(home):
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    command = [*support.hermes_command(), "mcp", "serve", "--transport", "http", "--port", "0", "--stateless"]
    with support.spawn_until(command, r"listening on (http://\S+)", env=env(home)) as (_, match):
        url = match.group(1)

        async def call(tool: str, args: dict[str, Any], headers: dict[str, str] | None = None) -> Any:
            import httpx

            async with httpx.AsyncClient(headers=headers or {}) as client, \
                    streamable_http_client(url, http_client=client) as (read, write), \
                    ClientSession(read, write) as session:
                await session.initialize()
                return await session.call_tool(tool, args)

        async def main() -> None:
            refused = await call("todo", {})
            assert refused.is_error and "X-Hermes-Session" in texts(refused)["error"]
            header = {"X-Hermes-Session": "replica-shared"}
            await call("todo", {"todos": TODOS}, header)
            assert texts(await call("todo", {}, header))["todos"] == TODOS  # a new connection, the same session
            bad = await call("todo", {}, {"X-Hermes-Session": "../../etc"})
            assert bad.is_error and "header must be" in texts(bad)["error"]

        anyio.run(main)


# -- pydantic-ai -----------------------------------------------------------------------------------------------

def runtime_of(home: Path) -> Runtime:
    runtime = Runtime(home=home, entry_points=())
    runtime.load_plugin_from_path(PACK, "agent")
    return runtime


def test_pydantic_ai_with_its_function_model(home):
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    from hermes_core.adapters.pydantic_ai import HermesToolset

    steps = [("todo", {"todos": TODOS}), ("todo", {}),
             ("memory", {"action": "add", "target": "user", "content": "Prefers pytest"}),
             ("session_search", {"query": "deploy keys"})]
    returned: list[dict[str, Any]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returned.extend(json.loads(part.model_response_str()) for part in messages[-1].parts
                        if isinstance(part, ToolReturnPart))
        if len(returned) < len(steps):
            name, args = steps[len(returned)]
            return ModelResponse(parts=[ToolCallPart(name, args, tool_call_id=f"call_{len(returned)}")])
        return ModelResponse(parts=[TextPart("done")])

    runtime = runtime_of(home)
    try:
        Agent(FunctionModel(model), toolsets=[HermesToolset(runtime)]).run_sync("go")
        assert returned[0]["todos"] == TODOS and returned[1] == returned[0]
        assert returned[2]["success"]
        assert_found_earlier(returned[3])
        recorded = {s["source"]: s["message_count"] for s in runtime.sessions.sessions()}
        assert recorded["pydantic-ai"] == 8  # four calls, each recorded with its result, in one run's session
    finally:
        runtime.close()
    assert "Prefers pytest" in prompt_in_a_new_process(home)


# -- LangGraph's ToolNode --------------------------------------------------------------------------------------

def test_a_langgraph_tool_node(home):
    from langchain_core.messages import AIMessage
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    from hermes_core.adapters.langchain import langchain_tools

    runtime = runtime_of(home)
    builder = StateGraph(MessagesState)
    builder.add_node("tools", ToolNode(langchain_tools(runtime)))
    builder.add_edge(START, "tools")
    builder.add_edge("tools", END)
    graph = builder.compile()
    thread = {"configurable": {"thread_id": "graph-thread-1"}}

    def run(name: str, args: dict[str, Any]) -> dict[str, Any]:
        message = AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{name}"}])
        reply = graph.invoke({"messages": [message]}, thread)["messages"][-1]
        answer: dict[str, Any] = json.loads(reply.content)
        return answer

    try:
        written = run("todo", {"todos": TODOS})
        assert run("todo", {}) == written and written["todos"] == TODOS
        assert run("memory", {"action": "add", "target": "memory", "content": "Graphs run nightly"})["success"]
        assert_found_earlier(run("session_search", {"query": "deploy keys"}))
        assert runtime.sessions.session("graph-thread-1")["source"] == "langchain"
    finally:
        runtime.close()
    assert "Graphs run nightly" in prompt_in_a_new_process(home)

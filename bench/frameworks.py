"""Per-call overhead of a no-op Hermes tool through each framework adapter against the same no-op written as that
framework's own native tool, measured in the same run and through the same framework machinery:

- pydantic-ai: a whole agent run whose ``FunctionModel`` makes ``CALLS`` tool calls in one turn
  (``HermesToolset`` against ``@agent.tool_plain``);
- OpenAI Agents SDK: ``FunctionTool.on_invoke_tool`` as the runner calls it (``function_tools`` against
  ``@function_tool``);
- LangChain: ``tool.ainvoke`` and ``tool.invoke`` (``langchain_tools`` against ``@tool``);
- llm: a chain whose ``echo`` model makes ``CALLS`` tool calls in one turn (``llm_tools`` against
  ``llm.Tool.function``).

The Hermes no-op is an async handler for the async paths and a sync one for the sync paths, as the native one is.
Hermes' own dispatch of the no-op (``ahandle_function_call`` / ``handle_function_call`` with no framework) is the
anchor: the target is ``via Hermes <= 1.2 x native + Hermes' dispatch``.

Run: python bench/frameworks.py   (prints figures; asserts nothing; needs the dev extra's frameworks)
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

# bench/mcp.py, beside this file, would shadow the mcp package that the Agents SDK imports
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

from hermes_core import Runtime  # noqa: E402

CALLS = 20
ROUNDS = 9
NOOP_SCHEMA = {"description": "Do nothing", "parameters": {"type": "object", "properties": {}}}


def runtime() -> Runtime:
    """A runtime with no plugins and two no-op tools: ``noop`` (async) and ``noop_sync``."""
    home = Path(tempfile.mkdtemp(prefix="hermes-bench-"))

    async def noop(args: dict[str, Any], **kwargs: Any) -> str:
        return "ok"

    def noop_sync(args: dict[str, Any], **kwargs: Any) -> str:
        return "ok"

    made = Runtime(home=home, entry_points=())
    made.register_tool("noop", "bench", NOOP_SCHEMA, noop, is_async=True, annotations={"read_only": True})
    made.register_tool("noop_sync", "bench-sync", NOOP_SCHEMA, noop_sync, annotations={"read_only": True})
    return made


def best(runs: dict[str, Callable[[], Any]], calls: int, rounds: int = ROUNDS) -> tuple[float, ...]:
    """Microseconds per tool call of each of ``runs`` (each makes ``calls`` calls): the best of ``rounds``, run
    interleaved so that a busy moment of the shared machine falls on all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, run in runs.items():
            started = time.perf_counter()
            run()
            times[name].append((time.perf_counter() - started) / calls * 1e6)
    return tuple(min(slot) for slot in times.values())


def on(loop: asyncio.AbstractEventLoop, make: Callable[[], Awaitable[Any]]) -> Callable[[], Any]:
    return lambda: loop.run_until_complete(make())


def repeat_async(call: Callable[[], Awaitable[Any]], times: int) -> Callable[[], Awaitable[None]]:
    async def run() -> None:
        for _ in range(times):
            await call()

    return run


def pydantic_ai_pair(hermes: Runtime, loop: asyncio.AbstractEventLoop) -> tuple[float, float]:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    from hermes_core.adapters.pydantic_ai import HermesToolset

    def model(messages: list[Any], info: Any) -> ModelResponse:
        if any(part.part_kind == "tool-return" for part in messages[-1].parts):
            return ModelResponse(parts=[TextPart("done")])
        return ModelResponse(parts=[ToolCallPart("noop", {}, tool_call_id=f"c{i}") for i in range(CALLS)])

    native = Agent(FunctionModel(model))

    @native.tool_plain
    async def noop() -> str:
        return "ok"

    via_hermes = Agent(FunctionModel(model), toolsets=[HermesToolset(hermes, toolsets=["bench"])])
    native_us, hermes_us = best({"native": on(loop, lambda: native.run("go")),
                                 "hermes": on(loop, lambda: via_hermes.run("go"))}, CALLS)
    return native_us, hermes_us


def openai_agents_pair(hermes: Runtime, loop: asyncio.AbstractEventLoop) -> tuple[float, float]:
    from agents import RunContextWrapper, function_tool
    from agents.tool_context import ToolContext

    from hermes_core.adapters.openai_agents import function_tools

    @function_tool
    async def noop() -> str:
        """Do nothing"""
        return "ok"

    [hermes_noop] = function_tools(hermes, toolsets=["bench"])
    context = ToolContext(RunContextWrapper(None).context, tool_name="noop", tool_call_id="c1", tool_arguments="{}")
    number = CALLS * 10
    native_us, hermes_us = best({"native": on(loop, repeat_async(lambda: noop.on_invoke_tool(context, "{}"), number)),
                                 "hermes": on(loop, repeat_async(lambda: hermes_noop.on_invoke_tool(context, "{}"),
                                                                 number))}, number)
    return native_us, hermes_us


def langchain_pairs(hermes: Runtime, loop: asyncio.AbstractEventLoop) -> dict[str, tuple[float, float]]:
    from langchain_core.tools import tool

    from hermes_core.adapters.langchain import langchain_tools

    @tool
    async def noop() -> str:
        """Do nothing"""
        return "ok"

    @tool
    def noop_sync() -> str:
        """Do nothing"""
        return "ok"

    [hermes_noop] = langchain_tools(hermes, toolsets=["bench"])
    [hermes_sync] = langchain_tools(hermes, toolsets=["bench-sync"])
    number = CALLS * 10

    def repeat(call: Callable[[], Any]) -> Callable[[], None]:
        return lambda: [call() for _ in range(number)] and None

    native_async, hermes_async, native_sync, hermes_sync_us = best({
        "native async": on(loop, repeat_async(lambda: noop.ainvoke({}), number)),
        "hermes async": on(loop, repeat_async(lambda: hermes_noop.ainvoke({}), number)),
        "native sync": repeat(lambda: noop_sync.invoke({})),
        "hermes sync": repeat(lambda: hermes_sync.invoke({}))}, number)
    return {"LangChain ainvoke": (native_async, hermes_async),
            "LangChain invoke (sync)": (native_sync, hermes_sync_us)}


def llm_pair(hermes: Runtime) -> tuple[float, float]:
    import llm

    from hermes_core.adapters.llm import llm_tools

    def noop_sync() -> str:
        """Do nothing"""
        return "ok"

    model = llm.get_model("echo")
    prompt = json.dumps({"tool_calls": [{"name": "noop_sync", "arguments": {}}] * CALLS})
    native = [llm.Tool.function(noop_sync)]
    via_hermes = llm_tools(hermes, toolsets=["bench-sync"])
    native_us, hermes_us = best({"native": lambda: model.chain(prompt, tools=native).text(),
                                 "hermes": lambda: model.chain(prompt, tools=via_hermes).text()}, CALLS)
    return native_us, hermes_us


def main() -> None:
    hermes = runtime()
    loop = asyncio.new_event_loop()
    hermes.handle_function_call("noop_sync", {})  # the dispatcher and each tool's plan, made once
    loop.run_until_complete(hermes.ahandle_function_call("noop", {}))
    number = CALLS * 10
    dispatch_async, dispatch_sync = best({
        "async": on(loop, repeat_async(lambda: hermes.ahandle_function_call("noop", {}), number)),
        "sync": lambda: [hermes.handle_function_call("noop_sync", {}) for _ in range(number)]}, number)

    threads: list[int] = []

    async def where(args: dict[str, Any], **kwargs: Any) -> str:
        threads.append(threading.get_ident())
        return "ok"

    hermes.register_tool("where", "where", NOOP_SCHEMA, where, is_async=True, annotations={"read_only": True})
    loop.run_until_complete(hermes.ahandle_function_call("where", {}))
    on_loop = threads == [threading.get_ident()]

    rows: dict[str, tuple[float, float, float]] = {}
    rows["pydantic-ai agent run"] = (*pydantic_ai_pair(hermes, loop), dispatch_async)
    rows["Agents SDK on_invoke_tool"] = (*openai_agents_pair(hermes, loop), dispatch_async)
    for name, pair in langchain_pairs(hermes, loop).items():
        rows[name] = (*pair, dispatch_sync if "sync" in name else dispatch_async)
    rows["llm chain (echo)"] = (*llm_pair(hermes), dispatch_sync)
    loop.close()

    print(f"Per tool call, best of {ROUNDS} (µs); Hermes' own dispatch of the no-op: async {dispatch_async:.1f}, "
          f"sync {dispatch_sync:.1f}")
    print(f"{'framework':28} {'native':>9} {'via Hermes':>11} {'ratio':>7} {'(via - dispatch) / native':>27}")
    for name, (native, via, dispatch) in rows.items():
        print(f"{name:28} {native:9.1f} {via:11.1f} {via / native:6.2f}x {(via - dispatch) / native:26.2f}x")
    print(f"async handler awaited on the caller's loop thread, no executor hop: {'yes' if on_loop else 'NO'}")


if __name__ == "__main__":
    main()

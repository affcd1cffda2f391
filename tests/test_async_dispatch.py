"""The async API (ahandle_function_call, arun_tool_calls, aanswer_tool_calls): it never blocks the caller's
event loop, awaits async handlers on that loop, runs sync handlers, hooks and middleware on worker threads
exactly as the sync path runs them, and passes cancellation on to the async handlers it started.

Nothing here is timed: where a test needs two things to overlap, each waits for the other (an event or a
barrier), bounded by WAIT, so a loop that blocked would fail the test instead of hanging it."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_core import Runtime
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.plugin import tool_context

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
WAIT = scaled_timeout(20.0)  # the longest any wait here lasts before the test fails
ANY = {"description": "A test tool", "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}}}


@pytest.fixture
def runtime() -> Runtime:
    return Runtime(entry_points=[])


def run(coroutine: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coroutine, WAIT))


def result_of(text: str) -> Any:
    return json.loads(text)


# -- never blocking the loop -------------------------------------------------------------------------------------


def test_a_sync_handler_runs_on_a_worker_thread_while_the_loop_goes_on(runtime):
    loop_ran = threading.Event()

    def waits_for_the_loop(args, **kwargs):
        # only a loop that is not blocked by this call can set the event
        return json.dumps({"loop_ran": loop_ran.wait(WAIT), "thread": threading.current_thread().name})

    runtime.register_tool("wait", "t", ANY, waits_for_the_loop)

    async def main():
        call = asyncio.create_task(runtime.ahandle_function_call("wait", {}))
        await asyncio.sleep(0)
        loop_ran.set()
        return await call

    outcome = result_of(run(main()))
    assert outcome["loop_ran"] is True
    assert outcome["thread"].startswith("hermes-async")


def test_an_async_handler_is_awaited_on_the_callers_own_loop(runtime):
    async def where(args, **kwargs):
        return json.dumps({"loop": id(asyncio.get_running_loop()), "thread": threading.current_thread().name})

    runtime.register_tool("where", "t", ANY, where, is_async=True)

    async def main():
        return id(asyncio.get_running_loop()), result_of(await runtime.ahandle_function_call("where", {}))

    loop, outcome = run(main())
    assert outcome == {"loop": loop, "thread": threading.current_thread().name}


def test_an_async_def_handler_registered_without_is_async_is_awaited_on_the_loop_too(runtime):
    async def where(args, **kwargs):
        return str(id(asyncio.get_running_loop()))

    runtime.register_tool("where", "t", ANY, where)

    async def main():
        return str(id(asyncio.get_running_loop())), await runtime.ahandle_function_call("where", {})

    loop, outcome = run(main())
    assert outcome == loop


def test_a_client_bound_to_the_callers_loop_works_in_an_async_handler(runtime):
    """An asyncio.Queue made on the caller's loop, used by the tool: it only works on that same loop."""
    async def main():
        queue: asyncio.Queue[str] = asyncio.Queue()

        async def take(args, **kwargs):
            return await queue.get()

        runtime.register_tool("take", "t", ANY, take, is_async=True)
        call = asyncio.create_task(runtime.ahandle_function_call("take", {}))
        await queue.put("from the caller")
        return await call

    assert run(main()) == "from the caller"


def test_the_handler_sees_its_tool_context_on_either_path(runtime):
    async def async_plugin(args, **kwargs):
        return str(tool_context().plugin_id)

    def sync_plugin(args, **kwargs):
        return str(tool_context().plugin_id)

    runtime.context("astro").register_tool("a", "t", {"name": "a", **ANY}, async_plugin, is_async=True)
    runtime.context("geo").register_tool("s", "t", {"name": "s", **ANY}, sync_plugin)

    assert run(runtime.arun_tool_calls([{"name": "a", "arguments": {}}, {"name": "s", "arguments": {}}])) == \
        ["astro", "geo"]


# -- batches -------------------------------------------------------------------------------------------------


def test_a_parallel_safe_batch_of_async_handlers_runs_concurrently(runtime):
    async def main():
        barrier = asyncio.Barrier(3)

        async def meet(args, **kwargs):
            await barrier.wait()  # passes only once all three calls are running at the same time
            return str(args["n"])

        runtime.register_tool("meet", "t", ANY, meet, is_async=True, parallel_safe=True)
        return await runtime.arun_tool_calls([{"name": "meet", "arguments": {"n": n}} for n in range(3)])

    assert run(main()) == ["0", "1", "2"]


def test_a_parallel_safe_batch_of_sync_handlers_runs_concurrently_on_worker_threads(runtime):
    barrier = threading.Barrier(3, timeout=WAIT)

    def meet(args, **kwargs):
        barrier.wait()
        return str(args["n"])

    runtime.register_tool("meet", "t", ANY, meet, parallel_safe=True)

    assert run(runtime.arun_tool_calls([{"name": "meet", "arguments": {"n": n}} for n in range(3)])) == \
        ["0", "1", "2"]


def test_a_batch_that_is_not_parallel_safe_runs_in_order(runtime):
    order: list[int] = []

    async def step(args, **kwargs):
        await asyncio.sleep(0.01 * (3 - args["n"]))  # later calls would finish first if they overlapped
        order.append(args["n"])
        return str(args["n"])

    runtime.register_tool("step", "t", ANY, step, is_async=True)

    assert run(runtime.arun_tool_calls([{"name": "step", "arguments": {"n": n}} for n in range(3)])) == \
        ["0", "1", "2"]
    assert order == [0, 1, 2]


def test_async_answers_are_each_providers_reply_items(runtime):
    runtime.register_tool("double", "t", ANY, lambda args, **kw: str(args["n"] * 2))

    replies = run(runtime.aanswer_tool_calls([
        {"type": "tool_use", "id": "toolu_1", "name": "double", "input": {"n": 2}},
        {"type": "function_call", "call_id": "call_2", "name": "double", "arguments": '{"n": 3}'},
        {"type": "text", "text": "not a call"},
    ]))

    # the text block needs no answer (an Anthropic response.content mixes it with the tool uses)
    assert replies == [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "4", "is_error": False},
                       {"type": "function_call_output", "call_id": "call_2", "output": "6"}]


# -- the same results and hooks as the sync path -------------------------------------------------------------


def sync_add(args, **kwargs):
    return json.dumps({"sum": args["a"] + args["b"]})


async def async_add(args, **kwargs):
    return json.dumps({"sum": args["a"] + args["b"]})


ADD = {"description": "Add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"},
                                                                             "b": {"type": "integer"}},
                                            "required": ["a", "b"]}}
CASES = [("add", {"a": 1, "b": "2"}), ("add", '{"a": 1}'), ("add", "{broken"), ("ad", {}), ("todo", {}),
         ("boom", {}), ("big", {})]


@pytest.fixture(params=["sync handlers", "async handlers"])
def twins(request, runtime: Runtime) -> Runtime:
    is_async = request.param == "async handlers"
    runtime.register_tool("add", "math", ADD, async_add if is_async else sync_add, is_async=is_async)

    def boom(args, **kwargs):
        raise ValueError("bad state")

    async def aboom(args, **kwargs):
        raise ValueError("bad state")

    runtime.register_tool("boom", "x", {"description": "x"}, aboom if is_async else boom, is_async=is_async)

    async def abig(args, **kwargs):
        return "x" * 5000

    runtime.register_tool("big", "x", {"description": "x"}, abig if is_async else (lambda a, **k: "x" * 5000),
                          is_async=is_async, max_result_size_chars=1000)
    return runtime


def test_results_and_errors_are_the_sync_paths(twins):
    expected = [twins.handle_function_call(name, args) for name, args in CASES]

    actual = [run(twins.ahandle_function_call(name, args)) for name, args in CASES]

    assert [_without_paths(a) for a in actual] == [_without_paths(e) for e in expected]
    assert result_of(actual[0]) == {"sum": 3} and "5,000 characters" in actual[-1]


def _without_paths(text: str) -> str:
    return text.split("saved in full to", 1)[0]


@pytest.fixture
def hooked(twins: Runtime) -> dict[str, list[Any]]:
    """Hooks and middleware that record what they see and change what they may."""
    seen: dict[str, list[Any]] = {"pre": [], "post": [], "request": [], "execution": []}
    ctx = twins.context("audit")

    def pre(tool_name, args, tool_call_id):
        seen["pre"].append((tool_name, dict(args), tool_call_id, threading.get_ident()))
        if args.get("a") == 13:
            return {"action": "block", "message": "unlucky"}
        if args.get("a") == 7:
            return {"action": "modify", "args": {**args, "b": 100}}
        return None

    def post(tool_name, result, status, error_type):
        seen["post"].append((tool_name, result, status, error_type))

    def transform(tool_name, result):
        return result.replace("sum", "total") if tool_name == "add" else None

    def request_mw(tool_name, args, original_args, **context):
        seen["request"].append(tool_name)
        return {"args": {**args, "a": args["a"] + 1}} if args.get("a") == 0 else None

    def execution_mw(tool_name, args, original_args, next_call, **context):
        seen["execution"].append(tool_name)
        return next_call(args)

    ctx.register_hook("pre_tool_call", pre)
    ctx.register_hook("post_tool_call", post)
    ctx.register_hook("transform_tool_result", transform)
    ctx.register_middleware("tool_request", request_mw)
    ctx.register_middleware("tool_execution", execution_mw)
    return seen


def test_hooks_and_middleware_apply_exactly_as_in_the_sync_path(twins, hooked):
    calls = [{"a": 1, "b": 2}, {"a": 13, "b": 1}, {"a": 7, "b": 1}, {"a": 0, "b": 1}]
    sync = [twins.handle_function_call("add", args, tool_call_id=f"c{i}") for i, args in enumerate(calls)]
    sync_seen = {key: list(value) for key, value in hooked.items()}
    for value in hooked.values():
        value.clear()

    asynchronous = [run(twins.ahandle_function_call("add", args, tool_call_id=f"c{i}"))
                    for i, args in enumerate(calls)]

    assert asynchronous == sync
    assert [result_of(r) for r in asynchronous] == [{"total": 3}, {"error": "unlucky"}, {"total": 107},
                                                    {"total": 2}]
    assert [p[:3] for p in hooked["pre"]] == [p[:3] for p in sync_seen["pre"]]
    assert hooked["post"] == sync_seen["post"] and hooked["request"] == sync_seen["request"]
    assert hooked["execution"] == sync_seen["execution"] == ["add", "add", "add"]  # not for the blocked call
    assert threading.get_ident() not in [thread for *_, thread in hooked["pre"]]  # never on the loop's thread


def test_hooks_see_the_responses_call_id(twins, hooked):
    run(twins.aanswer_tool_calls([{"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "add",
                                   "arguments": '{"a": 1, "b": 1}'}]))

    assert [p[2] for p in hooked["pre"]] == ["call_1"]


def test_an_approval_that_waits_for_the_user_does_not_block_the_loop(runtime):
    loop_ran = threading.Event()
    asked: list[str] = []

    def ask(request):
        asked.append(request.message)
        return "once" if loop_ran.wait(WAIT) else "deny"  # a user answering while the agent's loop goes on

    runtime.set_approval_callback(ask)
    runtime.register_tool("deploy", "ops", ANY, lambda args, **kw: "deployed")
    runtime.context("guard").register_hook("pre_tool_call", lambda tool_name: {"action": "approve",
                                                                              "message": f"Run {tool_name}?"})

    async def main():
        call = asyncio.create_task(runtime.ahandle_function_call("deploy", {}))
        await asyncio.sleep(0)
        loop_ran.set()
        return await call

    assert run(main()) == "deployed" and asked == ["Run deploy?"]


# -- cancellation ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("with_hooks", [False, True], ids=["no-hooks", "with-hooks"])
def test_cancelling_the_awaiting_task_cancels_the_async_handler(runtime, with_hooks):
    posted: list[tuple[str, str | None]] = []
    post_ran = threading.Event()
    if with_hooks:
        def post(status, error_type):
            posted.append((status, error_type))
            post_ran.set()

        runtime.context("audit").register_hook("post_tool_call", post)

    async def main():
        started, cancelled = asyncio.Event(), asyncio.Event()

        async def forever(args, **kwargs):
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise
            return "never"

        runtime.register_tool("forever", "t", ANY, forever, is_async=True)
        call = asyncio.create_task(runtime.ahandle_function_call("forever", {}))
        await asyncio.wait_for(started.wait(), WAIT)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        await asyncio.wait_for(cancelled.wait(), WAIT)
        return True

    assert run(main()) is True
    if with_hooks:  # the hooks still close the call: post_tool_call reports it as an error
        assert post_ran.wait(WAIT)
        assert posted == [("error", "ToolCallCancelled")]


def test_cancelling_a_batch_cancels_every_async_handler_in_it(runtime):
    async def main():
        started: list[int] = []
        cancelled: list[int] = []
        all_started = asyncio.Event()

        async def forever(args, **kwargs):
            started.append(args["n"])
            if len(started) == 3:
                all_started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.append(args["n"])
                raise
            return "never"

        runtime.register_tool("forever", "t", ANY, forever, is_async=True, parallel_safe=True)
        batch = asyncio.create_task(runtime.arun_tool_calls([{"name": "forever", "arguments": {"n": n}}
                                                             for n in range(3)]))
        await asyncio.wait_for(all_started.wait(), WAIT)
        batch.cancel()
        with pytest.raises(asyncio.CancelledError):
            await batch
        await asyncio.sleep(0)
        return sorted(cancelled)

    assert run(main()) == [0, 1, 2]


def test_a_cancelled_sync_handler_runs_to_its_end_and_its_result_is_dropped(runtime):
    release, finished = threading.Event(), threading.Event()
    started = threading.Event()

    def slow(args, **kwargs):
        started.set()
        release.wait(WAIT)
        finished.set()
        return "late"

    runtime.register_tool("slow", "t", ANY, slow)

    async def main():
        call = asyncio.create_task(runtime.ahandle_function_call("slow", {}))
        await asyncio.get_running_loop().run_in_executor(None, started.wait, WAIT)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call  # returns at once: the handler is still waiting
        return finished.is_set()

    assert run(main()) is False
    release.set()
    assert finished.wait(WAIT)


# -- lazy plugins and MCP tools ------------------------------------------------------------------------------


def test_a_declared_async_tool_is_imported_off_the_loop_and_awaited_on_it(plugins):
    plugins.folder("astro", manifest="""\
name: astro
tools:
  - name: moon_phase
    toolset: astro
    description: The phase of the moon
    parameters: {type: object, properties: {}}
    handler: .tools:moon_phase
    is_async: true
""", init="", files={"tools.py": "import asyncio, threading\n"
                        "IMPORTED_ON = threading.current_thread().name\n"
                        "async def moon_phase(args, **kwargs):\n"
                        "    await asyncio.sleep(0)\n"
                        "    return f'full (imported on {IMPORTED_ON}, run on '"
                        " + threading.current_thread().name + ')'\n"})
    runtime = plugins.runtime()
    runtime.load_plugins()
    assert runtime.registry.get("moon_phase").is_lazy

    result = run(runtime.ahandle_function_call("moon_phase", {}))

    assert result.startswith("full (imported on hermes-async")
    assert result.endswith(f"run on {threading.current_thread().name})")


@pytest.fixture
def mcp_runtime(isolated_home: Path) -> Iterator[Runtime]:
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {
        "fault": {**support.fault_server(), "timeout": WAIT}}}))
    runtime = Runtime(home=isolated_home, entry_points=[])
    runtime.load_plugins()
    runtime.start_mcp()  # loading lists from the cache; connect now
    yield runtime
    runtime.close()


def refuse_blocking_calls(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    """The MCP manager's blocking entry waits on a lock; the async path must never take it."""
    def blocking_call(*args: Any) -> Callable[..., str]:
        raise AssertionError("the async API used the blocking MCP call")

    monkeypatch.setattr(runtime.mcp, "call", blocking_call)


def test_mcp_tools_are_awaited_through_the_manager_without_blocking_the_loop(mcp_runtime, monkeypatch):
    refuse_blocking_calls(mcp_runtime, monkeypatch)

    async def main():
        hung = asyncio.create_task(mcp_runtime.ahandle_function_call("mcp__fault__hang", {}))
        echoed = await mcp_runtime.ahandle_function_call("mcp__fault__echo", {"text": "meanwhile"})
        still_waiting = not hung.done()
        hung.cancel()
        with pytest.raises(asyncio.CancelledError):
            await hung
        after = await mcp_runtime.aanswer_tool_calls([{"id": "call_1", "type": "function", "function": {
            "name": "mcp__fault__echo", "arguments": '{"text": "after"}'}}])
        return echoed, still_waiting, after

    echoed, still_waiting, after = run(main())
    assert echoed == "meanwhile" and still_waiting
    assert after == [{"role": "tool", "tool_call_id": "call_1", "content": "after"}]


def test_an_mcp_error_result_is_the_same_error_on_the_async_path(mcp_runtime):
    expected = mcp_runtime.handle_function_call("mcp__fault__fail", {})

    assert run(mcp_runtime.ahandle_function_call("mcp__fault__fail", {})) == expected
    assert "failed on purpose" in result_of(expected)["error"]


def test_the_first_async_call_of_a_cached_mcp_tool_connects_the_server_off_the_callers_loop(mcp_runtime,
                                                                                            isolated_home,
                                                                                            monkeypatch):
    mcp_runtime.close()  # its listing stays in the home's cache
    runtime = Runtime(home=isolated_home, entry_points=[])
    try:
        runtime.load_plugins()
        assert support.server_status(runtime, "fault").state == "cached"
        refuse_blocking_calls(runtime, monkeypatch)
        connecting_threads = []
        connect = runtime.mcp.connect

        def recording_connect(*args: Any, **kwargs: Any) -> Any:
            connecting_threads.append(threading.current_thread())
            return connect(*args, **kwargs)

        monkeypatch.setattr(runtime.mcp, "connect", recording_connect)

        async def main() -> tuple[str, threading.Thread]:
            return await runtime.ahandle_function_call("mcp__fault__echo", {"text": "from the cache"}), \
                threading.current_thread()

        result, loop_thread = run(main())
        assert result == "from the cache" and support.server_status(runtime, "fault").state == "ready"
        assert connecting_threads and loop_thread not in connecting_threads
    finally:
        runtime.close()

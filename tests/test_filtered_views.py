"""Filtered views, ``Runtime.filtered(tools, *, toolsets, read_only, policy)``: a plan mode or a sub-agent gets
fewer tools than its parent, on every call path, sync and async, while the parent is left as it was."""

from __future__ import annotations

import json
import logging
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from hermes_core import ApprovalRequest, Runtime, ToolView
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.errors import PolicyError, UnknownToolsetError

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
WAIT = scaled_timeout(30.0)
FILE = ("hermes_plugin_file", "file")

#: A user plugin: tools in two toolsets, one that dispatches another, one that lists what it can call.
PLUGIN = """
import json

from hermes_core.plugin import tool_context

SCHEMA = {"parameters": {"type": "object", "properties": {}}}


def relay(args, **kw):
    return tool_context().dispatch(args["target"], {})


def listing(args, **kw):
    return json.dumps(tool_context().available_tools())


def counter(args, **kw):
    state = tool_context().state("calls", lambda: [])
    state.append(1)
    return str(len(state))


def register(ctx):
    looks = {"read_only": True}
    ctx.register_tool("peek", "look", {**SCHEMA, "description": "Look"}, lambda args, **kw: "peeked",
                      annotations=looks)
    ctx.register_tool("glance", "look", {**SCHEMA, "description": "Glance"}, lambda args, **kw: "glanced",
                      annotations=looks)
    ctx.register_tool("poke", "touch", {**SCHEMA, "description": "Poke"}, lambda args, **kw: "poked",
                      annotations={"read_only": False})
    ctx.register_tool("relay", "look", {"description": "Call another tool", "parameters": {
        "type": "object", "properties": {"target": {"type": "string"}}, "required": ["target"]}}, relay,
        annotations=looks)
    ctx.register_tool("legacy_relay", "look", {"description": "Call another tool the Hermes Agent way",
        "parameters": {"type": "object", "properties": {"target": {"type": "string"}}, "required": ["target"]}},
        lambda args, **kw: ctx.dispatch_tool(args["target"], {}), annotations=looks)
    ctx.register_tool("listing", "look", {**SCHEMA, "description": "What can I call"}, listing, annotations=looks)
    ctx.register_tool("counter", "look", {**SCHEMA, "description": "Count calls"}, counter, annotations=looks)
"""
ALL = ["peek", "glance", "poke", "relay", "legacy_relay", "listing", "counter"]


@pytest.fixture
def runtime(plugins: Any) -> Runtime:
    plugins.folder("demo", "name: demo\nversion: '1.0'\n", PLUGIN)
    runtime = plugins.runtime()
    runtime.load_plugins()
    return runtime


def offered(api: Any) -> list[str]:
    return [definition["function"]["name"] for definition in api.get_tool_definitions()]


def error_of(result: str) -> str:
    value = json.loads(result)
    assert isinstance(value, dict) and "error" in value, result
    return str(value["error"])


# -- what a view offers ---------------------------------------------------------------------------------------


def test_a_view_offers_only_its_tools_and_leaves_the_parent_untouched(runtime: Runtime):
    view = runtime.filtered(["peek", "poke"])
    assert isinstance(view, ToolView)
    assert offered(view) == ["peek", "poke"]
    assert [d["name"] for d in view.get_tool_definitions(format="mcp")] == ["peek", "poke"]
    assert view.handle_function_call("peek", {}) == "peeked"
    refused = error_of(view.handle_function_call("glance", {}))
    assert "'glance' is not offered here" in refused and "filtered view" in refused
    # the parent is as it was: every tool offered and callable
    assert offered(runtime) == ALL
    assert runtime.handle_function_call("glance", {}) == "glanced"
    assert view.registry is runtime.registry and view.parent is runtime


def test_a_view_by_toolsets_follows_tools_registered_later(runtime: Runtime):
    view = runtime.filtered(toolsets=["look"])
    assert "poke" not in offered(view) and "peek" in offered(view)
    runtime.register_tool("stare", "look", {"description": "Stare"}, lambda args, **kw: "stared",
                          annotations={"read_only": True})
    assert "stare" in offered(view) and view.handle_function_call("stare", {}) == "stared"


def test_tools_and_toolsets_together_select_both(runtime: Runtime):
    assert offered(runtime.filtered(["poke"], toolsets=["look"])) == ALL


def test_a_read_only_view_offers_and_runs_only_read_only_tools(runtime: Runtime):
    view = runtime.filtered(read_only=True)
    assert "poke" not in offered(view) and len(offered(view)) == len(ALL) - 1
    message = error_of(view.handle_function_call("poke", {}))
    assert "this view offers only read-only tools" in message and "'poke' is not read-only" in message
    assert runtime.handle_function_call("poke", {}) == "poked"


def test_a_view_of_a_view_narrows_further_and_never_widens(runtime: Runtime):
    sub = runtime.filtered(["peek", "glance", "poke"]).filtered(["glance", "poke", "listing"])
    assert offered(sub) == ["glance", "poke"]  # listing was never in the outer view
    assert "not offered here" in error_of(sub.handle_function_call("listing", {}))
    planning = runtime.filtered(read_only=True).filtered(["peek", "poke"])
    assert offered(planning) == ["peek"]  # read-only holds in the narrower view too


def test_a_view_policy_is_never_looser_than_its_parents(runtime: Runtime):
    asked: list[str | None] = []
    runtime.set_approval_callback(lambda request: asked.append(request.tool_name) or "once")
    careful = runtime.filtered(policy="writes")
    assert careful.policy == "writes" and runtime.policy == "dangerous"
    assert careful.handle_function_call("poke", {}) == "poked" and asked == ["poke"]
    assert runtime.handle_function_call("poke", {}) == "poked" and asked == ["poke"]  # the parent does not ask
    assert careful.filtered(policy="dangerous").policy == "writes"
    runtime.set_policy("read-only")
    assert careful.policy == "read-only" and "poke" not in offered(careful)


def test_unknown_toolsets_and_policies_are_clear_errors_and_unknown_tools_a_warning(runtime: Runtime,
                                                                                   caplog: Any):
    with pytest.raises(UnknownToolsetError, match="nope"):
        runtime.filtered(toolsets=["nope"])
    with pytest.raises(PolicyError, match="unknown approval policy 'lax'"):
        runtime.filtered(policy="lax")
    with caplog.at_level(logging.WARNING, logger="hermes_core.tools.policies"):
        view = runtime.filtered(["peek", "later_tool"])
    assert "later_tool" in caplog.text and offered(view) == ["peek"]
    runtime.register_tool("later_tool", "x", {"description": "Came later"}, lambda args, **kw: "late")
    assert offered(view) == ["peek", "later_tool"]


def test_an_unknown_tool_in_a_view_suggests_only_the_views_tools(runtime: Runtime):
    view = runtime.filtered(["peek"])
    value = json.loads(view.handle_function_call("poked", {}))
    assert "Unknown tool 'poked'" in value["error"] and value["suggestions"] == []
    assert json.loads(runtime.handle_function_call("poked", {}))["suggestions"] == ["poke"]


# -- every call path ------------------------------------------------------------------------------------------


def chat_call(name: str, call_id: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def run_sync(view: Any, names: list[str]) -> list[str]:
    return view.run_tool_calls([chat_call(name, f"c{i}") for i, name in enumerate(names)])


def answer_sync(view: Any, names: list[str]) -> list[str]:
    return [reply["content"] for reply in view.answer_tool_calls([chat_call(n, f"c{i}") for i, n in enumerate(names)])]


def handle_sync(view: Any, names: list[str]) -> list[str]:
    return [view.handle_function_call(name, {}) for name in names]


def run_async(view: Any, names: list[str]) -> list[str]:
    return anyio.run(view.arun_tool_calls, [chat_call(name, f"c{i}") for i, name in enumerate(names)])


def answer_async(view: Any, names: list[str]) -> list[str]:
    replies = anyio.run(view.aanswer_tool_calls, [chat_call(name, f"c{i}") for i, name in enumerate(names)])
    return [reply["content"] for reply in replies]


def handle_async(view: Any, names: list[str]) -> list[str]:
    async def main() -> list[str]:
        return [await view.ahandle_function_call(name, {}) for name in names]

    return anyio.run(main)


@pytest.mark.parametrize("path", [handle_sync, run_sync, answer_sync, handle_async, run_async, answer_async],
                         ids=lambda path: path.__name__)
def test_every_call_path_honours_the_view(runtime: Runtime, path: Any):
    view = runtime.filtered(["peek", "glance"])
    peeked, glanced, poked = path(view, ["peek", "glance", "poke"])
    assert (peeked, glanced) == ("peeked", "glanced")
    assert "'poke' is not offered here" in error_of(poked)
    assert path(runtime, ["poke"]) == ["poked"]  # the parent's path is unchanged


@pytest.mark.parametrize("relay", ["relay", "legacy_relay"])
def test_a_tool_that_calls_tools_stays_inside_its_view(runtime: Runtime, relay: str):
    view = runtime.filtered([relay, "peek"])
    assert view.handle_function_call(relay, {"target": "peek"}) == "peeked"
    assert "not offered here" in error_of(view.handle_function_call(relay, {"target": "poke"}))
    assert anyio.run(view.ahandle_function_call, relay, {"target": "poke"}).count("not offered here") == 1
    assert runtime.handle_function_call(relay, {"target": "poke"}) == "poked"  # the runtime's own call reaches it
    assert "not offered here" in error_of(runtime.filtered([relay]).filtered([relay]).handle_function_call(
        relay, {"target": "peek"}))


def test_a_handler_sees_the_views_tools_and_shares_the_runtimes_plugin_state(runtime: Runtime):
    view = runtime.filtered(["listing", "counter", "peek"])
    assert json.loads(view.handle_function_call("listing", {})) == ["peek", "listing", "counter"]
    assert json.loads(runtime.handle_function_call("listing", {})) == ALL
    assert runtime.handle_function_call("counter", {}) == "1"
    assert view.handle_function_call("counter", {}) == "2"  # one plugin state per runtime, views included


def test_a_view_shares_the_runtimes_hooks_and_approvals(runtime: Runtime):
    seen: list[str] = []
    runtime.context("observer").register_hook("post_tool_call", lambda tool_name, **kw: seen.append(tool_name))
    asked: list[ApprovalRequest] = []
    runtime.set_approval_callback(lambda request: asked.append(request) or "session")
    view = runtime.filtered(["poke"], policy="writes")
    view.handle_function_call("poke", {}, session_id="s")
    runtime.filtered(["poke"], policy="writes").handle_function_call("poke", {}, session_id="s")
    assert seen == ["poke", "poke"] and len(asked) == 1  # the session's approval is the runtime's


def test_a_tool_outside_the_view_is_never_imported_to_refuse_it(plugins: Any):
    plugins.folder("lazy", "name: lazy\nversion: '1.0'\ntools:\n  - {name: lazy_async, toolset: lazy, "
                           "description: An async tool, parameters: {type: object, properties: {}}, "
                           "handler: '.tools:run', is_async: true}\n",
                   "", files={"tools.py": "async def run(args, **kw):\n    return 'ran'\n"})
    runtime = plugins.runtime()
    runtime.load_plugins()
    view = runtime.filtered([])
    assert offered(view) == []
    assert "not offered here" in error_of(anyio.run(view.ahandle_function_call, "lazy_async", {}))
    assert not plugins.imported("lazy")
    assert anyio.run(runtime.ahandle_function_call, "lazy_async", {}) == "ran"


def test_a_read_only_view_of_the_file_pack_plans_without_writing(pack_runtime: Any, workspace: Path):
    runtime = pack_runtime({}, FILE)
    (workspace / "plan.md").write_text("step one\n")
    planning = runtime.filtered(read_only=True)
    assert offered(planning) == ["read_file", "search_files"]
    assert "step one" in planning.handle_function_call("read_file", {"path": "plan.md"})
    assert "read-only" in error_of(planning.handle_function_call("write_file", {"path": "plan.md", "content": ""}))
    assert (workspace / "plan.md").read_text() == "step one\n"


# -- MCP ------------------------------------------------------------------------------------------------------


def test_a_view_shares_the_runtimes_mcp_sessions(isolated_home: Path):
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"fault": support.fault_server()}}))
    runtime = Runtime(home=isolated_home, entry_points=())
    try:
        runtime.load_plugins()
        runtime.start_mcp()  # loading lists from the cache; connect now
        assert runtime.mcp.wait_for(lambda: support.server_status(runtime, "fault").state == "ready", WAIT)
        view = runtime.filtered(toolsets=["fault"])  # the server's alias
        assert "mcp__fault__echo" in offered(view) and not runtime.filtered(read_only=True).select_tools()[0]
        pid = runtime.handle_function_call("mcp__fault__pid", {})
        assert view.handle_function_call("mcp__fault__pid", {}) == pid  # the same server process
        assert "hi" in view.handle_function_call("mcp__fault__echo", {"text": "hi"})
    finally:
        runtime.close()


def write_served_home(home: Path) -> None:
    (home / "plugins" / "demo").mkdir(parents=True)
    (home / "plugins" / "demo" / "plugin.yaml").write_text("name: demo\nversion: '1.0'\n")
    (home / "plugins" / "demo" / "__init__.py").write_text(PLUGIN)
    (home / "config.yaml").write_text("plugins:\n  enabled: [demo]\n")


def test_mcp_serve_read_only_serves_and_runs_only_read_only_tools(tmp_path: Path):
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    home = tmp_path / "served-home"
    write_served_home(home)

    async def main() -> tuple[set[str], Any, Any, Any]:
        command = [*support.hermes_command(), "mcp", "serve", "--read-only"]
        async with AsyncExitStack() as stack:
            params = StdioServerParameters(command=command[0], args=command[1:], env={"HERMES_HOME": str(home)})
            errlog = stack.enter_context(open(home / "serve-stderr.log", "a"))  # noqa: SIM115
            read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
            session = await stack.enter_async_context(ClientSession(read, write))
            with anyio.fail_after(WAIT):
                await session.initialize()
                listed = {tool.name for tool in (await session.list_tools()).tools}
                poked = await session.call_tool("poke", {})
                peeked = await session.call_tool("peek", {})
                relayed = await session.call_tool("relay", {"target": "poke"})
            return listed, poked, peeked, relayed

    listed, poked, peeked, relayed = anyio.run(main)
    assert listed == set(ALL) - {"poke"}
    assert poked.is_error and "only read-only tools" in poked.content[0].text
    assert not peeked.is_error and peeked.content[0].text == "peeked"
    assert relayed.is_error and "only read-only tools" in relayed.content[0].text  # no way round through a relay

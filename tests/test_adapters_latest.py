"""``Latest``: a framework's list of Hermes tools, made again when the tools change — here as an MCP server adds
and removes a tool at run time (the fault-injection server of tests/fixtures/mcp, a real subprocess), through
LangChain tools (each framework's own run with a ``Latest`` list is in its adapter's tests)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from hermes_core import Runtime
from hermes_core.adapters.langchain import langchain_tools
from hermes_core.adapters.latest import Latest
from hermes_core.authoring.testing import scaled_timeout

mcp_support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
WAIT = scaled_timeout(30.0)  # the longest the test waits for the server's change to be registered


@pytest.fixture
def mcp_runtime(isolated_home: Path) -> Iterator[Runtime]:
    (isolated_home / "config.yaml").write_text(yaml.safe_dump({"mcp_servers": {"fault": mcp_support.fault_server()}}))
    runtime = Runtime(home=isolated_home, entry_points=())
    runtime.start_mcp(connect=False)  # known, never listed: the first Latest() lists it
    try:
        yield runtime
    finally:
        runtime.close()


def names(tools: list[Any]) -> set[str]:
    return {tool.name for tool in tools}


def test_tools_an_mcp_server_adds_and_removes_at_run_time_come_and_go_and_otherwise_the_list_is_kept(
        mcp_runtime: Runtime):
    latest = Latest(langchain_tools, mcp_runtime)

    first = latest()  # lists the server never listed yet, as get_tool_definitions does
    assert "mcp__fault__echo" in names(first) and "mcp__fault__fresh" not in names(first)
    assert latest() is first

    [add] = [tool for tool in first if tool.name == "mcp__fault__add_tool"]
    assert add.invoke({"name": "fresh"}) == "added"
    assert mcp_runtime.mcp is not None
    assert mcp_runtime.mcp.wait_for(lambda: "mcp__fault__fresh" in mcp_runtime.registry, WAIT)

    added = latest()
    assert added is not first and "mcp__fault__fresh" in names(added)
    [fresh] = [tool for tool in added if tool.name == "mcp__fault__fresh"]
    assert fresh.invoke({}) == "fresh ran"

    [remove] = [tool for tool in added if tool.name == "mcp__fault__remove_tool"]
    assert remove.invoke({"name": "fresh"}) == "removed"
    assert mcp_runtime.mcp.wait_for(lambda: "mcp__fault__fresh" not in mcp_runtime.registry, WAIT)
    assert "mcp__fault__fresh" not in names(latest())


def test_the_options_and_the_view_given_are_those_each_list_is_made_with(isolated_home: Path):
    made: list[tuple[Any, dict[str, Any]]] = []

    def make(tools: Any, **options: Any) -> list[str]:
        made.append((tools, options))
        return [d["function"]["name"] for d in tools.get_tool_definitions()]

    runtime = Runtime(home=isolated_home, entry_points=())
    for name in ("echo", "other"):
        runtime.register_tool(name, name, {"description": name}, lambda args, **kw: "ran")
    view = runtime.filtered(tools=["echo"])
    latest = Latest(make, view, toolsets=["echo"])

    assert latest() == ["echo"] and latest() == ["echo"]
    assert made == [(view, {"toolsets": ["echo"]})]
    runtime.registry.deregister("other")
    assert latest() == ["echo"] and len(made) == 2  # the registry changed: made again

"""The generated ``hermes_tools`` module and the choice of tools it exposes."""

from __future__ import annotations

import ast

from hermes_plugin_code.stubs import EXCLUDED_TOOLS, callable_tool_names, render_tools_module


def test_execute_code_and_interactive_tools_are_never_callable():
    available = ["read_file", *EXCLUDED_TOOLS]
    assert callable_tool_names(available) == ["read_file"]


def test_names_that_are_not_python_identifiers_are_skipped():
    available = ["web_search", "mcp__my-server__query", "class", "_call", "terminal"]
    assert callable_tool_names(available) == ["terminal", "web_search"]


def test_rendered_module_defines_one_keyword_function_per_tool():
    source = render_tools_module(["read_file", "web_search"], "tools.sock")
    tree = ast.parse(source)
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    assert set(functions) == {"_call", "read_file", "web_search"}
    assert functions["read_file"].args.kwarg is not None
    assert not functions["read_file"].args.args
    namespace: dict[str, object] = {"__file__": "/staged/hermes_tools.py"}
    exec(compile(source, "hermes_tools.py", "exec"), namespace)
    assert namespace["__all__"] == ["read_file", "web_search"]
    assert namespace["_SOCKET_PATH"] == "/staged/tools.sock"

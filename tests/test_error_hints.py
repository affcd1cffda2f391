"""``tools.error_hint``: a hint added to every tool error (a handler's, an unknown tool's, bad arguments), on the
sync, async and batch call paths; off by default; never added to a result that is not an error."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from hermes_core.calls.errorhints import DEFAULT_HINT
from hermes_core.plugin import tool_error


def runtime_with(pack_runtime: Any, hint: Any) -> Any:
    runtime = pack_runtime({} if hint is None else {"tools": {"error_hint": hint}})
    runtime.register_tool("fails", "t", {"description": "Fails", "parameters": {
        "type": "object", "properties": {"n": {"type": "integer"}}}}, lambda args, **kw: tool_error("it broke"))
    runtime.register_tool("works", "t", {"description": "Works"}, lambda args, **kw: '{"ok": true}')
    return runtime


def test_off_by_default(pack_runtime):
    runtime = runtime_with(pack_runtime, None)
    assert json.loads(runtime.handle_function_call("fails", {})) == {"error": "it broke"}


@pytest.mark.parametrize(("setting", "hint"), [(True, DEFAULT_HINT), ("Check the path.", "Check the path.")])
def test_every_error_carries_the_hint(pack_runtime, setting: Any, hint: str):
    runtime = runtime_with(pack_runtime, setting)
    assert json.loads(runtime.handle_function_call("fails", {})) == {"error": "it broke", "hint": hint}
    assert json.loads(runtime.handle_function_call("nope", {}))["hint"] == hint
    assert json.loads(runtime.handle_function_call("fails", {"n": "x"}))["hint"] == hint
    assert runtime.handle_function_call("works", {}) == '{"ok": true}'
    [reply] = runtime.answer_tool_calls([{"id": "c1", "type": "function",
                                          "function": {"name": "fails", "arguments": "{}"}}])
    assert json.loads(reply["content"])["hint"] == hint
    assert json.loads(asyncio.run(runtime.ahandle_function_call("fails", {})))["hint"] == hint


def test_false_and_blank_are_off(pack_runtime):
    for setting in (False, "  "):
        runtime = runtime_with(pack_runtime, setting)
        assert "hint" not in json.loads(runtime.handle_function_call("fails", {}))

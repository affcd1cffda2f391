"""``destructive_if``: arguments that turn a call of a read-only tool into a destructive one. The tool stays offered
everywhere a read-only tool is; a call that gives one of those arguments asks under ``approvals.policy: writes`` and
is refused under ``read-only`` and in read-only views — on every call path."""

from __future__ import annotations

import json
import threading
from typing import Any

import anyio
import pytest

from hermes_core import ApprovalRequest, Runtime
from hermes_core.errors import ManifestError
from hermes_core.plugin import ToolAnnotations
from hermes_core.plugins.manifest import parse_manifest

SCHEMA = {"description": "Read the page, or run code in it",
          "parameters": {"type": "object", "properties": {"code": {"type": "string"}, "clear": {"type": "boolean"}}}}
ANNOTATIONS = {"read_only": True, "destructive_if": ["code"]}
MANIFEST = """\
name: pages
version: "1.0"
tools:
  - name: page_console
    toolset: pages
    description: Read the console, or run code
    parameters: {type: object, properties: {code: {type: string}}}
    handler: .tools:console
    annotations: {read_only: true, open_world: true, destructive_if: [code]}
"""


class Page:
    """A host tool that records what ran, and an approval callback that records what was asked."""

    def __init__(self, runtime: Runtime, answer: str = "deny", **options: Any) -> None:
        self.ran: list[dict[str, Any]] = []
        self.asked: list[ApprovalRequest] = []
        self.answer = answer
        self._lock = threading.Lock()
        self._asking = 0
        self.most_at_once = 0
        runtime.register_tool("page_console", "pages", SCHEMA, self.console,
                              annotations=options.pop("annotations", ANNOTATIONS), **options)
        runtime.set_approval_callback(self.approve)

    def console(self, args: dict[str, Any], **kwargs: Any) -> str:
        self.ran.append(args)
        return "ran"

    def approve(self, request: ApprovalRequest) -> str:
        with self._lock:
            self.asked.append(request)
            self._asking += 1
            self.most_at_once = max(self.most_at_once, self._asking)
        threading.Event().wait(0.05)  # time for an overlapping question to show (nothing is timed)
        with self._lock:
            self._asking -= 1
        return self.answer


def error_of(result: str) -> str:
    value = json.loads(result)
    assert isinstance(value, dict) and "error" in value, result
    return str(value["error"])


# -- the annotation -------------------------------------------------------------------------------------------


def test_destructive_if_is_kept_listed_and_sent_to_mcp_as_what_a_call_may_do_at_worst():
    annotations = ToolAnnotations.of({**ANNOTATIONS, "open_world": True})

    assert annotations.destructive_if == ("code",) and annotations.read_only is True
    assert annotations.as_dict() == {"read_only": True, "open_world": True, "destructive_if": ["code"]}
    assert ToolAnnotations.of(annotations.as_dict()) == annotations
    assert annotations.mcp() == {"readOnlyHint": False, "destructiveHint": True, "openWorldHint": True}
    assert annotations.label() == "read-only, destructive with code"
    assert annotations.destructive_arguments({"code": "1", "clear": True}) == ["code"]
    assert annotations.destructive_arguments({"code": ""}) == annotations.destructive_arguments({"code": None}) == []
    assert ToolAnnotations.of({"read_only": True}).label() == "read-only"


@pytest.mark.parametrize("given", ["code", [""], [1], {"code": True}])
def test_destructive_if_must_be_a_list_of_names(given):
    with pytest.raises(ValueError, match="annotation 'destructive_if' must be a list of argument names"):
        ToolAnnotations.of({"read_only": True, "destructive_if": given})


def test_register_tool_refuses_an_argument_the_parameters_do_not_define(hermes_runtime: Runtime):
    with pytest.raises(ValueError, match="destructive_if names 'script', which its parameters do not define"):
        hermes_runtime.register_tool("bad", "t", SCHEMA, lambda args, **kw: "",
                                     annotations={"read_only": True, "destructive_if": ["script"]})
    assert "bad" not in hermes_runtime.registry


def test_a_manifest_declares_it_and_the_tool_is_not_parallel_safe_by_default(plugins: Any):
    plugins.folder("pages", MANIFEST, files={"tools.py": "def console(args, **kw):\n    return 'read'\n"})
    runtime = plugins.runtime()
    runtime.load_plugins()

    entry = runtime.registry.get("page_console")

    assert entry.annotations.destructive_if == ("code",) and entry.read_only
    assert entry.parallel_safe is False  # a call of it may ask: calls that ask run alone
    assert runtime.get_tool_definitions(format="mcp")[0]["annotations"]["destructiveHint"] is True
    assert not plugins.imported("pages")  # all of it from plugin.yaml
    with pytest.raises(ManifestError, match=r"tools\.0\.annotations\.destructive_if"):
        parse_manifest(MANIFEST.replace("destructive_if: [code]", "destructive_if: code"))


# -- the policies -------------------------------------------------------------------------------------------


def test_under_dangerous_nothing_asks(hermes_runtime: Runtime):
    page = Page(hermes_runtime)

    assert hermes_runtime.handle_function_call("page_console", {"code": "1"}) == "ran"
    assert page.asked == []


def test_under_writes_only_a_call_that_gives_the_argument_asks_and_a_refusal_runs_nothing(hermes_runtime: Runtime):
    hermes_runtime.set_policy("writes")
    page = Page(hermes_runtime, answer="deny")

    assert hermes_runtime.handle_function_call("page_console", {}) == "ran"
    assert hermes_runtime.handle_function_call("page_console", {"code": "", "clear": True}) == "ran"
    assert page.asked == []
    message = error_of(hermes_runtime.handle_function_call("page_console", {"code": "document.title"}))

    assert "approval policy 'writes'" in message and "'page_console' with 'code'" in message
    [request] = page.asked
    assert request.tool_name == "page_console" and request.rule_key == "tool:page_console"
    assert request.args == {"code": "document.title"} and "'code'" in request.message
    assert page.ran == [{}, {"code": "", "clear": True}]  # the refused call never reached the handler
    page.answer = "once"
    assert hermes_runtime.handle_function_call("page_console", {"code": "1 + 1"}) == "ran"
    assert page.ran[-1] == {"code": "1 + 1"} and len(page.asked) == 2


def test_under_writes_an_unanswered_question_runs_nothing(hermes_runtime: Runtime, hermes_home):
    (hermes_home / "config.yaml").write_text("approvals: {policy: writes, timeout: 0.2}\n")
    page = Page(hermes_runtime)
    never = threading.Event()
    hermes_runtime.set_approval_callback(lambda request: never.wait(30) or "once")
    try:
        message = error_of(hermes_runtime.handle_function_call("page_console", {"code": "1"}))
    finally:
        never.set()

    assert "not approved" in message and page.ran == []


def test_under_read_only_the_tool_is_offered_and_a_call_with_the_argument_is_refused(hermes_runtime: Runtime):
    hermes_runtime.set_policy("read-only")
    page = Page(hermes_runtime, answer="once")

    offered = [d["function"]["name"] for d in hermes_runtime.get_tool_definitions()]
    calls = [{"name": "page_console", "arguments": {"code": "1"}}]
    refused = [hermes_runtime.handle_function_call("page_console", {"code": "1"}),
               *hermes_runtime.run_tool_calls(calls),
               anyio.run(hermes_runtime.ahandle_function_call, "page_console", {"code": "1"}),
               *anyio.run(hermes_runtime.arun_tool_calls, calls)]

    assert offered == ["page_console"]
    for result in refused:
        assert "refused with 'code': the approval policy 'read-only'" in error_of(result)
    assert page.ran == [] and page.asked == []  # refused, not asked
    assert hermes_runtime.handle_function_call("page_console", {}) == "ran"


def test_a_read_only_view_offers_the_tool_and_never_runs_the_argument(hermes_runtime: Runtime):
    page = Page(hermes_runtime, answer="once")  # the runtime's policy is dangerous: the view alone refuses
    view = hermes_runtime.filtered(read_only=True)

    assert [d["function"]["name"] for d in view.get_tool_definitions()] == ["page_console"]
    for result in (view.handle_function_call("page_console", {"code": "1"}),
                   anyio.run(view.ahandle_function_call, "page_console", {"code": "1"}),
                   *view.run_tool_calls([{"name": "page_console", "arguments": {"code": "1"}}])):
        assert "this view offers only read-only tools" in error_of(result)
    assert page.ran == [] and page.asked == []
    assert view.handle_function_call("page_console", {}) == "ran"
    assert hermes_runtime.handle_function_call("page_console", {"code": "1"}) == "ran"  # the runtime itself runs it


def test_the_async_path_asks_too(hermes_runtime: Runtime):
    hermes_runtime.set_policy("writes")
    page = Page(hermes_runtime, answer="deny")

    async def handler(args: dict[str, Any], **kwargs: Any) -> str:
        page.ran.append(args)
        return "ran"

    hermes_runtime.register_tool("page_async", "pages", SCHEMA, handler, is_async=True, annotations=ANNOTATIONS)
    results = [anyio.run(hermes_runtime.ahandle_function_call, name, {"code": "1"})
               for name in ("page_console", "page_async")]

    assert all("not approved" in error_of(result) for result in results)
    assert page.ran == [] and [request.tool_name for request in page.asked] == ["page_console", "page_async"]
    assert anyio.run(hermes_runtime.ahandle_function_call, "page_async", {}) == "ran"


def test_calls_that_may_ask_run_one_at_a_time_even_when_declared_parallel_safe(hermes_runtime: Runtime):
    hermes_runtime.set_policy("writes")
    page = Page(hermes_runtime, answer="once", parallel_safe=True)
    calls = [{"id": f"c{i}", "name": "page_console", "arguments": {"code": str(i)}} for i in range(3)]

    assert hermes_runtime.run_tool_calls(calls) == ["ran"] * 3
    assert len(page.asked) == 3 and page.most_at_once == 1

"""``browser_console`` reads without asking, and its ``expression`` runs only where the approval policy lets a
destructive call run: asked under ``writes``, refused under ``read-only`` and in read-only views. Whether the
expression ran is read from the page server: the expression fetches ``/ran``."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from hermes_core import ApprovalRequest, Runtime

from .conftest import PageServer

EXPRESSION = "fetch('/ran').then(response => response.status)"


class Approvals:
    """The runtime's approval callback: records each question and gives ``answer`` (None: never answers)."""

    def __init__(self, runtime: Runtime, answer: str | None) -> None:
        self.answer = answer
        self.asked: list[ApprovalRequest] = []
        self.released = threading.Event()
        runtime.set_approval_callback(self)

    def __call__(self, request: ApprovalRequest) -> str:
        self.asked.append(request)
        if self.answer is None:
            self.released.wait(60)
            return "once"
        return self.answer


@pytest.fixture
def page(browser: Any, pages: PageServer) -> PageServer:
    """A page that logged a console message; ``/ran`` answers the expression's fetch."""
    pages.add("/ran", "ran", content_type="text/plain")
    opened = browser("browser_navigate", url=pages.add("/", "<title>t</title><script>console.log('hello')</script>"))
    assert opened["success"], opened
    return pages


def console(runtime: Any, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(runtime.handle_function_call("browser_console", args))
    return result


def messages(result: dict[str, Any]) -> list[str]:
    return [message["text"] for message in result["console_messages"]]


def test_under_writes_reading_the_console_asks_nothing(hermes_runtime: Runtime, page: PageServer) -> None:
    hermes_runtime.set_policy("writes")
    approvals = Approvals(hermes_runtime, "deny")

    assert messages(console(hermes_runtime)) == ["hello"]
    assert messages(console(hermes_runtime, expression="")) == ["hello"]  # an empty one is none
    assert approvals.asked == []


@pytest.mark.parametrize("answer", ["deny", None])
def test_under_writes_an_expression_asks_and_refused_or_unanswered_does_not_run(
        hermes_runtime: Runtime, hermes_home: Any, page: PageServer, browser_config: Any, answer: str | None) -> None:
    (hermes_home / "config.yaml").write_text(json.dumps({
        "browser": {"allow_private": True}, "approvals": {"policy": "writes", "timeout": 0.5}}))
    hermes_runtime.set_policy(None)  # read approvals.policy again
    approvals = Approvals(hermes_runtime, answer)
    try:
        result = console(hermes_runtime, expression=EXPRESSION)
    finally:
        approvals.released.set()

    assert "Blocked by the approval policy 'writes'" in result["error"]
    [request] = approvals.asked
    assert request.tool_name == "browser_console" and request.args == {"expression": EXPRESSION}
    assert "'expression'" in request.message
    assert "/ran" not in page.paths()  # the expression never ran
    assert messages(console(hermes_runtime)) == ["hello"]  # the session answers as before


def test_under_writes_an_approved_expression_runs(hermes_runtime: Runtime, page: PageServer) -> None:
    hermes_runtime.set_policy("writes")
    approvals = Approvals(hermes_runtime, "once")

    result = console(hermes_runtime, expression=EXPRESSION)

    assert result == {"success": True, "result": 200} and len(approvals.asked) == 1
    assert "/ran" in page.paths()


def test_under_read_only_an_expression_is_refused_without_asking(hermes_runtime: Runtime, page: PageServer) -> None:
    hermes_runtime.set_policy("read-only")
    approvals = Approvals(hermes_runtime, "once")

    offered = {d["function"]["name"] for d in hermes_runtime.get_tool_definitions(enabled_toolsets=["browser"])}
    result = console(hermes_runtime, expression=EXPRESSION)

    assert "browser_console" in offered and "browser_navigate" not in offered
    assert "refused with 'expression': the approval policy 'read-only'" in result["error"]
    assert approvals.asked == [] and "/ran" not in page.paths()
    assert messages(console(hermes_runtime)) == ["hello"]


def test_a_read_only_view_reads_the_console_and_never_runs_an_expression(hermes_runtime: Runtime,
                                                                         page: PageServer) -> None:
    approvals = Approvals(hermes_runtime, "once")  # the runtime's policy is dangerous: the view alone refuses
    view = hermes_runtime.filtered(toolsets=["browser"], read_only=True)

    refused = json.loads(view.handle_function_call("browser_console", {"expression": EXPRESSION}))
    read = json.loads(view.handle_function_call("browser_console", {}))

    assert "this view offers only read-only tools" in refused["error"]
    assert messages(read) == ["hello"] and approvals.asked == [] and "/ran" not in page.paths()

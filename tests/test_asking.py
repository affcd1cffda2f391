"""Asking the user and a model from a tool call, and reporting progress: who answers (the caller's callbacks, the
runtime's, the endpoint), what a callback may return, and that nothing waits without a bound or fails the call
because a callback misbehaves."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from hermes_core import (
    ModelReply,
    Progress,
    Runtime,
    UserAnswer,
    UserQuestion,
    caller_callbacks,
)
from hermes_core.authoring.testing import scaled_timeout
from hermes_core.calls.progress import ProgressReporter
from hermes_core.errors import NoAnswer
from hermes_core.plugin import tool_context


@pytest.fixture
def runtime(isolated_home: Path, tmp_path: Path) -> Runtime:
    made = Runtime(home=isolated_home, workspace=tmp_path, entry_points=())
    yield made
    made.close()


def asking_tool(runtime: Runtime, ask: Any) -> None:
    """A host tool ``ask`` whose handler is ``ask(tool_context())`` (its value, or the error it raised, as text)."""
    def handler(args: dict[str, Any], **kwargs: Any) -> str:
        try:
            return repr(ask(tool_context()))
        except NoAnswer as exc:
            return f"NoAnswer: {exc}"

    runtime.register_tool("ask", "asking", {"description": "asks"}, handler)


def test_a_question_with_nobody_to_ask_fails_at_once_saying_why(runtime):
    asking_tool(runtime, lambda ctx: ctx.ask_user("Which?"))
    assert runtime.handle_function_call("ask", {}) == (
        "NoAnswer: no user can be asked here: the program running Hermes set no user callback "
        "(Runtime.set_user_callback)")


@pytest.mark.parametrize(("answer", "expected"), [
    ("  b  ", UserAnswer("b", ("b",))),
    (["a", "c"], UserAnswer("a, c", ("a", "c"))),
    ("my own", UserAnswer("my own")),
    (UserAnswer("given", ("a",)), UserAnswer("given", ("a",))),
])
def test_what_a_user_callback_returns_becomes_an_answer(runtime, answer, expected):
    seen: list[UserQuestion] = []
    runtime.set_user_callback(lambda question: seen.append(question) or answer)
    asking_tool(runtime, lambda ctx: ctx.ask_user("Which?", ["a", "b", "c"], multi_select=True))
    assert runtime.handle_function_call("ask", {}, session_id="s1") == repr(expected)
    assert seen == [UserQuestion("Which?", ("a", "b", "c"), True, True, "ask", "s1")]


@pytest.mark.parametrize(("answer", "why"), [
    (None, "the user declined to answer"),
    (42, "the user callback returned a int, not an answer (a string, a list of strings or a UserAnswer)"),
])
def test_a_declined_or_unreadable_answer_is_no_answer(runtime, answer, why):
    runtime.set_user_callback(lambda question: answer)
    asking_tool(runtime, lambda ctx: ctx.ask_user("Which?"))
    assert runtime.handle_function_call("ask", {}) == f"NoAnswer: {why}"


def test_a_callback_that_raises_or_hangs_is_no_answer_and_the_call_goes_on(runtime):
    release = threading.Event()

    def hangs(question: UserQuestion) -> str:
        release.wait(scaled_timeout(60))
        return "late"

    runtime.set_user_callback(lambda question: 1 / 0)
    asking_tool(runtime, lambda ctx: ctx.ask_user("Which?", timeout=0.2))
    assert runtime.handle_function_call("ask", {}) == "NoAnswer: asking the user failed: ZeroDivisionError: " \
                                                      "division by zero"
    runtime.set_user_callback(hangs)
    try:
        assert runtime.handle_function_call("ask", {}) == "NoAnswer: the user did not answer within 0.2 s"
    finally:
        release.set()


def test_an_async_user_callback_is_awaited(runtime):
    async def ask(question: UserQuestion) -> str:
        await asyncio.sleep(0)
        return question.choices[-1]

    runtime.set_user_callback(ask)
    asking_tool(runtime, lambda ctx: ctx.ask_user("Which?", ["a", "b"]).text)
    assert runtime.handle_function_call("ask", {}) == "'b'"
    assert asyncio.run(runtime.ahandle_function_call("ask", {})) == "'b'"


def test_the_callers_callbacks_come_before_the_runtimes_and_a_string_says_nobody_answers(runtime):
    runtime.set_user_callback(lambda question: "the runtime's user")
    asking_tool(runtime, lambda ctx: ctx.ask_user("Who?").text)
    with caller_callbacks(user=lambda question: "the caller's user"):
        assert runtime.handle_function_call("ask", {}) == "\"the caller's user\""
        with caller_callbacks(user="a cron job has no user"):
            assert runtime.handle_function_call("ask", {}) == "NoAnswer: a cron job has no user"
    assert runtime.handle_function_call("ask", {}) == "\"the runtime's user\""


def test_a_model_request_goes_to_the_host_then_the_caller_then_the_endpoint(runtime):
    asking_tool(runtime, lambda ctx: ctx.ask_model([{"role": "user", "content": "hi"}], max_tokens=5).text)
    assert runtime.handle_function_call("ask", {}).startswith(
        "NoAnswer: no model can be asked here: the program running Hermes set no model callback")
    with caller_callbacks(model=lambda request: "the caller's model"):
        assert runtime.handle_function_call("ask", {}) == "\"the caller's model\""
        runtime.set_model_callback(lambda request: {"choices": [{"message": {"content": "the host's model"}}]})
        assert runtime.handle_function_call("ask", {}) == "\"the host's model\""


def test_a_model_reply_is_read_from_what_providers_return():
    anthropic = {"role": "assistant", "model": "claude", "stop_reason": "tool_use", "content": [
        {"type": "text", "text": "Looking."}, {"type": "tool_use", "id": "toolu_1", "name": "read_file",
                                               "input": {"path": "a"}}]}
    reply = ModelReply.of(anthropic)
    assert (reply.text, reply.model, reply.stop_reason) == ("Looking.", "claude", "tool_use")
    assert reply.message()["tool_calls"] == [{"id": "toolu_1", "type": "function",
                                              "function": {"name": "read_file", "arguments": '{"path": "a"}'}}]
    assert ModelReply.of({"role": "assistant", "content": None}).text == ""
    with pytest.raises(NoAnswer, match="returned a int, not a reply"):
        ModelReply.of(7)


# -- progress -------------------------------------------------------------------------------------------------


def test_progress_reaches_the_callers_or_the_runtimes_listener_with_the_calls_name(runtime):
    heard: list[Progress] = []
    asking_tool(runtime, lambda ctx: ctx.progress(1, 2, "half\x1bway\n  there"))
    runtime.set_progress_callback(heard.append)
    runtime.handle_function_call("ask", {}, tool_call_id="c1", session_id="s1")
    assert heard == [Progress(1, 2, "half\x1bway there", "ask", "c1", "s1")]
    caller: list[Progress] = []
    with caller_callbacks(progress=caller.append):
        runtime.handle_function_call("ask", {}, tool_call_id="c2")
    assert [p.tool_call_id for p in caller] == ["c2"] and len(heard) == 1


def test_progress_outside_a_call_or_with_nobody_listening_costs_nothing_and_never_fails(runtime):
    asking_tool(runtime, lambda ctx: ctx.progress(3))
    assert runtime.handle_function_call("ask", {}) == "None"
    assert not runtime.tool_context(None).progress_reporter()
    runtime.set_progress_callback(lambda progress: 1 / 0)  # a listener that raises: logged, the call goes on
    assert runtime.handle_function_call("ask", {}) == "None"


def test_a_reporter_counts_output_lines_drops_reports_too_close_and_never_goes_back():
    heard: list[Progress] = []
    reporter = ProgressReporter(heard.append, "terminal")
    reporter.output("one\ntw")
    reporter.output("o\nthree\n")  # too soon after the first report: dropped
    reporter(10, 10, "done")  # reaching the total is always sent
    reporter(5, 10, "backwards")
    assert [(p.done, p.message) for p in heard] == [(1, "one"), (10, "done")]


def test_a_parallel_batch_keeps_the_callers_callbacks_in_every_call(runtime):
    heard: list[str] = []

    def who_answers(args: dict[str, Any], **kwargs: Any) -> str:
        return tool_context().ask_user("Which?").text

    for name in ("first", "second"):
        runtime.register_tool(name, "asking", {"description": "asks"}, who_answers, annotations={"read_only": True})
    calls = [{"id": f"c{n}", "type": "function", "function": {"name": name, "arguments": "{}"}}
             for n, name in enumerate(("first", "second"))]
    with caller_callbacks(user=lambda question: heard.append(question.tool_name) or "from the caller"):
        replies = runtime.answer_tool_calls(calls)  # read-only: the two run side by side, on two threads
    assert [reply["content"] for reply in replies] == ["from the caller"] * 2
    assert sorted(heard) == ["first", "second"]


def test_the_wait_for_the_user_is_agent_clarify_timeout_bounded(runtime, isolated_home):
    release = threading.Event()
    seen: list[UserQuestion] = []

    def hangs(question: UserQuestion) -> str:
        seen.append(question)
        release.wait(scaled_timeout(60))
        return "late"

    (isolated_home / "config.yaml").write_text("agent:\n  clarify_timeout: 0.2\n")
    runtime.set_user_callback(hangs)
    asking_tool(runtime, lambda ctx: ctx.ask_user("Which?"))
    try:
        assert runtime.handle_function_call("ask", {}) == "NoAnswer: the user did not answer within 0.2 s"
    finally:
        release.set()
    assert seen[0].timeout == 0.2  # a callback that waits on its own (an MCP client) knows the bound


@pytest.mark.parametrize(("setting", "wait"), [
    (None, 3600.0), (30, 30.0), (0, 3600.0), (-5, 3600.0), (True, 3600.0), ("soon", 3600.0), (10**9, 86_400.0),
])
def test_clarify_timeout_is_hermes_agents_default_and_bounded(setting, wait):
    from hermes_core.calls.asking import user_timeout

    assert user_timeout(setting) == wait


def test_an_approval_nobody_can_answer_is_refused_saying_why(runtime):
    def asks(tool_name: str, **kwargs: Any) -> dict[str, str] | None:
        return {"action": "approve", "message": "it needs a person", "rule_key": "k"} if tool_name == "ask" else None

    runtime.context().register_hook("pre_tool_call", asks)
    asking_tool(runtime, lambda ctx: "ran")
    with caller_callbacks(approval="the caller has nobody to ask"):
        refused = runtime.handle_function_call("ask", {})
    assert "not approved: it needs a person Nobody was asked: the caller has nobody to ask." in refused

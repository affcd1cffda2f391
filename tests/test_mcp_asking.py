"""``hermes mcp serve`` asks its client: the MCP SDK's own client answers a served ``clarify`` and approves a
dangerous ``terminal`` command through elicitation, runs ``delegate_task``'s sub-agent through sampling with tools,
and hears a long command's progress; a client without those capabilities is told why, at once."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest

from hermes_core.authoring.testing import scaled_timeout

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py
WAIT = scaled_timeout(60.0)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="the terminal pack runs bash")


@dataclass
class Served:
    """What ``hermes mcp serve`` runs with: a home whose config enables the agent, terminal and file packs (from
    this checkout), and a workspace."""

    home: Path
    workspace: Path
    env: dict[str, str]


@pytest.fixture
def served(tmp_path: Path) -> Served:
    home, workspace = tmp_path / "home", tmp_path / "workspace"
    home.mkdir()
    workspace.mkdir()
    packs = ("agent", "terminal", "file")
    (home / "config.yaml").write_text(f"plugins:\n  enabled: [{', '.join(packs)}]\n")
    return Served(home, workspace, {"HERMES_HOME": str(home),
                                    "PYTHONPATH": support.pack_path(tmp_path, packs)})


async def session(stack: AsyncExitStack, served: Served, **callbacks: Any) -> Any:
    """An initialized SDK ``ClientSession`` on ``hermes mcp serve`` over stdio, with the callbacks given."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    command = [*support.hermes_command(), "mcp", "serve", "--workspace", str(served.workspace)]
    params = StdioServerParameters(command=command[0], args=command[1:], env=served.env, cwd=served.workspace)
    errlog = stack.enter_context(open(served.home / "serve-stderr.log", "a"))  # noqa: SIM115
    read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
    client = await stack.enter_async_context(ClientSession(read, write, **callbacks))
    with anyio.fail_after(WAIT):
        await client.initialize()
    return client


def served_call(served: Served, tool: str, arguments: dict[str, Any], **callbacks: Any) -> tuple[bool, str]:
    """One call on a fresh connection: whether it is an error, and its text."""
    async def main() -> tuple[bool, str]:
        async with AsyncExitStack() as stack:
            client = await session(stack, served, **callbacks)
            with anyio.fail_after(WAIT):
                result = await client.call_tool(tool, arguments)
            return bool(result.is_error), "".join(block.text for block in result.content)

    return anyio.run(main)


def form(answers: list[dict[str, Any] | None], seen: list[Any]) -> Callable[..., Any]:
    """An elicitation callback that accepts with each of ``answers`` in turn (``None``: declines)."""
    import mcp.types as types

    async def elicit(context: Any, params: Any) -> Any:
        seen.append(params)
        answer = answers.pop(0) if answers else None
        return types.ElicitResult(action="decline") if answer is None else \
            types.ElicitResult(action="accept", content=answer)

    return elicit


# -- clarify ------------------------------------------------------------------------------------------------


def test_a_served_clarify_is_answered_through_the_clients_elicitation(served):
    seen: list[Any] = []
    error, text = served_call(served, "clarify", {"question": "Which database?", "choices": ["sqlite", "postgres"]},
                              elicitation_callback=form([{"choice": "postgres"}], seen))
    assert not error, text
    assert json.loads(text) == {"question": "Which database?", "choices_offered": ["sqlite", "postgres"],
                                "user_response": "postgres"}
    asked = seen[0]
    assert asked.message == "Which database?"
    assert asked.requested_schema["properties"]["choice"]["enum"] == ["sqlite", "postgres"]


def test_a_served_clarify_takes_the_users_own_answer_and_their_several_picks(served):
    seen: list[Any] = []
    error, text = served_call(served, "clarify", {"question": "Name it"},
                              elicitation_callback=form([{"answer": "  hermes  "}], seen))
    assert (error, json.loads(text)["user_response"]) == (False, "hermes")
    error, text = served_call(served, "clarify", {"question": "Which?", "choices": ["a", "b", "c"],
                                                  "multi_select": True},
                              elicitation_callback=form([{"choices": ["a", "c", "zzz"]}], seen))
    assert not error and json.loads(text)["selected"] == ["a", "c"]  # what is not a choice is dropped


def test_a_declined_question_is_an_error_saying_so(served):
    error, text = served_call(served, "clarify", {"question": "Which?"}, elicitation_callback=form([None], []))
    assert error and "the user declined to answer" in text


def test_a_question_the_client_leaves_unanswered_ends_at_agent_clarify_timeout(served):
    (served.home / "config.yaml").write_text("plugins:\n  enabled: [agent, terminal, file]\n"
                                             "agent:\n  clarify_timeout: 1\n")

    async def never(context: Any, params: Any) -> Any:
        await anyio.sleep_forever()

    error, text = served_call(served, "clarify", {"question": "Which?"}, elicitation_callback=never)
    assert error and "did not answer" in text and "within 1 s" in text


def test_without_elicitation_clarify_is_refused_with_the_reason(served):
    error, text = served_call(served, "clarify", {"question": "Which?", "choices": ["a", "b"]})
    assert error and "the MCP client did not declare the elicitation capability" in text


# -- approvals ----------------------------------------------------------------------------------------------


def victims(workspace: Path, *names: str) -> None:
    for name in names:
        (workspace / name / "inner").mkdir(parents=True)


def test_a_dangerous_command_is_approved_by_the_clients_user(served):
    victims(served.workspace, "victim")
    seen: list[Any] = []
    error, text = served_call(served, "terminal", {"command": "rm -r victim"},
                              elicitation_callback=form([{"decision": "once"}], seen))
    assert not error and json.loads(text)["exit_code"] == 0, text
    assert not (served.workspace / "victim").exists()
    assert "rm -r victim" in seen[0].message
    assert seen[0].requested_schema["properties"]["decision"]["enum"] == ["once", "session", "always", "deny"]


def test_a_denied_or_unanswerable_approval_blocks_the_command(served):
    victims(served.workspace, "kept")
    error, text = served_call(served, "terminal", {"command": "rm -r kept"},
                              elicitation_callback=form([{"decision": "deny"}], []))
    assert error and "was not approved" in text
    error, text = served_call(served, "terminal", {"command": "rm -r kept"})  # no elicitation: refused as before
    assert error and "was not approved" in text
    assert (served.workspace / "kept").exists()


def test_without_elicitation_an_approval_is_refused_saying_why_and_how_to_allow_it(served):
    victims(served.workspace, "kept")
    error, text = served_call(served, "terminal", {"command": "rm -r kept"})
    assert error and "was not approved" in text
    assert "the MCP client did not declare the elicitation capability, so its user cannot approve the call" in text
    assert "command_allowlist" in text and "approvals.mode: approve" in text
    assert (served.workspace / "kept").exists()
    (served.home / "config.yaml").write_text("plugins:\n  enabled: [agent, terminal, file]\n"
                                             "command_allowlist: [recursive_delete]\n")
    error, text = served_call(served, "terminal", {"command": "rm -r kept"})  # as the refusal said
    assert not error and not (served.workspace / "kept").exists(), text


def test_an_approval_for_the_session_holds_for_that_connection_only(served):
    victims(served.workspace, "a", "b", "c")
    seen: list[Any] = []
    elicit = form([{"decision": "session"}, {"decision": "deny"}], seen)

    async def main() -> list[bool]:
        errors = []
        async with AsyncExitStack() as stack:
            first = await session(stack, served, elicitation_callback=elicit)
            for name in ("a", "b"):
                with anyio.fail_after(WAIT):
                    errors.append(bool((await first.call_tool("terminal", {"command": f"rm -r {name}"})).is_error))
            second = await session(stack, served, elicitation_callback=elicit)
            with anyio.fail_after(WAIT):
                errors.append(bool((await second.call_tool("terminal", {"command": "rm -r c"})).is_error))
        return errors

    assert anyio.run(main) == [False, False, True]
    assert len(seen) == 2  # asked once on the first connection, and again on the second
    assert (served.workspace / "c").exists()


# -- delegate_task through sampling ---------------------------------------------------------------------------


def test_delegate_task_runs_its_sub_agent_through_the_clients_sampling(served):
    import mcp.types as types

    (served.workspace / "notes.txt").write_text("the answer is 42\n")
    requests: list[Any] = []

    async def sample(context: Any, params: types.CreateMessageRequestParams) -> Any:
        requests.append(params)
        results = [block for message in params.messages for block in message.content_as_list
                   if isinstance(block, types.ToolResultContent)]
        if results:
            return types.CreateMessageResultWithTools(
                role="assistant", model="client-model", stop_reason="endTurn",
                content=[types.TextContent(text="Summary: " + results[-1].content[0].text)])
        return types.CreateMessageResultWithTools(
            role="assistant", model="client-model", stop_reason="toolUse",
            content=[types.ToolUseContent(id="use-1", name="read_file", input={"path": "notes.txt"})])

    error, text = served_call(served, "delegate_task", {"goal": "Find the answer in notes.txt"},
                              sampling_callback=sample,
                              sampling_capabilities=types.SamplingCapability(tools=types.SamplingToolsCapability()))
    assert not error, text
    [result] = json.loads(text)["results"]
    assert result["status"] == "completed" and result["model"] == "client-model"
    assert "the answer is 42" in result["summary"]
    assert [step["tool"] for step in result["tool_trace"]] == ["read_file"]
    offered = {tool.name for tool in requests[0].tools}
    assert "read_file" in offered and not offered & {"delegate_task", "clarify"}
    assert "Find the answer in notes.txt" in requests[0].system_prompt


def test_delegate_task_without_sampling_or_a_model_says_why(served):
    error, text = served_call(served, "delegate_task", {"goal": "anything"})
    assert error
    assert "the MCP client did not declare the sampling capability with tools" in text
    assert "delegation.base_url" in text


# -- progress -------------------------------------------------------------------------------------------------


def test_a_long_terminal_call_sends_progress_before_its_result(served):
    events: list[tuple[str, Any]] = []

    async def heard(progress: float, total: float | None, message: str | None) -> None:
        events.append(("progress", (progress, message)))

    async def main() -> None:
        async with AsyncExitStack() as stack:
            client = await session(stack, served)
            command = "for i in $(seq 1 12); do echo line $i; sleep 0.25; done"
            with anyio.fail_after(WAIT):
                result = await client.call_tool("terminal", {"command": command}, progress_callback=heard)
            events.append(("result", json.loads(result.content[0].text)))

    anyio.run(main)
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "result" and events[-1][1]["output"].count("line") == 12
    heard_lines = [value for kind, value in events if kind == "progress"]
    assert len(heard_lines) >= 2, events
    assert all(message.startswith("line ") for _, message in heard_lines)
    assert [count for count, _ in heard_lines] == sorted({count for count, _ in heard_lines})  # increasing


def test_a_client_that_never_answers_an_approval_is_refused_within_approvals_timeout(served):
    (served.home / "config.yaml").write_text("plugins:\n  enabled: [agent, terminal, file]\napprovals:\n  timeout: 1\n")
    victims(served.workspace, "kept")
    asked: list[Any] = []

    async def never(context: Any, params: Any) -> Any:
        asked.append(params)
        await anyio.sleep_forever()

    error, text = served_call(served, "terminal", {"command": "rm -r kept"}, elicitation_callback=never)
    assert error and "was not approved" in text
    assert len(asked) == 1 and (served.workspace / "kept").exists()


def test_notify_reaches_the_client_as_a_log_notification(served: Served):
    import mcp.types as types

    heard: list[types.LoggingMessageNotificationParams] = []

    async def log_message(params: types.LoggingMessageNotificationParams) -> None:
        heard.append(params)

    is_error, text = served_call(served, "notify", {"title": "Build done", "body": "12 passed"},
                                 logging_callback=log_message)
    assert not is_error, text
    assert json.loads(text) == {"sent": True, "via": "mcp"}
    assert [(p.level, p.logger, p.data) for p in heard] == [
        ("notice", "hermes.notify", {"title": "Build done", "body": "12 passed"})]


# -- the 2026 protocol --------------------------------------------------------------------------------------


def test_a_2026_protocol_client_cannot_be_asked_mid_call_and_is_told_so(served):
    """The 2026 protocol asks through multi-round-trip results, not requests in the middle of a call: Hermes
    does not (yet) answer a call with "input required", so such a client's calls that need its user are refused,
    saying why, at once."""
    from mcp import Client, StdioServerParameters
    from mcp.types.version import MODERN_PROTOCOL_VERSIONS

    victims(served.workspace, "kept")
    command = [*support.hermes_command(), "mcp", "serve", "--workspace", str(served.workspace)]
    params = StdioServerParameters(command=command[0], args=command[1:], env=served.env, cwd=served.workspace)

    async def main() -> list[tuple[bool, str]]:
        async with Client(params) as client:
            assert client.protocol_version in MODERN_PROTOCOL_VERSIONS
            results = []
            for tool, arguments in (("clarify", {"question": "Which?"}), ("terminal", {"command": "rm -r kept"})):
                with anyio.fail_after(WAIT):
                    result = await client.call_tool(tool, arguments)
                results.append((bool(result.is_error), "".join(block.text for block in result.content)))
            return results

    (clarify_error, clarify), (terminal_error, terminal) = anyio.run(main)
    assert clarify_error and "in which Hermes cannot ask it for elicitation in the middle of a call" in clarify
    assert terminal_error and "was not approved" in terminal and "cannot approve the call" in terminal
    assert "command_allowlist" in terminal and (served.workspace / "kept").exists()

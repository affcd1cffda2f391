"""``memory.write_approval`` (Hermes Agent's write gate): each write is shown to the user first; approved it lands,
denied it is refused with Hermes Agent's message, and with nobody to ask it is staged in ``pending/memory`` (Hermes
Agent's record) until ``hermes memory approve`` applies it. And summaries of ``session_search`` from the host's
model callback."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from hermes_core import ApprovalRequest, ModelRequest, Runtime
from hermes_core.calls.asking import caller_callbacks
from hermes_core.cli import cli


@pytest.fixture
def runtime(hermes_runtime: Runtime, load_hermes_plugin: Callable[..., Any], hermes_home: Path) -> Runtime:
    load_hermes_plugin("hermes_plugin_agent", plugin_id="agent")
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"memory": {"write_approval": True}}))
    return hermes_runtime


def remember(runtime: Runtime, **args: Any) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(runtime.handle_function_call("memory", args, session_id="s1"))
    return answer


def memory_file(home: Path) -> str:
    path = home / "memories" / "MEMORY.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_an_approved_write_lands_after_the_user_saw_it(runtime: Runtime, hermes_home: Path):
    asked: list[ApprovalRequest] = []
    runtime.set_approval_callback(lambda request: asked.append(request) or "once")

    answer = remember(runtime, action="add", target="memory", content="The user prefers tabs.")

    assert answer["success"] is True
    assert "The user prefers tabs." in memory_file(hermes_home)
    [request] = asked
    assert request.tool_name == "memory" and "add to memory" in request.message
    assert "The user prefers tabs." in request.message and "always" not in request.choices


def test_a_denied_write_is_refused_and_changes_nothing(runtime: Runtime, hermes_home: Path):
    remember_first = runtime.set_approval_callback(lambda request: "once")
    remember(runtime, action="add", target="memory", content="Keep me.")
    before = memory_file(hermes_home)
    runtime.set_approval_callback(lambda request: "deny")

    answer = remember(runtime, target="memory", operations=[{"action": "remove", "old_text": "Keep me"},
                                           {"action": "add", "content": "Replacement."}])

    assert remember_first is None
    assert answer == {"success": False, "error": "Memory write denied by user. The change was not saved."}
    assert memory_file(hermes_home) == before


def test_with_nobody_to_ask_the_write_is_staged_and_approved_later(runtime: Runtime, hermes_home: Path):
    with caller_callbacks(approval="an MCP client without elicitation cannot be asked"):
        answer = remember(runtime, action="add", target="user", content="Name: Ada.")

    assert answer["success"] is True and answer["staged"] is True
    assert "Staged for approval" in answer["message"] and "hermes memory pending" in answer["message"]
    assert not (hermes_home / "memories" / "USER.md").exists()
    record = json.loads((hermes_home / "pending" / "memory" / f"{answer['pending_id']}.json").read_text())
    assert record["subsystem"] == "memory" and record["origin"] == "foreground"  # Hermes Agent's record
    assert record["payload"] == {"action": "add", "target": "user", "content": "Name: Ada.", "old_text": None}

    runner = CliRunner()
    listed = runner.invoke(cli, ["memory", "pending", "--json"])
    assert listed.exit_code == 0 and [r["id"] for r in json.loads(listed.output)] == [answer["pending_id"]]
    applied = runner.invoke(cli, ["memory", "approve", answer["pending_id"]])
    assert applied.exit_code == 0, applied.output
    assert "Name: Ada." in (hermes_home / "memories" / "USER.md").read_text()
    assert json.loads(runner.invoke(cli, ["memory", "pending", "--json"]).output) == []


def test_a_staged_write_can_be_rejected_and_bad_ids_are_refused(runtime: Runtime, hermes_home: Path):
    with caller_callbacks(approval="nobody"):
        staged = remember(runtime, action="add", target="memory", content="Maybe.")["pending_id"]
    runner = CliRunner()

    assert runner.invoke(cli, ["memory", "approve", "../../config"]).exit_code == 1
    assert runner.invoke(cli, ["memory", "reject", staged]).exit_code == 0
    assert runner.invoke(cli, ["memory", "approve", staged]).exit_code == 1
    assert memory_file(hermes_home) == ""


def test_a_staged_write_that_no_longer_fits_stays_staged(runtime: Runtime, hermes_home: Path):
    with caller_callbacks(approval="nobody"):
        staged = remember(runtime, action="remove", target="memory", old_text="not there")["pending_id"]

    result = CliRunner().invoke(cli, ["memory", "approve", staged])

    assert result.exit_code == 1 and "stays staged" in result.output
    assert (hermes_home / "pending" / "memory" / f"{staged}.json").exists()


def test_under_the_writes_policy_the_user_is_asked_once(runtime: Runtime, hermes_home: Path):
    (hermes_home / "config.yaml").write_text(yaml.safe_dump({"memory": {"write_approval": True},
                                                             "approvals": {"policy": "writes"}}))
    asked: list[ApprovalRequest] = []
    runtime.set_approval_callback(lambda request: asked.append(request) or "once")

    assert remember(runtime, action="add", target="memory", content="Asked once.")["success"] is True
    assert len(asked) == 1 and "Asked once." in memory_file(hermes_home)


def test_without_the_gate_nothing_is_asked(runtime: Runtime, hermes_home: Path):
    (hermes_home / "config.yaml").write_text("{}")
    runtime.set_approval_callback(lambda request: pytest.fail("asked"))

    assert remember(runtime, action="add", target="memory", content="Free.")["success"] is True


# -- session_search summaries from the host's model ----------------------------------------------------------


def test_session_search_summaries_come_from_the_hosts_model(runtime: Runtime, hermes_home: Path):
    (hermes_home / "config.yaml").write_text("{}")
    runtime.sessions.record("past", "user", "We chose PostgreSQL for the billing service")
    asked: list[ModelRequest] = []
    runtime.set_model_callback(lambda request: asked.append(request) or "They chose PostgreSQL.")

    answer = json.loads(runtime.handle_function_call("session_search", {"query": "PostgreSQL"}, session_id="now"))

    assert answer["results"][0]["summary"] == "They chose PostgreSQL."
    assert asked[0].purpose == "session_search"
    assert "billing service" in asked[0].messages[0]["content"]


def test_a_failing_host_model_leaves_the_messages_without_a_summary(runtime: Runtime, hermes_home: Path):
    (hermes_home / "config.yaml").write_text("{}")
    runtime.sessions.record("past", "user", "We chose PostgreSQL for the billing service")

    def broken(request: ModelRequest) -> str:
        raise ConnectionError("down")

    runtime.set_model_callback(broken)
    [found] = json.loads(runtime.handle_function_call("session_search", {"query": "PostgreSQL"},
                                                      session_id="now"))["results"]

    assert found["summary"] is None and "billing service" in json.dumps(found)

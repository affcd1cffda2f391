"""Shared fixtures: the terminal pack loaded into an isolated runtime, and scripted approval answers."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from hermes_core.calls.approval import ApprovalRequest, set_approval_callback

Call = Callable[..., dict[str, Any]]


@pytest.fixture
def workspace(hermes_workspace: Path) -> Path:
    """The runtime's workspace, where new tasks start."""
    return hermes_workspace


@pytest.fixture
def config_file(hermes_home: Path) -> Path:
    """The runtime's config.yaml (not written yet)."""
    return hermes_home / "config.yaml"


@pytest.fixture
def call(load_hermes_plugin, hermes_runtime, workspace: Path) -> Iterator[Call]:
    """``call(tool, task=..., session=..., **args)`` through ``handle_function_call``, JSON decoded.

    Task and session ids get a suffix unique to the test; background processes still running at the
    end are killed.
    """
    load_hermes_plugin("hermes_plugin_terminal", "terminal")
    unique = uuid.uuid4().hex[:8]
    tasks: set[str] = set()

    def invoke(tool: str, *, task: str = "main", session: str = "session", **args: Any) -> dict[str, Any]:
        tasks.add(f"{task}-{unique}")
        raw = hermes_runtime.handle_function_call(tool, args, task_id=f"{task}-{unique}",
                                                  session_id=f"{session}-{unique}")
        return json.loads(raw)

    yield invoke
    for task in tasks:
        listed = json.loads(hermes_runtime.handle_function_call("process", {"action": "list"}, task_id=task))
        for entry in listed["processes"]:
            if entry["status"] == "running":
                hermes_runtime.handle_function_call(
                    "process", {"action": "kill", "session_id": entry["session_id"]}, task_id=task)


@dataclass
class ScriptedApprovals:
    """An approval callback answering from a list (then "deny") and recording every request."""

    answers: list[str] = field(default_factory=list)
    requests: list[ApprovalRequest] = field(default_factory=list)

    def __call__(self, request: ApprovalRequest) -> str:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else "deny"

    @property
    def asked(self) -> list[str | None]:
        return [request.rule_key for request in self.requests]


@pytest.fixture
def approvals(call: Call) -> Iterator[ScriptedApprovals]:
    """Answer approval requests programmatically; the previous callback is restored afterwards."""
    scripted = ScriptedApprovals()
    previous = set_approval_callback(scripted)
    yield scripted
    set_approval_callback(previous)

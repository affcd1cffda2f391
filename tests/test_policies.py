"""Approval policies, ``approvals.policy`` in config.yaml or per Runtime: ``dangerous`` (the default), ``writes``
(every tool that is not read-only asks first) and ``read-only`` (only read-only tools are offered and run) — with
the real file and terminal packs."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml

from hermes_core import ApprovalRequest, ConfigError, Runtime
from hermes_core.errors import PolicyError

FILE = ("hermes_plugin_file", "file")
TERMINAL = ("hermes_plugin_terminal", "terminal")


class Answers:
    """An approval callback that gives ``answer`` and records every request."""

    def __init__(self, answer: str = "once", hold: float = 0.0) -> None:
        self.answer = answer
        #: How long each question stays open: time for an overlapping one to show (nothing is timed).
        self.hold = hold
        self.requests: list[ApprovalRequest] = []
        self._lock = threading.Lock()
        self._active = 0
        self.most_at_once = 0

    def __call__(self, request: ApprovalRequest) -> str:
        with self._lock:
            self.requests.append(request)
            self._active += 1
            self.most_at_once = max(self.most_at_once, self._active)
        threading.Event().wait(self.hold)
        with self._lock:
            self._active -= 1
        return self.answer

    @property
    def tools(self) -> list[str | None]:
        return [request.tool_name for request in self.requests]


def error_of(result: str) -> str:
    value = json.loads(result)
    assert isinstance(value, dict) and "error" in value, result
    return str(value["error"])


@pytest.fixture
def files(pack_runtime: Any) -> Any:
    """``files(policy=None, **config)``: a runtime of the file pack under ``policy``, answering with ``Answers``."""

    def make(policy: str | None = None, answer: str = "once", **config: Any) -> tuple[Runtime, Answers]:
        runtime = pack_runtime(config, FILE)
        if policy is not None:
            runtime.set_policy(policy)
        answers = Answers(answer)
        runtime.set_approval_callback(answers)
        return runtime, answers

    return make


def write(runtime: Runtime, path: str = "notes.txt", content: str = "hello", **context: Any) -> str:
    return runtime.handle_function_call("write_file", {"path": path, "content": content}, **context)


# -- writes -----------------------------------------------------------------------------------------------


def test_writes_blocks_write_file_without_an_approval(files: Any, workspace: Path):
    runtime, answers = files("writes", answer="deny")
    message = error_of(write(runtime))
    assert "approval policy 'writes'" in message and "write_file" in message and "not approved" in message
    assert not (workspace / "notes.txt").exists()
    [request] = answers.requests
    assert request.tool_name == "write_file" and request.args == {"path": "notes.txt", "content": "hello"}
    assert 'write_file(path="notes.txt", content="hello")' in request.message
    assert request.rule_key == "tool:write_file"


def test_writes_runs_write_file_with_an_approval_and_read_file_never_asks(files: Any, workspace: Path):
    runtime, answers = files("writes", answer="once")
    assert json.loads(write(runtime))["bytes_written"] == 5
    assert (workspace / "notes.txt").read_text() == "hello"
    assert "hello" in json.loads(runtime.handle_function_call("read_file", {"path": "notes.txt"}))["content"]
    assert "notes" in runtime.handle_function_call("search_files", {"pattern": "hello", "target": "content"})
    assert answers.tools == ["write_file"]


def test_once_asks_every_time(files: Any):
    runtime, answers = files("writes", answer="once")
    write(runtime, session_id="s1")
    write(runtime, session_id="s1")
    assert answers.tools == ["write_file", "write_file"]


def test_session_asks_once_per_session(files: Any, workspace: Path):
    runtime, answers = files("writes", answer="session")
    write(runtime, "a.txt", session_id="s1")
    write(runtime, "b.txt", session_id="s1")
    assert answers.tools == ["write_file"]
    write(runtime, "c.txt", session_id="s2")  # another session asks again
    write(runtime, "d.txt")  # and so does a call without a session
    assert answers.tools == ["write_file"] * 3
    assert {path.name for path in workspace.iterdir()} == {"a.txt", "b.txt", "c.txt", "d.txt"}
    # a session approval of write_file approves write_file only
    runtime.handle_function_call("patch", {"path": "a.txt", "old_string": "hello", "new_string": "bye"},
                                 session_id="s1")
    assert answers.tools[-1] == "patch"


def test_always_is_kept_in_config_yaml_for_every_later_runtime(files: Any, isolated_home: Path, pack_runtime: Any):
    runtime, answers = files("writes", answer="always")
    write(runtime)
    assert "tool:write_file" in yaml.safe_load((isolated_home / "config.yaml").read_text())["command_allowlist"]
    later = pack_runtime(yaml.safe_load((isolated_home / "config.yaml").read_text()), FILE)
    later.set_policy("writes")
    never = Answers("deny")
    later.set_approval_callback(never)
    assert "bytes_written" in write(later, "again.txt")
    assert never.requests == [] and answers.tools == ["write_file"]


def test_an_unanswered_request_blocks_the_call(files: Any, workspace: Path):
    release = threading.Event()
    runtime, _ = files("writes", approvals={"timeout": 0.2})

    def hangs(request: ApprovalRequest) -> str:
        release.wait(30)
        return "once"

    runtime.set_approval_callback(hangs)
    try:
        assert "not approved" in error_of(write(runtime))
    finally:
        release.set()
    assert not (workspace / "notes.txt").exists()


def test_approvals_mode_deny_refuses_without_asking_and_approve_runs_without_asking(files: Any, workspace: Path):
    runtime, answers = files("writes", approvals={"mode": "deny"})
    assert "not approved" in error_of(write(runtime))
    runtime, answers = files("writes", approvals={"mode": "approve"})
    assert "bytes_written" in write(runtime)
    assert answers.requests == []


def test_a_callback_that_raises_refuses(files: Any):
    runtime, _ = files("writes")

    def broken(request: ApprovalRequest) -> str:
        raise RuntimeError("the UI is gone")

    runtime.set_approval_callback(broken)
    assert "not approved" in error_of(write(runtime))


def test_a_blocked_call_reaches_post_tool_call_as_blocked_and_a_hook_that_blocks_first_asks_nothing(files: Any):
    runtime, answers = files("writes", answer="deny")
    seen: list[tuple[str, str]] = []
    context = runtime.context("observer")
    context.register_hook("post_tool_call", lambda tool_name, status, **kw: seen.append((tool_name, status)))
    write(runtime)
    assert seen == [("write_file", "blocked")] and answers.tools == ["write_file"]

    guard = runtime.context("guard")
    guard.register_hook("pre_tool_call", lambda tool_name, **kw: {"action": "block", "message": "frozen"}
                        if tool_name == "write_file" else None)
    assert error_of(write(runtime)) == "frozen"
    assert answers.tools == ["write_file"]  # the hook refused first: the user was not asked


def test_the_question_shows_the_arguments_a_hook_rewrote(files: Any, workspace: Path):
    runtime, answers = files("writes")
    runtime.context("rewriter").register_hook(
        "pre_tool_call", lambda args, **kw: {"action": "modify", "args": {**args, "path": "rewritten.txt"}})
    write(runtime)
    assert answers.requests[0].args["path"] == "rewritten.txt" and (workspace / "rewritten.txt").exists()


def test_calls_that_ask_run_one_at_a_time_in_a_batch(files: Any, workspace: Path):
    runtime, _ = files("writes")
    answers = Answers("once", hold=0.05)
    runtime.set_approval_callback(answers)
    calls = [{"id": f"c{i}", "type": "function",
              "function": {"name": "write_file", "arguments": json.dumps({"path": f"f{i}.txt", "content": "x"})}}
             for i in range(4)]
    results = runtime.run_tool_calls(calls, session_id="s")
    assert all("bytes_written" in result for result in results)
    assert len(answers.requests) == 4 and answers.most_at_once == 1


def test_writes_holds_on_the_async_path_too(files: Any, workspace: Path):
    runtime, answers = files("writes", answer="deny")

    async def main() -> tuple[str, str]:
        blocked = await runtime.ahandle_function_call("write_file", {"path": "a.txt", "content": "x"})
        read = await runtime.ahandle_function_call("read_file", {"path": "missing.txt"})
        return blocked, read

    blocked, read = anyio.run(main)
    assert "approval policy 'writes'" in error_of(blocked) and not (workspace / "a.txt").exists()
    assert "approval" not in read and answers.tools == ["write_file"]
    answers.answer = "once"
    replies = anyio.run(runtime.aanswer_tool_calls, [{"name": "write_file",
                                                      "arguments": {"path": "b.txt", "content": "y"}}])
    assert (workspace / "b.txt").read_text() == "y" and len(replies) == 1


def test_a_tool_without_annotations_asks_under_writes(files: Any):
    runtime, answers = files("writes")
    runtime.register_tool("unsaid", "host", {"description": "x"}, lambda args, **kw: "ran")
    runtime.register_tool("looks", "host", {"description": "x"}, lambda args, **kw: "looked",
                          annotations={"read_only": True})
    assert runtime.handle_function_call("unsaid", {}) == "ran"
    assert runtime.handle_function_call("looks", {}) == "looked"
    assert answers.tools == ["unsaid"]


# -- the terminal under writes ----------------------------------------------------------------------------


def test_an_approved_terminal_call_is_not_asked_about_again_for_its_dangerous_command(pack_runtime: Any,
                                                                                       workspace: Path):
    runtime = pack_runtime({}, TERMINAL)
    answers = Answers("once")
    runtime.set_approval_callback(answers)
    (workspace / "junk").mkdir()
    runtime.handle_function_call("terminal", {"command": "rm -r junk"})  # dangerous: the rule asks
    assert [request.rule_key for request in answers.requests] == ["recursive_delete"]
    assert not (workspace / "junk").exists()

    runtime.set_policy("writes")
    (workspace / "junk").mkdir()
    runtime.handle_function_call("terminal", {"command": "rm -r junk"})
    # one question, which showed the whole command: the rule does not ask it again
    assert [request.rule_key for request in answers.requests] == ["recursive_delete", "tool:terminal"]
    assert not (workspace / "junk").exists()


def test_a_session_approval_of_the_terminal_does_not_approve_its_dangerous_commands(pack_runtime: Any,
                                                                                     workspace: Path):
    runtime = pack_runtime({"approvals": {"policy": "writes"}}, TERMINAL)
    answers = Answers("session")
    runtime.set_approval_callback(answers)
    assert "hi" in runtime.handle_function_call("terminal", {"command": "echo hi"}, session_id="s")
    (workspace / "junk").mkdir()
    answers.answer = "deny"
    blocked = runtime.handle_function_call("terminal", {"command": "rm -r junk"}, session_id="s")
    assert "recursive_delete" in blocked and (workspace / "junk").exists()
    assert [request.rule_key for request in answers.requests] == ["tool:terminal", "recursive_delete"]


# -- read-only --------------------------------------------------------------------------------------------


def test_read_only_offers_and_runs_only_read_only_tools(files: Any, workspace: Path):
    runtime, answers = files("read-only")
    runtime.register_tool("unsaid", "host", {"description": "x"}, lambda args, **kw: "ran")
    offered = [d["function"]["name"] for d in runtime.get_tool_definitions()]
    assert offered == ["read_file", "search_files"]
    assert [d["name"] for d in runtime.get_tool_definitions(format="anthropic")] == offered
    for name, args in (("write_file", {"path": "a.txt", "content": "x"}), ("unsaid", {}),
                       ("patch", {"path": "a.txt", "old_string": "a", "new_string": "b"})):
        message = error_of(runtime.handle_function_call(name, args))
        assert f"'{name}' is refused by the approval policy 'read-only'" in message
    assert not (workspace / "a.txt").exists() and answers.requests == []
    (workspace / "a.txt").write_text("kept\n")
    assert "kept" in runtime.handle_function_call("read_file", {"path": "a.txt"})
    assert runtime.select_tools()[0] == offered
    assert runtime.policy == "read-only"


def test_read_only_refuses_on_every_call_path(files: Any, workspace: Path):
    runtime, _ = files("read-only")
    call = {"name": "write_file", "arguments": {"path": "a.txt", "content": "x"}}
    results = [*runtime.run_tool_calls([call]), json.dumps(runtime.answer_tool_calls([call])[0]),
               anyio.run(runtime.ahandle_function_call, "write_file", call["arguments"]),
               *anyio.run(runtime.arun_tool_calls, [call])]
    assert all("approval policy 'read-only'" in result for result in results), results
    assert not (workspace / "a.txt").exists()


def test_the_policy_comes_from_config_yaml_and_a_runtime_policy_overrides_it(pack_runtime: Any,
                                                                             isolated_home: Path):
    runtime = pack_runtime({"approvals": {"policy": "read-only"}}, FILE)
    assert runtime.policy == "read-only" and "write_file" not in runtime.select_tools()[0]
    runtime.set_policy("dangerous")
    assert runtime.policy == "dangerous" and "write_file" in runtime.select_tools()[0]
    runtime.set_policy(None)
    assert runtime.policy == "read-only"
    assert Runtime(home=isolated_home, entry_points=(), policy="writes").policy == "writes"


def test_dangerous_is_the_default_and_asks_nothing_of_file_tools(files: Any):
    runtime, answers = files()
    assert runtime.policy == "dangerous"
    assert "bytes_written" in write(runtime) and answers.requests == []


def test_an_unknown_policy_is_a_clear_error(isolated_home: Path):
    with pytest.raises(PolicyError, match="unknown approval policy 'careful'; the policies are 'dangerous', "
                                          "'writes', 'read-only'"):
        Runtime(home=isolated_home, entry_points=(), policy="careful")
    (isolated_home / "config.yaml").write_text("approvals:\n  policy: readonly\n")
    with pytest.raises(ConfigError, match=r"config\.yaml.*approvals\.policy"):
        Runtime(home=isolated_home, entry_points=()).get_tool_definitions()

"""Several runtimes in one process: each reads and writes only its own home, whatever ``HERMES_HOME`` says."""

from __future__ import annotations

import json
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
import yaml

from hermes_core import ApprovalRequest, Runtime, set_approval_callback

support = sys.modules["hermes_mcp_test_support"]  # loaded by conftest.py

TERMINAL = EntryPoint("terminal", "hermes_plugin_terminal", "hermes_agent.plugins")

#: A user plugin: a tool answering with the home's name, a guard asking approval for it, and a recording hook.
PLUGIN = '''
import json

SEEN = []


def register(ctx):
    ctx.register_tool("whoami", "homes", {"description": "Say which home this is",
                                          "parameters": {"type": "object", "properties": {}}},
                      lambda args, **kw: json.dumps({"home": "{name}"}))
    ctx.register_tool("big", "homes", {"description": "A large result",
                                       "parameters": {"type": "object", "properties": {}}},
                      lambda args, **kw: "x" * 3000)
    ctx.register_tool("guarded", "homes", {"description": "Needs approval",
                                           "parameters": {"type": "object", "properties": {}}},
                      lambda args, **kw: "ran")
    ctx.register_tool("only_{name}", "homes", {"description": "Exists in {name} alone",
                                               "parameters": {"type": "object", "properties": {}}},
                      lambda args, **kw: "ok")
    ctx.register_hook("pre_tool_call", guard)
    ctx.register_hook("post_tool_call", lambda tool_name, **kw: SEEN.append(tool_name))


def guard(tool_name, **kw):
    if tool_name == "guarded":
        return dict(action="approve", message="run guarded?", rule_key="guarded_rule")
    return None
'''


def make_home(root: Path, name: str, config: dict) -> Path:
    home = root / name
    plugin = home / "plugins" / "homeplugin"
    plugin.mkdir(parents=True)
    (plugin / "plugin.yaml").write_text(f"name: homeplugin\nversion: '1.0'\ndescription: the plugin of {name}\n")
    (plugin / "__init__.py").write_text(PLUGIN.replace("{name}", name))
    (home / "config.yaml").write_text(yaml.safe_dump(config))
    return home


@pytest.fixture
def homes(tmp_path, monkeypatch):
    """Homes A and B for two runtimes, and C, the one ``HERMES_HOME`` names (with a plugin of its own)."""
    a = make_home(tmp_path, "alpha", {
        "command_allowlist": ["recursive_delete"], "tool_output": {"max_result_size_chars": 1000},
        "toolsets": ["homes"], "mcp_servers": {"probe": support.fault_server()}})
    b = make_home(tmp_path, "beta", {"mcp_servers": {"probe": support.fault_server()}})
    c = make_home(tmp_path, "gamma", {"command_allowlist": ["recursive_delete"]})
    monkeypatch.setenv("HERMES_HOME", str(c))
    return a, b, c


@pytest.fixture
def runtimes(homes, tmp_path):
    a, b, _ = homes
    work_a, work_b = tmp_path / "work-a", tmp_path / "work-b"
    for work in (work_a, work_b):
        (work / "victim" / "inner").mkdir(parents=True)
    first = Runtime(home=a, workspace=work_a, entry_points=[TERMINAL])
    second = Runtime(home=b, workspace=work_b, entry_points=[TERMINAL])
    for runtime in (first, second):
        runtime.load_plugins()
        runtime.start_mcp()  # loading lists from the cache; connect now
    yield first, second
    for runtime in (first, second):
        runtime.close()


def call(runtime: Runtime, tool: str, session: str | None = None, **args) -> str:
    return runtime.handle_function_call(tool, args, session_id=session)


def test_each_runtime_sees_only_its_own_user_plugins_and_toolsets(runtimes):
    first, second = runtimes
    assert json.loads(call(first, "whoami")) == {"home": "alpha"}
    assert json.loads(call(second, "whoami")) == {"home": "beta"}
    assert "only_alpha" in first.registry and "only_alpha" not in second.registry
    assert "only_gamma" not in first.registry and "only_gamma" not in second.registry
    assert first.resolve_toolset("homes") == ["whoami", "big", "guarded", "only_alpha"]
    assert first.config.toolsets == ["homes"] and second.config.toolsets is None
    assert first.plugin("homeplugin").path != second.plugin("homeplugin").path


def test_a_tool_call_in_one_runtime_fires_no_hook_of_the_other(runtimes):
    first, second = runtimes
    first_seen = sys.modules[first.plugin("homeplugin").module].SEEN
    second_seen = sys.modules[second.plugin("homeplugin").module].SEEN
    assert first_seen is not second_seen
    call(first, "whoami")
    call(first, "only_alpha")
    assert first_seen == ["whoami", "only_alpha"] and second_seen == []
    call(second, "whoami")
    assert first_seen == ["whoami", "only_alpha"] and second_seen == ["whoami"]


def test_each_runtime_honours_its_own_command_allowlist(runtimes, tmp_path):
    first, second = runtimes
    asked: list[ApprovalRequest] = []
    previous = set_approval_callback(lambda request: asked.append(request) or "deny")
    try:
        assert json.loads(call(first, "terminal", command="rm -r victim"))["exit_code"] == 0
        assert "was not approved" in json.loads(call(second, "terminal", command="rm -r victim"))["error"]
    finally:
        set_approval_callback(previous)
    assert not (tmp_path / "work-a" / "victim").exists() and (tmp_path / "work-b" / "victim").exists()
    assert [request.rule_key for request in asked] == ["recursive_delete"]


def test_session_approvals_belong_to_one_runtime_and_one_session(runtimes):
    first, second = runtimes
    first_asked: list[str | None] = []
    second_asked: list[str | None] = []
    first.set_approval_callback(lambda request: first_asked.append(request.session_id) or "session")
    second.set_approval_callback(lambda request: second_asked.append(request.session_id) or "deny")

    assert call(first, "guarded", session="s1") == "ran"
    assert call(first, "guarded", session="s1") == "ran"
    assert first_asked == ["s1"]
    assert "not approved" in call(second, "guarded", session="s1")
    assert second_asked == ["s1"]
    assert call(first, "guarded", session="s2") == "ran" and first_asked == ["s1", "s2"]


def test_a_call_without_a_session_never_inherits_a_session_approval(runtimes):
    first, _ = runtimes
    answers = iter(["session", "deny"])
    first.set_approval_callback(lambda request: next(answers))
    assert call(first, "guarded", session=None) == "ran"
    assert "not approved" in call(first, "guarded", session=None)


def test_a_runtime_callback_wins_and_the_process_wide_one_answers_the_rest(runtimes):
    first, second = runtimes
    first.set_approval_callback(lambda request: "once")
    previous = set_approval_callback(lambda request: "deny")
    try:
        assert call(first, "guarded", session="s") == "ran"
        assert "not approved" in call(second, "guarded", session="s")
    finally:
        set_approval_callback(previous)


def test_results_caches_and_mcp_logs_stay_in_each_home(runtimes, homes):
    first, second = runtimes
    a, b, c = homes
    saved = call(first, "big")
    assert "more than its budget of 1,000" in saved and str(a / "results") in saved
    assert len(call(second, "big")) == 3000  # B keeps the default budget
    assert list((a / "results").iterdir()) and not (b / "results").exists()
    for home in (a, b):
        assert list((home / "cache").glob("discovery-*.json"))
        assert (home / "logs" / "mcp-probe.log").exists()
    assert not (c / "cache").exists() and not (c / "logs").exists() and not (c / "results").exists()
    assert first.mcp is not None and second.mcp is not None and first.mcp is not second.mcp
    assert "mcp__probe__echo" in first.registry and "mcp__probe__echo" in second.registry


def test_each_runtime_runs_its_own_copy_of_a_plugin_with_the_same_id(runtimes):
    first, second = runtimes
    assert first.plugin("homeplugin").module != second.plugin("homeplugin").module
    assert sys.modules[first.plugin("homeplugin").module].__file__.startswith(first.plugin("homeplugin").path)


"""The ``tools.delegate_tool`` shim: a plugin that patches Hermes Agent's delegation functions (as
hermes-delegate-routing does) changes the ``delegate_task`` calls of the runtime that loaded it, and only those;
``hermes_cli.model_switch`` resolves a model on the current endpoint."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from hermes_core import Runtime
from hermes_core.plugins.discovery import candidate_from_module

fakes = sys.modules["hermes_fake_provider"]  # loaded by conftest.py

ROUTER = '''
import functools
import tools.delegate_tool as dt
from hermes_cli.model_switch import parse_model_flags, switch_model

SEEN = []


def register(ctx):
    if getattr(dt, "_ROUTER_PATCHED", False):
        return
    original_delegate, original_build = dt.delegate_task, dt._build_child_agent

    @functools.wraps(original_delegate)
    def delegate_task(goal=None, context=None, tasks=None, max_iterations=None, role=None, background=None,
                      parent_agent=None, **extra):
        SEEN.append(["delegate_task", parent_agent.model, parent_agent._delegate_depth])
        return original_delegate(goal=goal, context=context, tasks=tasks, max_iterations=max_iterations, role=role,
                                 background=background, parent_agent=parent_agent, **extra)

    def build(task_index, goal, context, toolsets, model, max_iterations, task_count, parent_agent, **rest):
        wanted, provider = parse_model_flags(goal.partition(" on ")[2])[:2]
        result = switch_model(wanted, "", parent_agent.model, explicit_provider=provider)
        SEEN.append(["build", task_index, result.success, result.new_model or result.error_message])
        return original_build(task_index, goal, context, toolsets, result.new_model or model, max_iterations,
                              task_count, parent_agent, **rest)

    dt.delegate_task, dt._build_child_agent = delegate_task, build
    dt._ROUTER_PATCHED = True
'''


@pytest.fixture
def router(isolated_home: Path) -> Path:
    folder = isolated_home / "plugins" / "router"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(ROUTER)
    return folder


def runtime_with(home: Path, workspace: Path, fake: Any, *, router: bool) -> Runtime:
    (home / "config.yaml").write_text(json.dumps({"delegation": {"base_url": f"{fake.url}/v1", "model": "default",
                                                                 "api_key_env": None}}))
    runtime = Runtime(home=home, workspace=workspace, entry_points=(),
                      environ={} if router else {"HERMES_LOAD_PLUGINS": ""})
    runtime.load_plugins()
    for module, plugin_id in (("hermes_plugin_agent", "agent"), ("hermes_plugin_file", "file")):
        runtime.load_candidate(candidate_from_module(module, plugin_id))
    return runtime


def test_a_plugin_that_patches_the_shim_routes_its_runtimes_tasks_and_no_other(router, isolated_home, tmp_path):
    with fakes.fake_provider([]) as fake:
        routed = runtime_with(isolated_home, tmp_path, fake, router=True)
        assert routed.plugin("router").state == "loaded", routed.plugin("router").reason
        report = json.loads(routed.handle_function_call("delegate_task", {"tasks": [
            {"goal": "Summarise on small-model"}, {"goal": "Summarise"}]}))
        asked = sorted(body["model"] for body in fake.bodies("/chat/completions"))
        seen = sys.modules["hermes_plugins.router"].SEEN
        other = runtime_with(isolated_home, tmp_path, fake, router=False)  # the plugin is not loaded there
        json.loads(other.handle_function_call("delegate_task", {"goal": "Summarise on small-model"}))
        asked_by_other = fake.bodies("/chat/completions")[-1]["model"]
    assert [result["task_index"] for result in report["results"]] == [0, 1]
    assert asked == ["default", "small-model"]
    assert seen == [["delegate_task", "default", 0], ["build", 0, True, "small-model"], ["build", 1, True, "default"]]
    assert routed.contributions.of_plugin("router")["middleware"] == ["tool_execution"]
    assert asked_by_other == "default"


def test_switching_provider_is_refused_and_flags_are_parsed():
    from hermes_core.plugins.compat.hermes_cli_model_switch import parse_model_flags, switch_model

    assert parse_model_flags("sonnet --provider anthropic --global") == ("sonnet", "anthropic", True, False, False)
    assert parse_model_flags("—provider local") == ("", "local", False, False, False)
    refused = switch_model("sonnet", "", "default", explicit_provider="anthropic")
    assert not refused.success and "cannot switch to provider 'anthropic'" in refused.error_message
    kept = switch_model("", "", "default", current_base_url="http://127.0.0.1:1/v1")
    assert (kept.success, kept.new_model, kept.base_url) == (True, "default", "http://127.0.0.1:1/v1")


def test_an_unpatched_shim_leaves_delegate_task_alone(isolated_home, tmp_path):
    folder = isolated_home / "plugins" / "reader"
    folder.mkdir(parents=True)
    (folder / "__init__.py").write_text(
        "import tools.delegate_tool as dt\n\ndef register(ctx):\n    ctx.register_tool(name='blocked', "
        "toolset='x', schema={'name': 'blocked', 'description': 'd', 'parameters': {'type': 'object'}}, "
        "handler=lambda args, **kw: ','.join(sorted(dt.DELEGATE_BLOCKED_TOOLS)))\n")
    with fakes.fake_provider([]) as fake:
        runtime = runtime_with(isolated_home, tmp_path, fake, router=True)
    assert runtime.plugin("reader").state == "loaded"
    assert runtime.handle_function_call("blocked", {}) == \
        "clarify,cronjob,delegate_task,execute_code,memory,send_message"
    assert runtime.contributions.of_plugin("reader")["middleware"] == []

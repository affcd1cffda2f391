"""ToolRegistry: conflict policy, availability checks, generations and thread safety."""

from __future__ import annotations

import json
import threading

import pytest

from hermes_core import HermesHome, Runtime, ToolEntry, ToolRegistry
from hermes_core.plugin import tool_entry
from hermes_core.tools.registry import Availability, Requirements


def echo(args, **kwargs):
    return json.dumps(args)


def entry(name="t", toolset="a", plugin=None, **options) -> ToolEntry:
    return ToolEntry(name=name, toolset=toolset, schema={"description": name}, handler=echo, plugin=plugin,
                     **options)


def test_same_toolset_replaces_the_earlier_tool():
    registry = ToolRegistry()
    first, second = entry(), entry()
    assert registry.register(first) and registry.register(second)
    assert registry.get("t") is second
    assert registry.refusals == []


def test_other_toolset_is_refused_and_the_refusal_recorded():
    registry = ToolRegistry()
    registry.register(entry(toolset="a", plugin="one"))
    assert not registry.register(entry(toolset="b", plugin="two"))
    assert registry.get("t").toolset == "a"
    [refusal] = registry.refusals
    assert (refusal.tool, refusal.plugin, refusal.existing_plugin) == ("t", "two", "one")
    assert "toolset 'a'" in refusal.reason


def test_override_without_grant_is_refused():
    registry = ToolRegistry()
    registry.register(entry(toolset="a"))
    assert not registry.register(entry(toolset="b", plugin="two"), override=True, override_granted=False)
    assert "allow_tool_override" in registry.refusals[0].reason
    assert registry.get("t").toolset == "a"


def test_override_with_grant_replaces_across_toolsets():
    registry = ToolRegistry()
    registry.register(entry(toolset="a"))
    assert registry.register(entry(toolset="b"), override=True, override_granted=True)
    assert registry.get("t").toolset == "b"


def test_grant_comes_from_plugin_entries_in_config(isolated_home):
    HermesHome.from_env().edit_config(
        lambda doc: doc.update({"plugins": {"entries": {"granted": {"allow_tool_override": True}}}}))
    runtime = Runtime()
    runtime.register_tool("t", "a", {"description": "x"}, echo)
    assert not runtime.context("plain").register_tool("t", "b", {}, echo, override=True)
    assert runtime.context("granted").register_tool("t", "b", {}, echo, override=True)
    assert runtime.registry.get("t").plugin == "granted"


def test_check_fn_raising_means_unavailable_with_its_message():
    def broken():
        raise RuntimeError("no API key configured")

    registry = ToolRegistry()
    registry.register(entry(check_fn=broken))
    availability = registry.check("t")
    assert not availability.available and availability.reason == "no API key configured"
    assert registry.get_definitions() == []


def test_check_fn_returning_false_means_unavailable():
    registry = ToolRegistry()
    registry.register(entry(check_fn=lambda: False))
    assert not registry.check("t").available
    assert not registry.is_toolset_available("a")


def test_check_fn_result_is_cached_until_invalidated():
    calls = []
    registry = ToolRegistry(check_ttl=3600)
    registry.register(entry(check_fn=lambda: calls.append(1) or True))
    for _ in range(3):
        assert registry.check("t").available
    assert len(calls) == 1
    registry.invalidate_checks()
    registry.check("t")
    assert len(calls) == 2


def test_unset_requires_env_makes_a_tool_unavailable_naming_the_variable(monkeypatch):
    monkeypatch.delenv("HERMES_TEST_TOKEN", raising=False)
    monkeypatch.setenv("HERMES_TEST_URL", "https://example.org")
    registry = ToolRegistry()
    registry.register(entry(requires_env=["HERMES_TEST_URL", {"name": "HERMES_TEST_TOKEN", "secret": True}]))
    assert registry.check("t").reason == "environment variable HERMES_TEST_TOKEN is not set"
    assert registry.get_definitions() == []
    monkeypatch.setenv("HERMES_TEST_TOKEN", "t")
    registry.invalidate_checks()
    assert registry.check("t").available


def _no_token() -> bool:
    raise RuntimeError("run `t login` first")


@pytest.mark.parametrize(("check", "expected"), [
    (lambda: True, Availability(True, "")),
    # nothing better from the plugin: the variable is named, and a call goes to the handler for its own hint
    (lambda: False, Availability(False, "environment variable HERMES_TEST_TOKEN is not set", handler_decides=True)),
    (_no_token, Availability(False, "run `t login` first")),  # the plugin's own message: a refusal with it
])
def test_a_check_fn_has_the_last_word_over_requires_env(monkeypatch, check, expected):
    monkeypatch.delenv("HERMES_TEST_TOKEN", raising=False)
    registry = ToolRegistry()
    registry.register(entry(requires_env=["HERMES_TEST_TOKEN"], check_fn=check))
    assert registry.check("t") == expected


def test_requirements_name_what_is_missing(monkeypatch):
    monkeypatch.delenv("HERMES_TEST_MISSING_VAR", raising=False)
    registry = ToolRegistry()
    registry.register(entry(requirements=Requirements(env=("HERMES_TEST_MISSING_VAR",), bins=("no-such-binary-x",),
                                                      modules=("no_such_module_x",))))
    reason = registry.check("t").reason
    assert "HERMES_TEST_MISSING_VAR" in reason and "no-such-binary-x" in reason and "no_such_module_x" in reason


def test_generation_changes_with_the_set_of_tools():
    registry = ToolRegistry()
    start = registry.generation
    registry.register(entry())
    registry.deregister("t")
    registry.deregister("t")
    assert registry.generation == start + 2


def test_a_registration_returns_its_undo_which_puts_back_what_it_replaced():
    registry = ToolRegistry()
    first, second = entry("a", plugin="p"), entry("a", plugin="p")
    remove_first = registry.register(first)
    undo = registry.register(second)
    assert undo is not None and registry.get("a") is second
    undo()
    assert registry.get("a") is first
    assert remove_first is not None
    remove_first()
    assert registry.names() == []


def test_a_refused_registration_returns_no_undo_and_a_stale_undo_changes_nothing():
    registry = ToolRegistry()
    undo = registry.register(entry("a", plugin="p"))
    assert registry.register(entry("a", plugin="q")) is None
    newer = entry("a", plugin="p")
    registry.register(newer)
    assert undo is not None
    undo()  # "a" was replaced since: the undo leaves the newer entry alone
    assert registry.get("a") is newer


def test_concurrent_dispatch_while_registering_loses_nothing():
    runtime = Runtime()
    runtime.register_tool("stable", "core", {"description": "x"}, lambda args, **kw: "ok")
    errors: list[str] = []
    stop = threading.Event()

    def caller():
        while not stop.is_set():
            result = runtime.handle_function_call("stable", {})
            if result != "ok":
                errors.append(result)

    def churn():
        for i in range(300):
            runtime.register_tool(f"tmp{i}", "churn", {"description": "x"}, lambda args, **kw: "t")
            if i % 2:
                runtime.registry.deregister(f"tmp{i}")

    callers = [threading.Thread(target=caller) for _ in range(8)]
    for thread in callers:
        thread.start()
    churner = threading.Thread(target=churn)
    churner.start()
    churner.join()
    stop.set()
    for thread in callers:
        thread.join()
    assert errors == []
    assert sorted(runtime.registry.toolsets()["churn"]) == sorted(f"tmp{i}" for i in range(0, 300, 2))


def test_tool_entry_schema_is_normalised_for_the_model():
    made = tool_entry("ok", "a", echo, description="from field")
    assert made.schema == {"name": "ok", "description": "from field",
                           "parameters": {"type": "object", "properties": {}}}
    assert made.definition() == {"type": "function", "function": made.schema}


def test_dispatch_calls_the_handler_directly_without_hooks():
    registry = ToolRegistry()
    registry.register(entry("plain"))
    registry.register(ToolEntry(name="mapping", toolset="a", schema={}, handler=lambda args, **kw: {"n": 1}))
    assert registry.dispatch("plain", {"x": 1}, task_id="t") == '{"x": 1}'
    assert registry.dispatch("mapping", {}) == '{"n": 1}'
    with pytest.raises(KeyError):
        registry.dispatch("missing", {})


def test_a_check_fn_runs_in_its_plugins_tool_context(isolated_home):
    from hermes_core.plugin import tool_context

    HermesHome.from_env().edit_config(lambda doc: doc.update({"plugins": {"entries": {"checked": {"enforce": True}}}}))
    runtime = Runtime()
    runtime.context("checked").register_tool("t", "a", {"description": "x"}, echo,
                                             check_fn=lambda: tool_context().settings["enforce"])
    assert runtime.registry.check("t").available

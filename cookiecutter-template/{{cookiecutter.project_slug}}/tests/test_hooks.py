"""The pre_tool_call hook: on its own, and on the calls Hermes makes."""

from __future__ import annotations

from {{ cookiecutter.package_name }}.hooks import tidy_greetings

PACKAGE = "{{ cookiecutter.package_name }}"
TOOL = "{{ cookiecutter.tool_name }}"


def test_blocked_names_are_refused(load_hermes_plugin, call_tool) -> None:
    load_hermes_plugin(PACKAGE)

    assert "does not greet 'Admin'" in call_tool(TOOL, name="Admin ")["error"]


def test_whitespace_is_trimmed_before_the_handler_runs(load_hermes_plugin, call_tool) -> None:
    load_hermes_plugin(PACKAGE)

    assert call_tool(TOOL, name="  Ada ") == {"greeting": "Hello, Ada."}


def test_other_tools_calls_pass_untouched() -> None:
    assert tidy_greetings(tool_name="another_tool", args={"name": "admin"}) is None


def test_an_ordinary_call_passes_untouched() -> None:
    assert tidy_greetings(tool_name=TOOL, args={"name": "Ada"}, task_id="t1") is None

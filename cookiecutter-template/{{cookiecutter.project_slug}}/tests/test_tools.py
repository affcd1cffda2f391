"""The handler on its own: called the way Hermes calls it, with the arguments as a dict."""

from __future__ import annotations

import json
from typing import Any

from {{ cookiecutter.package_name }}.tools import {{ cookiecutter.tool_name }}


def call(args: dict[str, Any], **context: Any) -> Any:
    result = {{ cookiecutter.tool_name }}(args, **context)
    assert isinstance(result, str)  # a handler returns JSON text
    return json.loads(result)


def test_greets_by_name() -> None:
    assert call({"name": "Ada"}) == {"greeting": "Hello, Ada."}


def test_excited_greeting_ends_with_an_exclamation_mark() -> None:
    assert call({"name": "Ada", "excited": True}) == {"greeting": "Hello, Ada!"}


def test_empty_name_is_an_error_result_not_an_exception() -> None:
    assert "error" in call({"name": " "}, task_id="t1", session_id=None)

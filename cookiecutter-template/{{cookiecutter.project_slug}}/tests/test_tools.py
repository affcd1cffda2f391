"""The tool functions on their own: called directly, as any Python function."""

from __future__ import annotations

import pytest
from hermes_core.plugin import ToolError

from {{ cookiecutter.package_name }}.tools import {{ cookiecutter.tool_name }}


def test_greets_by_name() -> None:
    assert {{ cookiecutter.tool_name }}(name="Ada") == {"greeting": "Hello, Ada."}


def test_excited_greeting_ends_with_an_exclamation_mark() -> None:
    assert {{ cookiecutter.tool_name }}(name="Ada", excited=True) == {"greeting": "Hello, Ada!"}


def test_empty_name_fails_the_call_with_a_message_for_the_model() -> None:
    with pytest.raises(ToolError, match="name is empty"):
        {{ cookiecutter.tool_name }}(name=" ")

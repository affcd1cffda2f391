"""The plugin's tools: typed functions marked with ``@tool``.

The model sees each tool's name, its docstring and a JSON Schema of its parameters, made from the type
hints (``Field(description=...)`` describes a parameter). ``hermes plugins compile`` writes them into
plugin.yaml, which Hermes reads without importing this module; run it after changing a signature or a
docstring (``hermes plugins validate .`` says when plugin.yaml is out of date). Hermes checks the model's
arguments against the types before the call and sends the return value back as JSON text; raise
``ToolError`` to fail a call with a message for the model.
"""

from __future__ import annotations

from typing import Annotated

from hermes_core.plugin import ToolError, tool
from pydantic import Field


@tool(toolset="{{ cookiecutter.toolset }}", emoji="👋", annotations={"read_only": True})
def {{ cookiecutter.tool_name }}(
    name: Annotated[str, Field(description="Who to greet.")],
    excited: Annotated[bool, Field(description="End the greeting with an exclamation mark.")] = False,
) -> dict[str, str]:
    """Greet someone by name. Returns JSON {"greeting": "Hello, NAME."}."""
    if not name.strip():
        raise ToolError("name is empty: say who to greet")
    return {"greeting": f"Hello, {name}{'!' if excited else '.'}"}

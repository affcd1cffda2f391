"""Handlers of the tools declared in plugin.yaml: ``handler(args, **kwargs) -> str`` (JSON text).

Hermes checks ``args`` against the tool's JSON Schema before calling, and passes the call's context
(``task_id``, ``session_id``, ...) as keyword arguments. Report failures as ``{"error": ...}``; an
exception would be reported too, but less helpfully.
"""

from __future__ import annotations

import json
from typing import Any


def {{ cookiecutter.tool_name }}(args: dict[str, Any], **kwargs: Any) -> str:
    """Greet ``args["name"]``."""
    name = args["name"]
    if not name.strip():
        return json.dumps({"error": "name is empty: say who to greet"})
    ending = "!" if args.get("excited") else "."
    return json.dumps({"greeting": f"Hello, {name}{ending}"})

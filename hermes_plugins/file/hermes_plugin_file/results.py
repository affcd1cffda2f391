"""How the file tools report: a handler returns a dict, user errors become ``{"error": ...}``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from hermes_core.plugin import tool_error

from .workspace import WorkspacePathError

ToolBody = Callable[[dict[str, Any]], dict[str, Any]]
Handler = Callable[..., str]


class FileToolError(Exception):
    """A user error, reported to the model as ``{"error": message}``."""


def file_tool(body: ToolBody) -> Handler:
    """Wrap ``body(args) -> dict`` as a handler ``(args, **kwargs) -> str``; user errors become JSON."""

    def handler(args: dict[str, Any], **kwargs: Any) -> str:
        try:
            return json.dumps(body(args), ensure_ascii=False)
        except (FileToolError, WorkspacePathError) as exc:
            return tool_error(str(exc))
        except OSError as exc:
            reason = exc.strerror or str(exc)
            return tool_error(f"{body.__name__}: {args.get('path', '.')!r}: {reason}")

    # Name and doc only: functools.wraps would set __wrapped__ and hide **kwargs from inspect.signature.
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(handler, attribute, getattr(body, attribute))
    return handler

"""A tool listing survives one bad tool: each tool of a ``tools/list`` answer is validated on its own as it
arrives, so a malformed definition (an ``inputSchema`` that is not a mapping) takes out that tool, named with
the reason, instead of failing the validation of the whole listing and with it the server."""

from __future__ import annotations

from typing import Any

import mcp.types as types
from mcp_types.methods import validate_server_result
from pydantic import ValidationError

__all__ = ["screen_tool_listing"]

_FALLBACK_VERSION = "2025-11-25"  # what the SDK validates against before a version is negotiated
#: How much of a validation error a rejected tool's reason keeps.
REASON_CHARS = 200


def screen_tool_listing(message: Any, rejected: dict[str, str], version: str | None) -> None:
    """Drop the malformed tools of ``message`` (a received ``SessionMessage``) when it answers ``tools/list``,
    recording each in ``rejected`` (name -> reason); any other message is left as it is. ``version`` is the
    negotiated protocol version, whose rules the SDK checks the listing against."""
    response = getattr(message, "message", None)
    result = getattr(response, "result", None) if isinstance(response, types.JSONRPCResponse) else None
    # only a ListToolsResult has a top-level "tools" list (a call's result holds "content")
    if not isinstance(result, dict) or not isinstance(result.get("tools"), list) or "content" in result:
        return
    kept = []
    for index, tool in enumerate(result["tools"]):
        try:
            types.Tool.model_validate(tool)
            # as the SDK will (its fallback version before the handshake included): the listing with this tool only
            validate_server_result("tools/list", version or _FALLBACK_VERSION, {**result, "tools": [tool]})
        except ValidationError as exc:
            name = tool.get("name") if isinstance(tool, dict) else None
            rejected[name if isinstance(name, str) and name else f"#{index} (no name)"] = \
                f"malformed tool definition: {_reason(exc)}"
            continue
        except (KeyError, ValueError):  # a version or method the SDK has no rules for: it checks nothing either
            pass
        kept.append(tool)
    result["tools"] = kept


def _reason(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error.get("loc", ()) if part not in ("tools", 0)) or "the tool"
    text = f"{where}: {error.get('msg', 'invalid')}"
    return text if len(text) <= REASON_CHARS else text[: REASON_CHARS - 1] + "…"

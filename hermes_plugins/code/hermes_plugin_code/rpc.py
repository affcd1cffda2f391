"""The tool-call server a script talks to: JSON lines over a Unix domain socket.

Each request line is ``{"tool": name, "args": {...}}``; the reply line is ``{"result": "<tool result>"}``
or, when the call is refused, ``{"error": "<why>"}``.
"""

from __future__ import annotations

import json
import logging
import socketserver
import threading
from collections.abc import Callable, Iterable
from types import TracebackType
from typing import Any

logger = logging.getLogger(__name__)

#: Runs one tool call: ``(tool_name, args) -> result string``.
Dispatcher = Callable[[str, dict[str, Any]], str]

_BAD_REQUEST = 'bad request: expected one JSON object per line, {"tool": "<name>", "args": {...}}'


class _ConnectionHandler(socketserver.StreamRequestHandler):
    server: ToolCallServer

    def handle(self) -> None:
        for line in self.rfile:
            if line.strip():
                self.wfile.write(json.dumps(self.server.answer(line)).encode() + b"\n")


class ToolCallServer(socketserver.ThreadingUnixStreamServer):
    """Serves tool calls from one script run on a background thread (use as a context manager)."""

    daemon_threads = True

    def __init__(self, socket_path: str, dispatch: Dispatcher, tool_names: Iterable[str], max_calls: int):
        super().__init__(socket_path, _ConnectionHandler)
        self.dispatch = dispatch
        self.tool_names = frozenset(tool_names)
        self.max_calls = max_calls
        self._calls = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)

    @property
    def tool_calls(self) -> int:
        """How many tool calls were dispatched so far."""
        return self._calls

    def answer(self, line: bytes) -> dict[str, str]:
        """The reply to one request line."""
        try:
            request = json.loads(line)
            tool, args = request["tool"], request.get("args", {})
        except (ValueError, KeyError, TypeError):
            return {"error": _BAD_REQUEST}
        if not isinstance(tool, str) or not isinstance(args, dict):
            return {"error": _BAD_REQUEST}
        if tool not in self.tool_names:
            available = ", ".join(sorted(self.tool_names)) or "none"
            return {"error": f"tool {tool!r} is not available to execute_code (available: {available})"}
        with self._lock:
            if self._calls >= self.max_calls:
                return {"error": f"tool call limit reached: execute_code allows {self.max_calls} per run"}
            self._calls += 1
        try:
            return {"result": self.dispatch(tool, args)}
        except Exception as exc:  # a failing dispatcher must not kill the connection
            logger.exception("execute_code: dispatching %s failed", tool)
            return {"result": json.dumps({"error": f"{tool} failed: {type(exc).__name__}: {exc}"})}

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A script killed mid-call leaves a broken pipe; that is expected, not worth a traceback.
        logger.debug("execute_code: connection error", exc_info=True)

    def __enter__(self) -> ToolCallServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.shutdown()
        self._thread.join()
        self.server_close()

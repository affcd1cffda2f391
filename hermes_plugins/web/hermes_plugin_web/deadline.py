"""One deadline for a whole fetch: connecting, TLS, headers, body and every redirect hop.

httpx's timeouts bound each socket operation, so a server that sends a byte just before each one runs
out can hold a fetch for ever. Here a timer shuts down every connection the fetch opened once its time
is up, which ends whatever read or write is blocked on it at once.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from types import TracebackType
from typing import Any


class FetchDeadline:
    """A context manager: ``trace`` is passed as the httpx ``trace`` extension of every request."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._end = time.monotonic() + seconds
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    @property
    def expired(self) -> bool:
        return self._expired or time.monotonic() >= self._end

    def left(self) -> float:
        """Seconds left; raises :class:`TimeoutError` when there are none."""
        left = self._end - time.monotonic()
        if left <= 0:
            raise TimeoutError(f"the {self.seconds:g} s deadline has passed")
        return left

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """Record the socket of each new connection (httpcore's ``connection.connect_tcp.complete``)."""
        if event != "connection.connect_tcp.complete":
            return
        sock = info["return_value"].get_extra_info("socket")
        with self._lock:
            self._sockets.append(sock)
            if self._expired:
                _shut(sock)

    def _expire(self) -> None:
        with self._lock:
            self._expired = True
            for sock in self._sockets:
                _shut(sock)

    def __enter__(self) -> FetchDeadline:
        self._timer.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._timer.cancel()


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):  # already closed
        sock.shutdown(socket.SHUT_RDWR)

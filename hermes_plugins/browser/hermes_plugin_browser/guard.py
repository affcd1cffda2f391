"""The guard: every URL the browser would load is checked by the core's address policy, twice.

1. Request interception (Playwright's routes) checks each request the page makes, navigations and redirects
   included: the host is resolved there and every address judged; a refused request is aborted before any
   connection and recorded for ``browser_console``.
2. Chromium's connections go through :class:`PinningProxy`, a SOCKS5 proxy of this process that resolves the
   name itself, judges the addresses again and connects to a checked one: a DNS answer that changes between
   the check and Chromium's own lookup (DNS rebinding) reaches nothing, since Chromium does no lookup.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
import struct
from collections.abc import Callable
from typing import Final
from urllib.parse import urlsplit

from hermes_core.plugin import address_refusal

__all__ = ["NAVIGABLE_SCHEMES", "PinningProxy", "check_navigation", "check_request"]

NAVIGABLE_SCHEMES: Final = frozenset({"http", "https"})
#: Schemes a page may load without the network (they carry their content, or name what the page made).
LOCAL_SCHEMES: Final = frozenset({"data", "blob", "about"})
NETWORK_SCHEMES: Final = frozenset({"http", "https", "ws", "wss"})
ALLOW_HINT: Final = "set browser.allow_private: true in config.yaml to allow it"


async def check_navigation(url: str, *, allow_private: bool) -> str | None:
    """Why the model may not open ``url`` (only http and https pages), or None."""
    scheme = urlsplit(url).scheme.lower()
    if scheme not in NAVIGABLE_SCHEMES:
        shown = f"{scheme}: URLs are" if scheme else "a URL without a scheme is"
        return f"refusing {url!r}: {shown} not allowed, only http:// and https://"
    return await check_request(url, allow_private=allow_private)


async def check_request(url: str, *, allow_private: bool) -> str | None:
    """Why the page may not load ``url``, or None; names are resolved here (without blocking the loop)."""
    try:
        parts = urlsplit(url)
        scheme, host, port = parts.scheme.lower(), parts.hostname, parts.port
    except ValueError as exc:
        return f"refusing {url!r}: {exc}"
    if scheme in LOCAL_SCHEMES:
        return None
    if scheme not in NETWORK_SCHEMES:
        return f"refusing {url!r}: {scheme}: URLs are not allowed"
    if not host:
        return f"refusing {url!r}: the URL has no host"
    _, why = await _resolve_and_judge(host, port or (443 if scheme in ("https", "wss") else 80), allow_private)
    return f"refusing {url!r}: {why}" if why else None


async def _resolve_and_judge(host: str, port: int, allow_private: bool) -> tuple[list[str], str | None]:
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        return [], f"cannot resolve {host!r} ({exc})"
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses:
        return [], f"{host!r} resolves to no address"
    for address in addresses:
        found = address_refusal(address, allow_private=allow_private)
        if found:
            what = str(found) if _same_address(address, host) else f"{host} resolves to {found}"
            hint = "never reachable, whatever the configuration" if found.always else ALLOW_HINT
            return [], f"{what}; {hint}"
    return addresses, None


def _same_address(address: str, host: str) -> bool:
    with contextlib.suppress(ValueError):
        return ipaddress.ip_address(host.strip("[]")) == ipaddress.ip_address(address)
    return False


class PinningProxy:
    """A SOCKS5 proxy on 127.0.0.1 for one browser: CONNECT only, the name resolved and judged here, the
    connection made to a checked address. ``on_block(host, port, reason)`` hears each refusal."""

    def __init__(self, allow_private: Callable[[], bool], on_block: Callable[[str, int, str], None],
                 connect_timeout: float) -> None:
        self._allow_private = allow_private
        self._on_block = on_block
        self._connect_timeout = connect_timeout
        self._server: asyncio.base_events.Server | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.port = 0

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and end the open connections."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._connections):
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
            task.add_done_callback(self._connections.discard)
        try:
            target = await asyncio.wait_for(self._handshake(reader, writer), self._connect_timeout)
            if target is not None:
                upstream_reader, upstream_writer = target
                await asyncio.gather(_pipe(reader, upstream_writer), _pipe(upstream_reader, writer))
        except (TimeoutError, OSError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    async def _handshake(self, reader: asyncio.StreamReader,
                         writer: asyncio.StreamWriter) -> tuple[asyncio.StreamReader, asyncio.StreamWriter] | None:
        version, methods = await reader.readexactly(2)
        await reader.readexactly(methods)
        if version != 5:
            return None
        writer.write(b"\x05\x00")  # no authentication
        version, command, _, kind = await reader.readexactly(4)
        if kind == 1:
            host = socket.inet_ntop(socket.AF_INET, await reader.readexactly(4))
        elif kind == 4:
            host = socket.inet_ntop(socket.AF_INET6, await reader.readexactly(16))
        elif kind == 3:
            host = (await reader.readexactly((await reader.readexactly(1))[0])).decode("idna")
        else:
            return None
        (port,) = struct.unpack("!H", await reader.readexactly(2))
        if command != 1:  # CONNECT only
            writer.write(b"\x05\x07\x00\x01" + bytes(6))
            return None
        addresses, why = await _resolve_and_judge(host, port, self._allow_private())
        if why:
            self._on_block(host.lower(), port, why)
            writer.write(b"\x05\x02\x00\x01" + bytes(6))  # connection not allowed by ruleset
            return None
        for address in addresses:  # every one was checked; the first that answers
            try:
                upstream = await asyncio.open_connection(address, port)
            except OSError:
                continue
            writer.write(b"\x05\x00\x00\x01" + bytes(6))
            return upstream
        writer.write(b"\x05\x05\x00\x01" + bytes(6))  # connection refused
        return None


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            writer.close()

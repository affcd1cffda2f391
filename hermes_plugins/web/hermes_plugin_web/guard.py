"""The SSRF guard: which URLs a model may make us fetch."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable

import httpx

ALLOWED_SCHEMES = frozenset({"http", "https"})
ALLOW_HINT = "set web.allow_private_networks: true in config.yaml to allow it"

#: ``(host, port) -> IP addresses``; the default is :func:`resolve`. Tests inject their own.
Resolver = Callable[[str, int], Iterable[str]]
#: ``address -> why it is not public, or None``; the default is :func:`non_public_kind`.
Classifier = Callable[[str], str | None]


class URLRefusedError(ValueError):
    """The URL may not be fetched; the message says why."""


def resolve(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (what a connection attempt could end up using)."""
    return [str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]


def non_public_kind(address: str) -> str | None:
    """Why ``address`` is not a public address (``"loopback"``, ``"private"``...), or None if it is."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped  # ::ffff:127.0.0.1 reaches 127.0.0.1
    # Order matters: loopback and link-local addresses are also is_private.
    kinds = {
        "loopback": ip.is_loopback,
        "link-local": ip.is_link_local,
        "unspecified": ip.is_unspecified,
        "multicast": ip.is_multicast,
        "reserved": ip.is_reserved,
        "private": ip.is_private,
        "non-global": not ip.is_global,  # e.g. shared address space 100.64.0.0/10
    }
    return next((kind for kind, matches in kinds.items() if matches), None)


def check_url(url: str, *, allow_private: bool, resolver: Resolver = resolve,
              classify: Classifier = non_public_kind) -> list[str]:
    """Refuse ``url`` unless it is http(s) and, when private networks are disallowed, every address
    its host resolves to is public. Raises :class:`URLRefusedError`.

    Returns the checked addresses (none when private networks are allowed): the caller connects to one
    of them, so a DNS answer that changes between check and connection cannot slip past the guard."""
    try:
        # httpx's own parser: the host we check is exactly the host the client will connect to.
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise URLRefusedError(f"invalid URL {url!r}: {exc}") from None
    if parsed.scheme not in ALLOWED_SCHEMES:
        scheme = f"{parsed.scheme}://" if parsed.scheme else "a URL without a scheme"
        raise URLRefusedError(f"refusing {url!r}: {scheme} is not allowed, only http:// and https://")
    if not parsed.host:
        raise URLRefusedError(f"refusing {url!r}: the URL has no host")
    if allow_private:
        return []
    host = parsed.raw_host.decode("ascii")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        addresses = list(resolver(host, port))
    except OSError as exc:
        raise URLRefusedError(f"refusing {url!r}: cannot resolve {host!r} ({exc})") from None
    if not addresses:
        raise URLRefusedError(f"refusing {url!r}: {host!r} resolves to no address")
    for address in addresses:
        kind = classify(address)
        if kind:
            what = address if address == host else f"{host} resolves to {address}, which"
            raise URLRefusedError(f"refusing {url!r}: {what} is not a public address ({kind}); {ALLOW_HINT}")
    return addresses

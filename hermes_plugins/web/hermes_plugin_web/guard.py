"""The SSRF guard: which URLs a model may make us fetch (the addresses are judged by the core's policy)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import httpx

from hermes_core.plugin import AddressRefusal, address_refusal, resolve_addresses

__all__ = ["ALLOWED_SCHEMES", "Judge", "Resolver", "URLRefusedError", "check_url"]

ALLOWED_SCHEMES = frozenset({"http", "https"})
ALLOW_HINT = "set web.allow_private_networks: true in config.yaml to allow it"

#: ``(host, port) -> IP addresses``; the default is ``hermes_core.plugin.resolve_addresses``. Tests inject theirs.
Resolver = Callable[[str, int], Iterable[str]]
#: ``(address, allow_private=...) -> why it may not be reached, or None``; the default is the core's policy.
Judge = Callable[..., AddressRefusal | None]


class URLRefusedError(ValueError):
    """The URL may not be fetched; the message says why."""


def check_url(url: str, *, allow_private: bool, resolver: Resolver = resolve_addresses,
              judge: Judge = address_refusal) -> list[str]:
    """Refuse ``url`` unless it is http(s) and every address its host resolves to may be reached: public ones,
    and with ``allow_private`` also loopback and private ones, never link-local or cloud metadata.
    Raises :class:`URLRefusedError`.

    Returns the checked addresses: the caller connects to one of them, so a DNS answer that changes between
    check and connection cannot slip past the guard."""
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
    host = parsed.raw_host.decode("ascii")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        addresses = list(resolver(host, port))
    except OSError as exc:
        raise URLRefusedError(f"refusing {url!r}: cannot resolve {host!r} ({exc})") from None
    if not addresses:
        raise URLRefusedError(f"refusing {url!r}: {host!r} resolves to no address")
    for address in addresses:
        found = judge(address, allow_private=allow_private)
        if found:
            what = str(found) if address == host else f"{host} resolves to {found}"
            hint = "never reachable, whatever the configuration" if found.always else ALLOW_HINT
            raise URLRefusedError(f"refusing {url!r}: {what}; {hint}")
    return addresses

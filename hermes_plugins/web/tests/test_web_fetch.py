"""Redirects into private networks, with private networks disallowed.

Every test server listens on a loopback address, which the guard refuses. To let the first hop
through without contacting anything outside this machine, these tests inject an address classifier
into ``fetch`` that counts 127.0.0.1 (only) as public; the "internal" servers listen on 127.0.0.2, and
every redirect target is resolved and checked as it would be in production.
"""

from __future__ import annotations

import pytest
from hermes_plugin_web.fetch import FetchError, fetch
from hermes_plugin_web.settings import WebSettings

from hermes_core.plugin import AddressRefusal, address_refusal

DISALLOWED = WebSettings(allow_private_networks=False)


def first_hop_public(address: str, *, allow_private: bool) -> AddressRefusal | None:
    """127.0.0.1 passes as public; every other address is judged as in production."""
    return None if address == "127.0.0.1" else address_refusal(address, allow_private=allow_private)


def test_allowed_first_hop_is_fetched(local_server) -> None:
    url = local_server.add("/page.txt", "public page", content_type="text/plain")

    page = fetch(url, DISALLOWED, judge=first_hop_public)

    assert page.body == b"public page"


def test_redirect_to_loopback_is_refused_before_connecting(local_server, make_server) -> None:
    internal = make_server("127.0.0.2")
    target = internal.add("/admin", "internal data", content_type="text/plain")
    start = local_server.add("/go", status=302, headers={"Location": target})

    with pytest.raises(FetchError, match=r"127\.0\.0\.2 is not a public address \(loopback\)"):
        fetch(start, DISALLOWED, judge=first_hop_public)

    assert local_server.paths() == ["/go"]
    assert internal.requests == []


@pytest.mark.parametrize(
    ("location", "kind"),
    [
        ("http://10.0.0.1/", "private"),  # a literal: refused before any connection is tried
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://[::1]/", "loopback"),
        ("http://127.0.0.3/", "loopback"),
    ],
)
def test_redirect_to_non_public_address_is_refused(local_server, location: str, kind: str) -> None:
    start = local_server.add("/go", status=307, headers={"Location": location})

    with pytest.raises(FetchError, match=rf"not a public address \({kind}\)"):
        fetch(start, DISALLOWED, judge=first_hop_public)


def test_connection_goes_to_the_checked_address(local_server) -> None:
    """DNS rebinding: the host is resolved once, checked, and the connection pinned to that answer.

    ``rebind.test`` resolves nowhere but through the injected resolver, so the page can only arrive if
    the client connects to the address the guard checked instead of resolving the name again.
    """
    local_server.add("/page.txt", "pinned", content_type="text/plain")
    url = f"http://rebind.test:{local_server.port}/page.txt"

    page = fetch(url, DISALLOWED, resolver=lambda host, port: ["127.0.0.1"], judge=first_hop_public)

    assert page.body == b"pinned" and page.url == url
    assert local_server.requests[0].headers["Host"] == f"rebind.test:{local_server.port}"


def test_each_checked_address_is_tried_until_one_takes_the_connection(local_server) -> None:
    """``localhost`` often resolves to ``::1`` first while a server listens on 127.0.0.1 only."""
    local_server.add("/page.txt", "second address", content_type="text/plain")
    url = f"http://dual.test:{local_server.port}/page.txt"

    page = fetch(url, WebSettings(allow_private_networks=True), resolver=lambda host, port: ["::1", "127.0.0.1"])

    assert page.body == b"second address"

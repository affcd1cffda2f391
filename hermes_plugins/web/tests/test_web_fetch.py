"""Redirects into private networks, with private networks disallowed.

Every test server listens on 127.0.0.1, which the guard refuses. To let the first hop through
without contacting any non-loopback address, these tests inject a resolver into ``fetch`` that
pretends the first server's address is public (93.184.216.34) and resolves every other host for
real; the redirect target is then checked as it would be in production.
"""

from __future__ import annotations

import pytest
from hermes_plugin_web.fetch import FetchError, fetch
from hermes_plugin_web.guard import resolve
from hermes_plugin_web.settings import WebSettings

DISALLOWED = WebSettings(allow_private_networks=False)


def pretend_public(port: int):
    """A resolver for which 127.0.0.1:<port> is a public address; anything else resolves for real."""

    def resolver(host: str, asked_port: int) -> list[str]:
        if (host, asked_port) == ("127.0.0.1", port):
            return ["93.184.216.34"]
        return resolve(host, asked_port)

    return resolver


def test_allowed_first_hop_is_fetched(local_server) -> None:
    url = local_server.add("/page.txt", "public page", content_type="text/plain")

    page = fetch(url, DISALLOWED, resolver=pretend_public(local_server.port))

    assert page.body == b"public page"


def test_redirect_to_loopback_is_refused_before_connecting(local_server, make_server) -> None:
    internal = make_server()
    target = internal.add("/admin", "internal data", content_type="text/plain")
    start = local_server.add("/go", status=302, headers={"Location": target})

    with pytest.raises(FetchError, match=r"127\.0\.0\.1 is not a public address \(loopback\)"):
        fetch(start, DISALLOWED, resolver=pretend_public(local_server.port))

    assert local_server.paths() == ["/go"]
    assert internal.requests == []


@pytest.mark.parametrize(
    ("location", "kind"),
    [
        ("http://10.0.0.1/", "private"),  # a literal: refused before any connection is tried
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[::1]/", "loopback"),
        ("http://localhost/", "loopback"),
    ],
)
def test_redirect_to_non_public_address_is_refused(local_server, location: str, kind: str) -> None:
    start = local_server.add("/go", status=307, headers={"Location": location})

    with pytest.raises(FetchError, match=rf"not a public address \({kind}\)"):
        fetch(start, DISALLOWED, resolver=pretend_public(local_server.port))

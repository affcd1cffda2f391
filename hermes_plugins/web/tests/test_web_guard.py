"""The SSRF guard on its own: schemes, address classes, and resolution of host names.

Host names are resolved through an injected resolver, so no test depends on (or reaches) real DNS.
"""

from __future__ import annotations

import pytest
from hermes_plugin_web.guard import URLRefusedError, check_url

from hermes_core.plugin import address_kind


def resolves_to(*addresses: str):
    def resolver(host: str, port: int) -> list[str]:
        return list(addresses)

    return resolver


def must_not_resolve(host: str, port: int) -> list[str]:
    raise AssertionError(f"the guard resolved {host}:{port} although it had no reason to")


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.10", "private"),
        ("::ffff:10.0.0.1", "private"),
        ("fc00::1", "private"),
        ("169.254.169.254", "metadata"),
        ("169.254.1.1", "link-local"),
        ("fe80::1", "link-local"),
        ("0.0.0.0", "unspecified"),
        ("224.0.0.1", "multicast"),
        ("240.0.0.1", "reserved"),
        ("100.64.0.1", "non-global"),
        ("93.184.216.34", None),
        ("2606:4700::1111", None),
    ],
)
def test_address_classification(address: str, kind: str | None) -> None:
    assert address_kind(address) == kind


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8080/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://2130706433/",  # 127.0.0.1 as one decimal number
    ],
)
def test_non_public_literal_addresses_are_refused(url: str) -> None:
    # Real getaddrinfo: for IP literals it parses the address and makes no network request.
    with pytest.raises(URLRefusedError, match="not a public address"):
        check_url(url, allow_private=False)


def test_host_name_is_checked_after_resolution() -> None:
    with pytest.raises(URLRefusedError, match=r"intranet\.example resolves to 10\.0\.0\.7.*private"):
        check_url("https://intranet.example/", allow_private=False, resolver=resolves_to("10.0.0.7"))


def test_every_resolved_address_must_be_public() -> None:
    resolver = resolves_to("93.184.216.34", "127.0.0.1")
    with pytest.raises(URLRefusedError, match="loopback"):
        check_url("http://mixed.example/", allow_private=False, resolver=resolver)


def test_public_host_is_allowed() -> None:
    check_url("https://example.com/page", allow_private=False, resolver=resolves_to("93.184.216.34"))


def test_resolver_gets_host_and_default_port() -> None:
    seen: list[tuple[str, int]] = []

    def resolver(host: str, port: int) -> list[str]:
        seen.append((host, port))
        return ["93.184.216.34"]

    check_url("https://example.com/", allow_private=False, resolver=resolver)
    check_url("http://example.com:8080/", allow_private=False, resolver=resolver)
    assert seen == [("example.com", 443), ("example.com", 8080)]


def test_unresolvable_host_is_refused() -> None:
    def resolver(host: str, port: int) -> list[str]:
        raise OSError("Name or service not known")

    with pytest.raises(URLRefusedError, match=r"cannot resolve 'nowhere\.invalid'"):
        check_url("http://nowhere.invalid/", allow_private=False, resolver=resolver)


@pytest.mark.parametrize("allow_private", [False, True])
@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://example.com/file", "gopher://x/", "example.com"]
)
def test_only_http_and_https_are_allowed_even_with_private_networks(url: str, allow_private: bool) -> None:
    with pytest.raises(URLRefusedError, match="only http:// and https://"):
        check_url(url, allow_private=allow_private, resolver=must_not_resolve)


@pytest.mark.parametrize(
    "url",
    [
        "http://[2002:7f00:1::]/",  # 6to4 for 127.0.0.1
        "http://[2002:a9fe:a9fe::]/",  # 6to4 for 169.254.169.254
        "http://[fec0::1]/",  # deprecated site-local
        "http://[64:ff9b::7f00:1]/",  # NAT64 for 127.0.0.1
        "http://[::7f00:1]/",  # IPv4-compatible 127.0.0.1
    ],
)
def test_embedded_and_site_local_addresses_are_refused(url: str) -> None:
    with pytest.raises(URLRefusedError, match="not a public address"):
        check_url(url, allow_private=False)


def test_private_networks_allowed_opens_loopback() -> None:
    assert check_url("http://127.0.0.1:1/", allow_private=True) == ["127.0.0.1"]


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://[fd00:ec2::254]/",
        "http://[fe80::1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://[2002:a9fe:a9fe::]/",
        "http://[64:ff9b::a9fe:a9fe]/",
    ],
)
def test_metadata_and_link_local_stay_refused_with_private_networks(url: str) -> None:
    with pytest.raises(URLRefusedError, match="never reachable, whatever the configuration"):
        check_url(url, allow_private=True)


def test_private_networks_allowed_still_checks_resolved_names() -> None:
    # DNS that points a harmless-looking name at the metadata service is refused with the switch on.
    with pytest.raises(URLRefusedError, match=r"metadata\.example resolves to 169\.254\.169\.254.*metadata"):
        check_url("http://metadata.example/", allow_private=True, resolver=resolves_to("169.254.169.254"))


@pytest.mark.parametrize("address", ["fd20:ce::254", "fd00:ec2::254%eth0", "192.0.0.8"])
def test_gcp_ipv6_metadata_zoned_and_special_purpose_addresses_are_refused_with_private_networks(address: str) -> None:
    with pytest.raises(URLRefusedError, match="never reachable"):
        check_url("http://metadata.example/computeMetadata/v1/", allow_private=True, resolver=resolves_to(address))

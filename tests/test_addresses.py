"""The shared address policy: ipaddress's properties, embedded IPv4 forms, and what ``allow_private`` opens."""

from __future__ import annotations

import pytest

from hermes_core.plugin import address_kind, address_refusal


@pytest.mark.parametrize(
    ("address", "kind", "via"),
    [
        ("2002:7f00:1::", "loopback", "6to4 for 127.0.0.1"),
        ("2002:a9fe:a9fe::", "metadata", "6to4 for 169.254.169.254"),
        ("2002:a00:1::", "private", "6to4 for 10.0.0.1"),
        ("::ffff:127.0.0.1", "loopback", "IPv4-mapped for 127.0.0.1"),
        ("::ffff:0:7f00:1", "loopback", "IPv4-translated for 127.0.0.1"),
        ("::7f00:1", "loopback", "IPv4-compatible for 127.0.0.1"),
        ("64:ff9b::7f00:1", "loopback", "NAT64 for 127.0.0.1"),
        ("64:ff9b::a9fe:a9fe", "metadata", "NAT64 for 169.254.169.254"),
        ("64:ff9b:1:a9fe:a9:fe00::", "metadata", "NAT64 for 169.254.169.254"),  # a /48 local-use prefix
        ("64:ff9b:1::808:808", "private", "local-use NAT64"),
        # Teredo: server 65.54.227.120, client 169.254.169.254 stored inverted (0x5601 5601).
        ("2001:0:4136:e378:8000:63bf:5601:5601", "metadata", "Teredo client for 169.254.169.254"),
    ],
)
def test_embedded_ipv4_addresses_decide(address: str, kind: str, via: str) -> None:
    found = address_refusal(address)
    assert found is not None
    assert (found.kind, found.via) == (kind, via)


@pytest.mark.parametrize(
    ("address", "kind"),
    [
        ("fec0::1", "site-local"),
        ("fd00:ec2::254", "metadata"),
        ("169.254.170.2", "metadata"),
        ("100.100.100.200", "metadata"),
        ("fe80::1%eth0", "link-local"),
        ("100.64.0.1", "non-global"),
        ("8.8.8.8", None),
        ("::ffff:8.8.8.8", None),  # an embedded public address is public, whatever ::ffff:0:0/96 counts as
        ("2002:808:808::1", None),
    ],
)
def test_address_kinds(address: str, kind: str | None) -> None:
    assert address_kind(address) == kind


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "10.0.0.1", "fc00::1", "fec0::1", "2002:7f00:1::",
                                     "100.64.0.1", "0.0.0.0"])
def test_allow_private_opens_local_and_private_addresses(address: str) -> None:
    assert address_refusal(address) is not None
    assert address_refusal(address, allow_private=True) is None


@pytest.mark.parametrize("address", ["169.254.169.254", "169.254.1.1", "fe80::1", "fd00:ec2::254",
                                     "::ffff:169.254.169.254", "2002:a9fe:a9fe::", "64:ff9b::a9fe:a9fe",
                                     "::a9fe:a9fe", "100.100.100.200"])
def test_link_local_and_metadata_are_refused_even_with_allow_private(address: str) -> None:
    found = address_refusal(address, allow_private=True)
    assert found is not None and found.always
    assert "not a public address" in str(found)


def test_text_that_is_not_an_address_raises() -> None:
    with pytest.raises(ValueError, match="does not appear to be an IPv4 or IPv6 address"):
        address_refusal("example.com")


@pytest.mark.parametrize(("address", "kind"), [
    ("fd20:ce::254", "metadata"),  # Google Cloud's metadata server over IPv6
    ("fd00:c1::a9fe:a9fe", "metadata"),  # Oracle Cloud's
    ("fd00:ec2::254%eth0", "metadata"),  # the zone ID cut off before judging
    ("fd00::1%eth0", "zone-id"),
    ("2001:4860:4860::8888%eth0", "zone-id"),  # public, but a zone only names a local link
    ("192.0.0.8", "special-purpose"),
    ("192.0.0.170", "special-purpose"),
    ("192.0.0.192", "metadata"),
    ("::ffff:192.0.0.8", "special-purpose"),
])
def test_metadata_special_purpose_and_zoned_addresses_are_refused_even_with_allow_private(address: str,
                                                                                        kind: str) -> None:
    found = address_refusal(address, allow_private=True)
    assert found is not None and found.always and found.kind == kind

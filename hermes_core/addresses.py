"""The address policy: which IP addresses a model-chosen URL may reach, shared by every pack that fetches
(plugins import it from ``hermes_core.plugin``).

Standard library only (``ipaddress`` and ``socket``), and nothing of the core: any part, and any pack, can use it.
An address is judged by ``ipaddress``'s properties and by the IPv4 address embedded in it by a
transition form (IPv4-mapped, IPv4-compatible, IPv4-translated, 6to4, Teredo, NAT64), since a packet
to ``2002:7f00:1::`` or ``64:ff9b::a9fe:a9fe`` can end up at the IPv4 address inside it.

Two levels: by default only public addresses pass; ``allow_private`` opens loopback, private and other
local addresses, but never link-local or cloud-metadata addresses, the IETF's special-purpose block
``192.0.0.0/24`` (which holds a metadata address) or an IPv6 address with a zone ID (``fd00:ec2::254%eth0``: the
zone is cut off and the address judged, then refused anyway, since a zone only names a local link): a user who
opens their LAN to the agent has not opened the instance's credentials.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Final

__all__ = ["ALWAYS_REFUSED", "AddressRefusal", "address_kind", "address_refusal", "resolve_addresses"]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

#: Kinds refused even when private networks are allowed.
ALWAYS_REFUSED: Final = frozenset({"link-local", "metadata", "special-purpose", "zone-id"})

#: Cloud instance-metadata endpoints (all of 169.254.0.0/16 is refused as link-local anyway).
METADATA_ADDRESSES: Final = frozenset(ipaddress.ip_address(address) for address in (
    "169.254.169.254",  # AWS, GCP, Azure, OpenStack, ... (link-local too)
    "169.254.170.2",    # AWS ECS task credentials (link-local too)
    "fd00:ec2::254",    # AWS IMDS over IPv6
    "fd20:ce::254",     # Google Cloud's metadata server over IPv6
    "fd00:c1::a9fe:a9fe",  # Oracle Cloud Infrastructure's metadata over IPv6
    "100.100.100.200",  # Alibaba Cloud metadata (in the shared address space 100.64.0.0/10)
    "192.0.0.192",      # Oracle Cloud Infrastructure Classic metadata
    "168.63.129.16",    # Azure WireServer (a public address that hands VMs their configuration and certificates)
))

#: IETF protocol assignments (RFC 6890): DS-Lite, NAT64 discovery, PCP and TURN anycast, OCI's metadata; no
#: destination a user opens to the agent, whatever Python's ``is_global`` says of them in a given version.
_SPECIAL_PURPOSE: Final = ipaddress.IPv4Network("192.0.0.0/24")
_NAT64_WELL_KNOWN: Final = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL_USE: Final = ipaddress.IPv6Network("64:ff9b:1::/48")
_IPV4_COMPATIBLE: Final = ipaddress.IPv6Network("::/96")
_IPV4_TRANSLATED: Final = ipaddress.IPv6Network("::ffff:0:0:0/96")
#: RFC 6052: where the IPv4 address starts, in bytes, once the reserved octet 8 is dropped, per prefix length.
_RFC6052_OFFSETS: Final = {48: 6, 56: 7, 64: 8, 96: 11}


@dataclass(frozen=True)
class AddressRefusal:
    """Why an address may not be reached."""

    address: str  #: the address as given
    kind: str  #: ``metadata``, ``link-local``, ``loopback``, ``private``, ...
    via: str = ""  #: the transition form that embeds the refused IPv4 address, e.g. ``6to4 for 127.0.0.1``

    @property
    def always(self) -> bool:
        """Refused even when private networks are allowed."""
        return self.kind in ALWAYS_REFUSED

    def __str__(self) -> str:
        via = f", {self.via}" if self.via else ""
        return f"{self.address} is not a public address ({self.kind}{via})"


def resolve_addresses(host: str, port: int) -> list[str]:
    """Every address ``host`` resolves to (what a connection attempt could end up using)."""
    return [str(info[4][0]) for info in socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)]


def address_refusal(address: str, *, allow_private: bool = False) -> AddressRefusal | None:
    """Why ``address`` may not be reached under the policy, or None when it may.

    Raises ``ValueError`` for text that is not an IP address."""
    found = _judged(address)
    if found is None or (allow_private and not found.always):
        return None
    return found


def address_kind(address: str) -> str | None:
    """Why ``address`` is not public (``"loopback"``, ``"private"``...), or None when it is."""
    found = _judged(address)
    return found.kind if found else None


def _judged(address: str) -> AddressRefusal | None:
    """The refusal of ``address``; one with a zone ID (``%eth0``) is judged without it and refused in any case."""
    bare, percent, zone = address.partition("%")
    found = _judge(ipaddress.ip_address(bare), address)
    if not percent or (found is not None and found.always):
        return found
    return AddressRefusal(address, "zone-id", f"the zone {zone!r} names a local link")


def _judge(ip: IPAddress, shown: str) -> AddressRefusal | None:
    embedded = _embedded(ip) if isinstance(ip, ipaddress.IPv6Address) else []
    if not embedded:
        kind = _kind(ip)
        return AddressRefusal(shown, kind) if kind else None
    # A transition form is judged by what it embeds (its own prefix says nothing about where packets go);
    # the worst finding wins, so one link-local component refuses the whole address.
    findings = [AddressRefusal(shown, "private", "local-use NAT64")] if ip in _NAT64_LOCAL_USE else []
    findings += [AddressRefusal(shown, kind, f"{form} for {inner}")
                 for form, inner in embedded if (kind := _kind(inner))]
    findings.sort(key=lambda found: not found.always)
    return findings[0] if findings else None


def _kind(ip: IPAddress) -> str | None:
    if ip in METADATA_ADDRESSES:
        return "metadata"
    if ip in _SPECIAL_PURPOSE:
        return "special-purpose"
    # Order matters: loopback and link-local addresses are also is_private.
    kinds = {
        "link-local": ip.is_link_local,
        "loopback": ip.is_loopback,
        "unspecified": ip.is_unspecified,
        "multicast": ip.is_multicast,
        "reserved": ip.is_reserved,
        "site-local": isinstance(ip, ipaddress.IPv6Address) and ip.is_site_local,  # fec0::/10, deprecated
        "private": ip.is_private,
        "non-global": not ip.is_global,  # e.g. shared address space 100.64.0.0/10
    }
    return next((kind for kind, matches in kinds.items() if matches), None)


def _embedded(ip: ipaddress.IPv6Address) -> list[tuple[str, ipaddress.IPv4Address]]:
    """The IPv4 addresses a transition form of ``ip`` carries, each with the form's name."""
    forms: list[tuple[str, ipaddress.IPv4Address]] = []
    low32 = ipaddress.IPv4Address(int(ip) & 0xFFFF_FFFF)
    if ip.ipv4_mapped is not None:
        forms.append(("IPv4-mapped", ip.ipv4_mapped))
    elif ip in _IPV4_TRANSLATED:
        forms.append(("IPv4-translated", low32))
    elif ip in _IPV4_COMPATIBLE and int(ip) > 1:  # :: and ::1 are themselves
        forms.append(("IPv4-compatible", low32))
    if ip.sixtofour is not None:
        forms.append(("6to4", ip.sixtofour))
    if ip.teredo is not None:
        server, client = ip.teredo
        forms += [("Teredo server", server), ("Teredo client", client)]
    if ip in _NAT64_WELL_KNOWN:
        forms.append(("NAT64", low32))
    elif ip in _NAT64_LOCAL_USE:
        # The operator picks the prefix length inside 64:ff9b:1::/48: read the address at each one.
        packed = ip.packed[:8] + ip.packed[9:]
        forms += [("NAT64", ipaddress.IPv4Address(packed[offset:offset + 4])) for offset in _RFC6052_OFFSETS.values()]
    return forms

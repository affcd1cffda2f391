"""Home Assistant's REST API at ``HASS_URL``: the address guard, and one request at a time.

``HASS_URL`` is the user's, and usually private (``http://homeassistant.local:8123``, a LAN address): the guard
allows exactly that host, on any address kind but link-local, cloud metadata and the special-purpose block (never
reachable, as for every pack that fetches). The model only picks path segments, each checked against Home
Assistant's name patterns, and redirects are not followed: no request leaves that host.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Final

import httpx

from hermes_core.plugin import address_refusal, resolve_addresses

__all__ = ["DEFAULT_URL", "ENTITY_ID", "SERVICE_NAME", "HassError", "request"]

DEFAULT_URL: Final = "http://homeassistant.local:8123"
#: An entity id (``light.living_room``) and a domain or service name (``light``, ``turn_on``), as Home Assistant
#: spells them: nothing that could step out of ``/api/states/...`` or ``/api/services/...``.
ENTITY_ID: Final = re.compile(r"^[a-z_][a-z0-9_]*\.[a-z0-9_]+$")
SERVICE_NAME: Final = re.compile(r"^[a-z][a-z0-9_]*$")
TIMEOUT: Final = 15.0
#: The largest answer read from Home Assistant.
MAX_BYTES: Final = 10_000_000


class HassError(Exception):
    """The request cannot be made, or Home Assistant refused it; the message says why."""


def _base_url() -> httpx.URL:
    """``HASS_URL``, checked: http(s), a host, no path beyond ``/``, and an address the guard allows."""
    raw = (os.environ.get("HASS_URL") or DEFAULT_URL).strip().rstrip("/")
    try:
        url = httpx.URL(raw)
    except httpx.InvalidURL as exc:
        raise HassError(f"HASS_URL {raw!r} is not a URL: {exc}") from None
    if url.scheme not in ("http", "https") or not url.host:
        raise HassError(f"HASS_URL {raw!r} must be an http:// or https:// URL with a host")
    if url.query or url.fragment or url.userinfo:
        raise HassError(f"HASS_URL {raw!r} must not carry credentials, a query or a fragment")
    host = url.raw_host.decode("ascii")
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        addresses = resolve_addresses(host, port)
    except OSError as exc:
        raise HassError(f"cannot resolve the host of HASS_URL, {host!r}: {exc}") from None
    for address in addresses:
        refusal = address_refusal(address, allow_private=True)
        if refusal is not None and refusal.always:
            raise HassError(f"refusing HASS_URL {raw!r}: {refusal}; Home Assistant is never reached there")
    return url


def request(method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
    """The JSON answer of ``method path`` (a path under ``/api/``, made of checked names) at ``HASS_URL``."""
    token = os.environ.get("HASS_TOKEN", "").strip()
    if not token:
        raise HassError("HASS_TOKEN is not set: create a long-lived access token in Home Assistant (your profile, "
                        "Security) and set it")
    base = _base_url()
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    try:
        with httpx.Client(timeout=TIMEOUT, follow_redirects=False, trust_env=False) as client, \
                client.stream(method, f"{base}{path}", headers=headers, json=payload) as response:
            body = b""
            for chunk in response.iter_bytes():
                body += chunk
                if len(body) > MAX_BYTES:
                    raise HassError(f"Home Assistant's answer is larger than {MAX_BYTES} bytes")
    except httpx.HTTPError as exc:
        raise HassError(f"cannot reach Home Assistant at {base}: {exc}") from None
    if response.status_code >= 300:
        detail = body[:300].decode("utf-8", "replace").strip()
        raise HassError(f"Home Assistant answered {response.status_code} {response.reason_phrase}"
                        + (f": {detail}" if detail else ""))
    try:
        return json.loads(body)
    except ValueError as exc:
        raise HassError(f"Home Assistant's answer is not JSON: {exc}") from None

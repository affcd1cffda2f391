"""The guard: schemes, addresses at interception (redirects and the page's own requests), the pinning proxy."""

from __future__ import annotations

import asyncio
import socket
import struct

import pytest
from hermes_plugin_browser.guard import PinningProxy

METADATA = "http://169.254.169.254/latest/meta-data/"


@pytest.mark.parametrize("url", ["file:///etc/passwd", "chrome://settings", "javascript:alert(1)",
                                 "view-source:http://127.0.0.1/", "about:blank", "127.0.0.1:8080"])
def test_only_http_and_https_pages_may_be_opened(browser, url: str) -> None:
    opened = browser("browser_navigate", url=url)

    assert opened["success"] is False and "only http:// and https://" in opened["error"]


def test_a_redirect_to_the_metadata_service_is_refused_without_a_connection(browser, pages) -> None:
    """Interception does not see redirects (Playwright routes only a redirect chain's first request): the pinning
    proxy, which every connection of Chromium goes through, refuses it before connecting anywhere."""
    start = pages.add("/go", "", status=302, headers={"Location": METADATA})

    opened = browser("browser_navigate", url=start)

    assert opened["success"] is False
    refusal = ("connection to 169.254.169.254:80 refused: 169.254.169.254 is not a public address (metadata); "
               "never reachable, whatever the configuration")
    assert refusal in opened["error"]
    blocked = [m["text"] for m in browser("browser_console")["console_messages"] if m["source"] == "guard"]
    assert blocked == [refusal]


def test_a_fetch_by_the_page_is_blocked_and_the_block_shows_in_the_console(browser, pages) -> None:
    browser("browser_navigate", url=pages.add("/page", f"""<script>
        fetch('{METADATA}').then(() => console.log('reached'), error => console.log('fetch failed: ' + error));
    </script>"""))
    browser("browser_snapshot")

    messages = browser("browser_console")["console_messages"]

    assert any(m["source"] == "guard" and "169.254.169.254" in m["text"] for m in messages)
    assert any(m["text"].startswith("fetch failed: TypeError") for m in messages)
    assert not any(m["text"] == "reached" for m in messages)


def test_without_the_switch_no_loopback_page_is_reached(browser, pages, browser_config) -> None:
    browser_config()  # browser.allow_private unset
    url = pages.add("/private", "<title>secret</title>")

    opened = browser("browser_navigate", url=url)

    assert opened["success"] is False
    assert "127.0.0.1 is not a public address (loopback); set browser.allow_private: true" in opened["error"]
    assert pages.received == []


def test_downloads_are_off(browser, pages, hermes_home, hermes_workspace) -> None:
    marker = b"hermes-download-marker " * 50
    pages.add("/file.bin", marker, content_type="application/octet-stream",
              headers={"Content-Disposition": "attachment; filename=file.bin", "Cache-Control": "no-store"})
    browser("browser_navigate", url=pages.add("/page", "<a href='/file.bin'>get</a>"))

    browser("browser_click", ref="@e1")

    assert "/file.bin" in pages.paths()  # the browser asked for it...
    # ...and saved none of it. (Chromium may hold a denied download's first bytes in a temporary file of its
    # private folder, the home's own browser-* folder, until it deletes it; that folder goes when the browser closes.)
    private = hermes_home / "tmp"
    saved = [path for folder in (hermes_home, hermes_workspace) for path in folder.rglob("*")
             if path.is_file() and private not in path.parents and marker[:40] in path.read_bytes()]
    assert saved == []


def socks_connect(port: int, host: str, target_port: int) -> int:
    """A SOCKS5 CONNECT by name through the proxy on ``port``; the reply code (0 = connected)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
        client.sendall(b"\x05\x01\x00")
        assert client.recv(2) == b"\x05\x00"
        name = host.encode()
        client.sendall(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + struct.pack("!H", target_port))
        return client.recv(10)[1]


@pytest.mark.parametrize(("allow_private", "code"), [(False, 2), (True, 0)])
def test_the_proxy_resolves_names_itself_and_connects_only_to_checked_addresses(pages, allow_private: bool,
                                                                                 code: int) -> None:
    """What closes DNS rebinding: Chromium hands names to the proxy, which resolves and judges them itself."""
    blocked: list[tuple[str, int, str]] = []
    loop = asyncio.new_event_loop()
    proxy = PinningProxy(lambda: allow_private, lambda *block: blocked.append(block), connect_timeout=10)
    loop.run_until_complete(proxy.start())
    try:
        future = loop.run_in_executor(None, socks_connect, proxy.port, "localhost", pages.port)
        assert loop.run_until_complete(future) == code
    finally:
        loop.run_until_complete(proxy.close())
        loop.close()
    assert bool(blocked) is not allow_private
    if blocked:
        assert blocked[0][:2] == ("localhost", pages.port) and "loopback" in blocked[0][2]


def test_the_proxy_never_connects_to_the_metadata_service() -> None:
    blocked: list[tuple[str, int, str]] = []
    loop = asyncio.new_event_loop()
    proxy = PinningProxy(lambda: True, lambda *block: blocked.append(block), connect_timeout=10)
    loop.run_until_complete(proxy.start())
    try:
        future = loop.run_in_executor(None, socks_connect, proxy.port, "169.254.169.254", 80)
        assert loop.run_until_complete(future) == 2
    finally:
        loop.run_until_complete(proxy.close())
        loop.close()
    assert "never reachable" in blocked[0][2]


@pytest.mark.parametrize("url", ["http://[fd20:ce::254]/computeMetadata/v1/", "http://[fd00:ec2::254%25lo]/",
                                 "http://192.0.0.8/"])
def test_gcp_ipv6_metadata_zoned_and_special_purpose_addresses_are_never_opened(url: str) -> None:
    from hermes_plugin_browser.guard import check_navigation

    why = asyncio.run(check_navigation(url, allow_private=True))
    assert why is not None and why.startswith(f"refusing {url!r}"), why

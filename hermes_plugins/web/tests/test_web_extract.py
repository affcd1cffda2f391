"""web_extract against real HTTP servers on 127.0.0.1.

The guard refuses loopback, so tests of successful fetches set ``web.allow_private_networks: true``
in an isolated HERMES_HOME; the guard tests leave it at its default (false).
"""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from hermes_plugin_web.extract import web_extract

PARAGRAPH = "The quick brown fox jumps over the lazy dog while the agent reads the page. " * 6
ARTICLE = f"""<!doctype html>
<html><head><title>Fox Facts</title><script>var leaked = "SCRIPT_IN_HEAD";</script></head>
<body>
  <nav><a href="/">Home</a> | <a href="/about">About</a></nav>
  <article>
    <h1>All About Foxes</h1>
    <p>{PARAGRAPH}</p>
    <h2>Habitat</h2>
    <p>Foxes live in forests, grasslands and cities. {PARAGRAPH}</p>
    <script>document.write("SCRIPT_IN_BODY");</script>
  </article>
</body></html>"""


def extract(url: str) -> dict[str, Any]:
    return json.loads(web_extract({"url": url}))


def refuse_connections(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any outgoing TCP connection fail the test: the guard must refuse before connecting."""

    def connect(*args: Any, **kwargs: Any) -> socket.socket:
        raise AssertionError(f"a connection was attempted: {args}")

    monkeypatch.setattr(socket, "create_connection", connect)


def test_html_is_converted_to_markdown_without_scripts(local_server, web_config) -> None:
    web_config(allow_private_networks=True)
    url = local_server.add("/foxes", ARTICLE)

    result = extract(url)

    assert result["url"] == url
    assert result["content_type"] == "text/html"
    assert result["title"]
    content = result["content"]
    assert "# All About Foxes" in content
    assert "## Habitat" in content
    assert "Foxes live in forests, grasslands and cities." in content
    assert "SCRIPT_IN_HEAD" not in content
    assert "SCRIPT_IN_BODY" not in content


def test_plain_text_is_returned_as_is(local_server, web_config) -> None:
    web_config(allow_private_networks=True)
    text = "line one\n  <b>not html</b>\nline three\n"
    url = local_server.add("/notes.txt", text, content_type="text/plain; charset=utf-8")

    result = extract(url)

    assert result == {"url": url, "title": None, "content_type": "text/plain", "content": text}


def test_json_is_returned_as_is(local_server, web_config) -> None:
    web_config(allow_private_networks=True)
    document = '{"name": "hermes", "tools": ["web_extract", "web_search"]}'
    url = local_server.add("/data.json", document, content_type="application/json")

    assert extract(url)["content"] == document


def test_declared_charset_is_used(local_server, web_config) -> None:
    web_config(allow_private_networks=True)
    url = local_server.add(
        "/menu.txt", "café crème".encode("latin-1"), content_type="text/plain; charset=latin-1"
    )

    assert extract(url)["content"] == "café crème"


def test_binary_content_is_refused(local_server, web_config) -> None:
    web_config(allow_private_networks=True)
    url = local_server.add("/logo.png", b"\x89PNG\r\n\x1a\n" + bytes(64), content_type="image/png")

    assert extract(url) == {
        "error": f"{url} is image/png, not text: web_extract reads HTML, plain text, JSON and XML only"
    }


def test_response_with_declared_length_over_the_limit_is_refused(local_server, web_config) -> None:
    web_config(allow_private_networks=True, max_bytes=1000)
    url = local_server.add("/big.txt", "x" * 5000, content_type="text/plain")

    assert "larger than the 1000 byte limit" in extract(url)["error"]


def test_streamed_response_over_the_limit_is_refused(local_server, web_config) -> None:
    web_config(allow_private_networks=True, max_bytes=1000)
    url = local_server.add("/stream.txt", "x" * 5000, content_type="text/plain", send_length=False)

    assert "larger than the 1000 byte limit" in extract(url)["error"]


def test_response_within_the_limit_is_read_whole(local_server, web_config) -> None:
    web_config(allow_private_networks=True, max_bytes=1000)
    url = local_server.add("/fits.txt", "y" * 1000, content_type="text/plain", send_length=False)

    assert extract(url)["content"] == "y" * 1000


def test_server_that_does_not_answer_times_out(local_server, web_config) -> None:
    web_config(allow_private_networks=True, timeout=0.5)
    url = local_server.add("/slow", stall=True)

    assert extract(url) == {"error": f"timed out after 0.5 s fetching {url}"}


def test_http_error_status_is_reported(local_server, web_config) -> None:
    web_config(allow_private_networks=True)

    assert extract(local_server.url("/missing")) == {
        "error": f"HTTP 404 Not Found from {local_server.url('/missing')}"
    }


def test_redirects_are_followed_and_the_final_url_reported(local_server, web_config) -> None:
    web_config(allow_private_networks=True)
    final = local_server.add("/final.txt", "arrived", content_type="text/plain")
    local_server.add("/second", status=302, headers={"Location": "/final.txt"})
    first = local_server.add("/first", status=301, headers={"Location": local_server.url("/second")})

    result = extract(first)

    assert result["url"] == final
    assert result["content"] == "arrived"


def test_redirect_loop_stops_after_max_redirects(local_server, web_config) -> None:
    web_config(allow_private_networks=True, max_redirects=2)
    url = local_server.add("/loop", status=302, headers={"Location": "/loop"})

    assert extract(url) == {"error": f"too many redirects: gave up after 2, at {url}"}
    assert local_server.paths() == ["/loop"] * 3


def test_redirect_to_file_scheme_is_refused(local_server, web_config) -> None:
    web_config(allow_private_networks=True)
    url = local_server.add("/escape", status=302, headers={"Location": "file:///etc/passwd"})

    assert "file:// is not allowed" in extract(url)["error"]


def test_loopback_server_is_refused_by_default(local_server, web_config) -> None:
    url = local_server.add("/secret", "internal data", content_type="text/plain")

    result = extract(url)

    assert "127.0.0.1 is not a public address (loopback)" in result["error"]
    assert "web.allow_private_networks: true" in result["error"]
    assert local_server.requests == []


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://10.0.0.1/admin", "private"),
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("http://[::1]:8080/", "loopback"),
    ],
)
def test_non_public_address_is_refused_before_connecting(url, kind, web_config, monkeypatch) -> None:
    refuse_connections(monkeypatch)

    assert f"is not a public address ({kind})" in extract(url)["error"]


@pytest.mark.parametrize(
    ("url", "scheme"), [("file:///etc/passwd", "file"), ("ftp://ftp.example.com/pub/file.txt", "ftp")]
)
def test_other_schemes_are_refused(url, scheme, web_config, monkeypatch) -> None:
    web_config(allow_private_networks=True)
    refuse_connections(monkeypatch)

    error = extract(url)["error"]

    assert error == f"refusing {url!r}: {scheme}:// is not allowed, only http:// and https://"


def test_missing_url_is_an_error(web_config) -> None:
    assert json.loads(web_extract({}))["error"] == (
        "give `urls` (a list of up to 5 http or https URLs) or `url` (one URL)")


def test_hermes_agents_urls_list_gives_one_result_per_url_with_its_error(local_server, web_config) -> None:
    web_config(allow_private_networks=True)
    first = local_server.add("/one", ARTICLE)
    second = local_server.add("/two", "plain words", content_type="text/plain")

    answer = json.loads(web_extract({"urls": [first, local_server.url("/missing"), second]}))

    one, missing, two = answer["results"]
    assert one["url"] == first and one["error"] is None and "# All About Foxes" in one["content"]
    assert missing["url"] == local_server.url("/missing") and missing["content"] == ""
    assert "404" in missing["error"]
    assert two == {"url": second, "title": None, "content_type": "text/plain", "content": "plain words", "error": None}


@pytest.mark.parametrize(("urls", "error"), [
    ([], "urls must be a list of 1 to 5 http or https URLs"),
    ("http://example.com/", "urls must be a list of 1 to 5 http or https URLs"),
    (["http://example.com/"] * 6, "urls has 6 URLs; give at most 5 per call"),
])
def test_a_urls_argument_that_is_not_a_short_list_is_refused(urls, error, web_config, monkeypatch) -> None:
    refuse_connections(monkeypatch)

    assert json.loads(web_extract({"urls": urls}))["error"] == error


def test_a_page_over_char_limit_shows_its_start_and_end_and_saves_the_whole_text(local_server, web_config,
                                                                                   hermes_home) -> None:
    web_config(allow_private_networks=True)
    lines = [f"line {n:05d} " + "x" * 40 for n in range(1, 2001)]
    url = local_server.add("/long.txt", "\n".join(lines), content_type="text/plain")

    [page] = json.loads(web_extract({"urls": [url], "char_limit": 4000}))["results"]

    content = page["content"]
    assert content.startswith("line 00001 ") and "line 02000 " in content
    assert "line 01000 " not in content
    saved = content.rsplit("The full text is saved to ", 1)[1].split(";", 1)[0]
    assert Path(saved).parent == hermes_home / "results"
    assert Path(saved).read_text(encoding="utf-8") == "\n".join(lines)


def test_char_limit_below_hermes_agents_minimum_is_refused(web_config, monkeypatch) -> None:
    refuse_connections(monkeypatch)

    error = json.loads(web_extract({"urls": ["http://example.com/"], "char_limit": 100}))["error"]

    assert error == "char_limit must be at least 2000, not 100"


def test_invalid_settings_are_reported(web_config) -> None:
    web_config(timeout="soon")

    error = extract("https://example.com/")["error"]

    assert error.startswith("invalid plugins.entries.web.settings in config.yaml")


def test_each_page_done_is_reported_as_progress(local_server, web_config, hermes_runtime, load_hermes_plugin) -> None:
    web_config(allow_private_networks=True)
    load_hermes_plugin("hermes_plugin_web", "web")
    heard: list[Any] = []
    hermes_runtime.set_progress_callback(heard.append)
    urls = [local_server.add(f"/page-{n}", ARTICLE) for n in range(3)]

    hermes_runtime.handle_function_call("web_extract", {"urls": urls}, tool_call_id="c1")

    assert heard and heard[-1].done == 3 and heard[-1].total == 3 and heard[-1].tool_call_id == "c1"
    assert all(progress.tool_name == "web_extract" and progress.message in urls for progress in heard)

"""Fetching a model-chosen URL: every redirect hop guarded, one deadline, a byte limit, only the media types the
caller reads (text for web_extract; other packs, e.g. vision, pass their own)."""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import httpx

from hermes_core.plugin import address_refusal, resolve_addresses

from .body import ACCEPT_ENCODING, BodyTooLarge, UnsupportedEncoding, read_limited
from .deadline import FetchDeadline
from .guard import Judge, Resolver, URLRefusedError, check_url
from .settings import WebSettings

REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
TEXT_MEDIA_TYPES = frozenset({"application/json", "application/xml", "application/javascript"})
HEADERS = {"User-Agent": "hermes-tools-web/0.2", "Accept-Encoding": ACCEPT_ENCODING}


class FetchError(Exception):
    """The fetch failed; the message is meant for the model."""


@dataclass(frozen=True)
class Page:
    """A fetched text response."""

    url: str  #: the final URL, after redirects
    media_type: str  #: the Content-Type without parameters, lower case
    charset: str | None  #: the Content-Type's charset, when given
    body: bytes


def is_text(media_type: str) -> bool:
    """Whether ``media_type`` is text we can return or convert (HTML, plain text, JSON, XML...)."""
    return (
        media_type.startswith("text/")
        or media_type in TEXT_MEDIA_TYPES
        or media_type.endswith(("+json", "+xml"))
    )


@dataclass(frozen=True)
class Accepted:
    """The media types a fetch reads: the test of a response's type, the ``Accept`` header sent, and the error for
    another type (``{url}`` and ``{media_type}`` are filled in)."""

    test: Callable[[str], bool]
    header: str
    refusal: str


TEXT = Accepted(is_text, "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.1",
                "{url} is {media_type}, not text: web_extract reads HTML, plain text, JSON and XML only")


def fetch(url: str, settings: WebSettings, *, resolver: Resolver = resolve_addresses,
          judge: Judge = address_refusal, accepted: Accepted = TEXT) -> Page:
    """GET ``url``, following redirects by hand so that the guard checks every hop before connecting.

    ``settings.timeout`` bounds the whole fetch, however slowly the server answers.
    """
    deadline = FetchDeadline(settings.timeout)
    try:
        with deadline, httpx.Client(headers={**HEADERS, "Accept": accepted.header}, follow_redirects=False) as client:
            for _ in range(settings.max_redirects + 1):
                addresses = check_url(url, allow_private=settings.allow_private_networks, resolver=resolver,
                                      judge=judge)
                with _first_answer(client, url, addresses, deadline) as response:
                    location = response.headers.get("location")
                    if response.status_code in REDIRECT_STATUSES and location:
                        url = str(httpx.URL(url).join(location).copy_with(fragment=None))
                        continue
                    return _read(response, url, settings, accepted)
    except URLRefusedError as exc:
        raise FetchError(str(exc)) from None
    except (TimeoutError, httpx.TimeoutException):
        raise FetchError(_timed_out(settings, url)) from None
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        if deadline.expired:  # the deadline shut the connection down under the read
            raise FetchError(_timed_out(settings, url)) from None
        raise FetchError(f"could not fetch {url}: {str(exc) or type(exc).__name__}") from None
    raise FetchError(f"too many redirects: gave up after {settings.max_redirects}, at {url}")


@contextlib.contextmanager
def _first_answer(client: httpx.Client, url: str, addresses: list[str],
                  deadline: FetchDeadline) -> Iterator[httpx.Response]:
    """The response for ``url`` from the first checked address that takes the connection (``localhost`` may
    resolve to ``::1`` and ``127.0.0.1`` while the server listens on one); Host header and TLS name stay the URL's."""
    parsed = httpx.URL(url)
    extensions = {"sni_hostname": parsed.host} if parsed.scheme == "https" else {}
    headers = {"Host": parsed.netloc.decode("ascii")}
    for index, address in enumerate(addresses):
        connected = False
        try:
            with client.stream("GET", parsed.copy_with(host=address), headers=headers,
                               extensions={**extensions, "trace": deadline.trace}, timeout=deadline.left()) as response:
                connected = True
                yield response
                return
        except httpx.ConnectError:
            if connected or index == len(addresses) - 1:
                raise


def _timed_out(settings: WebSettings, url: str) -> str:
    return f"timed out after {settings.timeout:g} s fetching {url}"


def _read(response: httpx.Response, url: str, settings: WebSettings, accepted: Accepted) -> Page:
    if response.is_error:
        raise FetchError(f"HTTP {response.status_code} {response.reason_phrase} from {url}")
    content_type = response.headers.get("content-type", "application/octet-stream")
    media_type = content_type.split(";", 1)[0].strip().lower()
    if not accepted.test(media_type):
        raise FetchError(accepted.refusal.format(url=url, media_type=media_type))
    too_large = f"the response from {url} is larger than the {settings.max_bytes} byte limit"
    declared = response.headers.get("content-length", "")
    encoding = response.headers.get("content-encoding", "")
    if declared.isdigit() and int(declared) > settings.max_bytes:
        raise FetchError(too_large)
    try:
        body = read_limited(response.iter_raw(), encoding, settings.max_bytes)
    except BodyTooLarge:
        raise FetchError(too_large) from None
    except UnsupportedEncoding:
        raise FetchError(f"{url} sent Content-Encoding {encoding!r}, which web_extract did not ask for and does "
                         "not decode (it accepts gzip and deflate)") from None
    except zlib.error as exc:
        raise FetchError(f"could not decode the {encoding} body from {url}: {exc}") from None
    return Page(url=url, media_type=media_type, charset=response.charset_encoding, body=body)

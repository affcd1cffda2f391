"""``web_search`` and its providers: SearXNG (self-hosted) and the Brave Search API.

Provider URLs come from the operator, not the model, so the SSRF guard does not apply to them.
httpx is imported only when a search runs: ``search_available`` is called to list tools.
"""

from __future__ import annotations

import html
import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypedDict

from hermes_core import tool_error

from .settings import SettingsError, WebSettings, load_settings

if TYPE_CHECKING:
    import httpx

DEFAULT_RESULTS = 5
MAX_RESULTS = 20
PROVIDER_ENV = {"searxng": "SEARXNG_URL", "brave": "BRAVE_API_KEY"}
NOT_CONFIGURED = (
    "no web search provider is configured: set SEARXNG_URL to a SearXNG instance "
    "or BRAVE_API_KEY to a Brave Search API key"
)
_TAG = re.compile(r"<[^>]+>")


class SearchResult(TypedDict):
    title: str
    url: str
    snippet: str


class SearchError(Exception):
    """A provider failed or answered something unusable; the message is meant for the model."""


class SearchUnavailable(Exception):
    """No usable provider is configured; the message is the reason shown for ``web_search``."""


class SearchProvider(Protocol):
    name: ClassVar[str]
    label: ClassVar[str]

    def search(self, client: httpx.Client, query: str, count: int) -> list[SearchResult]:
        """At most ``count`` results for ``query``."""
        ...


@dataclass(frozen=True)
class SearXNG:
    """A SearXNG instance's JSON API (``GET /search?format=json``)."""

    name: ClassVar[str] = "searxng"
    label: ClassVar[str] = "SearXNG"
    base_url: str

    def search(self, client: httpx.Client, query: str, count: int) -> list[SearchResult]:
        data = _get_json(
            client,
            self.label,
            f"{self.base_url.rstrip('/')}/search",
            params={"q": query, "format": "json"},
            forbidden_hint="is the json format enabled in the instance's settings.yml (search.formats)?",
        )
        items = data.get("results") or []
        return _normalise(items, count, snippet_key="content")


@dataclass(frozen=True)
class BraveSearch:
    """The Brave Search API (``GET /res/v1/web/search`` with an ``X-Subscription-Token`` header)."""

    name: ClassVar[str] = "brave"
    label: ClassVar[str] = "Brave Search"
    api_key: str
    base_url: str

    def search(self, client: httpx.Client, query: str, count: int) -> list[SearchResult]:
        data = _get_json(
            client,
            self.label,
            f"{self.base_url.rstrip('/')}/res/v1/web/search",
            params={"q": query, "count": count},
            headers={"Accept": "application/json", "X-Subscription-Token": self.api_key},
            forbidden_hint="check BRAVE_API_KEY",
        )
        items = (data.get("web") or {}).get("results") or []
        return _normalise(items, count, snippet_key="description")


def configured_provider(settings: WebSettings) -> SearchProvider:
    """The provider to use: ``search_provider`` if set, else SearXNG, else Brave; raises SearchUnavailable."""
    providers: dict[str, SearchProvider] = {}
    if searxng_url := os.environ.get("SEARXNG_URL", "").strip():
        providers["searxng"] = SearXNG(base_url=searxng_url)
    if brave_key := os.environ.get("BRAVE_API_KEY", "").strip():
        providers["brave"] = BraveSearch(api_key=brave_key, base_url=settings.brave_base_url)
    wanted = settings.search_provider
    if wanted is None:
        if not providers:
            raise SearchUnavailable(NOT_CONFIGURED)
        return next(iter(providers.values()))
    if wanted not in PROVIDER_ENV:
        raise SearchUnavailable(
            f"unknown search_provider {wanted!r} in plugins.entries.web.settings: "
            f"use one of {', '.join(PROVIDER_ENV)}"
        )
    if wanted not in providers:
        raise SearchUnavailable(f"search_provider is {wanted}, but {PROVIDER_ENV[wanted]} is not set")
    return providers[wanted]


def search_available() -> bool:
    """The ``check_fn`` of web_search: True, or an exception whose message says what is missing."""
    try:
        configured_provider(load_settings())
    except SettingsError as exc:
        raise SearchUnavailable(str(exc)) from None
    return True


def web_search(args: dict[str, Any], **kwargs: Any) -> str:
    """Search with the configured provider; returns ``{query, provider, results}`` as JSON."""
    import httpx

    query = str(args.get("query") or "").strip()
    if not query:
        return _error("query is required and must not be empty")
    count = max(1, min(int(args.get("max_results") or DEFAULT_RESULTS), MAX_RESULTS))
    try:
        settings = load_settings()
        provider = configured_provider(settings)
    except (SettingsError, SearchUnavailable) as exc:
        return _error(str(exc))
    try:
        with httpx.Client(timeout=settings.timeout, follow_redirects=True) as client:
            results = provider.search(client, query, count)
    except SearchError as exc:
        return _error(str(exc))
    except httpx.TimeoutException:
        return _error(f"{provider.label} did not answer within {settings.timeout:g} s")
    except httpx.HTTPError as exc:
        return _error(f"{provider.label} request failed: {str(exc) or type(exc).__name__}")
    return json.dumps({"query": query, "provider": provider.name, "results": results}, ensure_ascii=False)


def _get_json(
    client: httpx.Client,
    label: str,
    url: str,
    *,
    params: dict[str, Any],
    forbidden_hint: str,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    response = client.get(url, params=params, headers=headers)
    if response.is_error:
        hint = f": {forbidden_hint}" if response.status_code in (401, 403) else ""
        raise SearchError(f"{label} answered HTTP {response.status_code} {response.reason_phrase}{hint}")
    try:
        data = response.json()
    except ValueError:
        raise SearchError(f"{label} answered something that is not JSON (from {response.url})") from None
    if not isinstance(data, dict):
        raise SearchError(f"{label} answered JSON that is not an object (from {response.url})")
    return data


def _normalise(items: list[Any], count: int, *, snippet_key: str) -> list[SearchResult]:
    """Map a provider's result objects to ``{title, url, snippet}``; entries without a URL are skipped."""
    results: list[SearchResult] = []
    for item in items:
        if isinstance(item, dict) and item.get("url"):
            results.append(
                SearchResult(
                    title=_plain(item.get("title")),
                    url=str(item["url"]),
                    snippet=_plain(item.get(snippet_key)),
                )
            )
        if len(results) == count:
            break
    return results


def _plain(value: Any) -> str:
    """Text without markup: Brave highlights matches with ``<strong>`` and escapes entities."""
    return " ".join(html.unescape(_TAG.sub("", str(value or ""))).split())


def _error(message: str) -> str:
    return tool_error(message)

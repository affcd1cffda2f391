"""``web_search`` and its providers: those plugins register, then SearXNG (self-hosted) and the Brave Search API.

Without a ``search_provider`` setting the providers form a fallback chain: each available one is asked in
that order until one answers. Provider URLs come from the operator, not the model, so the SSRF guard does
not apply to them. httpx is imported only when a search runs: ``search_available`` is called to list tools.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypedDict

from hermes_core.plugin import tool_context

from .settings import SettingsError, WebSettings, load_settings

if TYPE_CHECKING:
    import httpx

DEFAULT_RESULTS = 5
MAX_RESULTS = 100
#: The most results the Brave Search API gives for one request.
BRAVE_MAX_COUNT = 20
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
    @property
    def name(self) -> str: ...

    @property
    def label(self) -> str: ...

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
            params={"q": query, "count": min(count, BRAVE_MAX_COUNT)},
            headers={"Accept": "application/json", "X-Subscription-Token": self.api_key},
            forbidden_hint="check BRAVE_API_KEY",
        )
        items = (data.get("web") or {}).get("results") or []
        return _normalise(items, count, snippet_key="description")


@dataclass(frozen=True)
class PluginProvider:
    """A backend a plugin registered with ``ctx.register_web_search_provider`` (Hermes Agent's protocol)."""

    label: str
    provider: Any

    @property
    def name(self) -> str:
        return str(self.provider.name)

    def search(self, client: httpx.Client, query: str, count: int) -> list[SearchResult]:
        answer = self.provider.search(query, count)
        if not isinstance(answer, dict):
            raise SearchError(f"{self.label} answered {type(answer).__name__}, not a result object")
        if answer.get("success") is False or ("error" in answer and not answer.get("data")):
            raise SearchError(f"{self.label}: {answer.get('error') or 'the search failed'}")
        data = answer.get("data")
        items = data.get("web") if isinstance(data, dict) else data
        return _normalise(items if isinstance(items, list) else [], count, snippet_key="description")


def registered_providers() -> dict[str, SearchProvider]:
    """The providers plugins registered in the calling runtime that can search, by name, in registration order."""
    providers: dict[str, SearchProvider] = {}
    for registered in tool_context().web_search_providers():
        if registered.searches():
            label = str(getattr(registered.provider, "display_name", "") or registered.name)
            providers[registered.name] = PluginProvider(label, registered.provider)
    return providers


def _available(provider: SearchProvider) -> bool:
    if not isinstance(provider, PluginProvider):
        return True  # built-in providers are only listed when their variable is set
    try:
        return bool(provider.provider.is_available())
    except Exception:
        return False


def provider_chain(settings: WebSettings) -> list[SearchProvider]:
    """The providers to ask, in order; raises SearchUnavailable with the reason when there are none.

    ``search_provider`` (else Hermes Agent's ``web.search_backend`` / ``web.backend``) names the only one;
    without it: the registered providers that report themselves available, then SearXNG, then Brave.
    """
    registered = registered_providers()
    builtin: dict[str, SearchProvider] = {}
    if searxng_url := os.environ.get("SEARXNG_URL", "").strip():
        builtin["searxng"] = SearXNG(base_url=searxng_url)
    if brave_key := os.environ.get("BRAVE_API_KEY", "").strip():
        builtin["brave"] = BraveSearch(api_key=brave_key, base_url=settings.brave_base_url)
    wanted = settings.search_provider
    if wanted is None:
        chain = [p for p in registered.values() if _available(p)] + list(builtin.values())
        if not chain:
            unavailable = "".join(f"; {name} reports itself unavailable" for name in registered)
            raise SearchUnavailable(NOT_CONFIGURED + unavailable)
        return chain
    if wanted in registered:
        if not _available(registered[wanted]):
            raise SearchUnavailable(f"search_provider is {wanted}, but it reports itself unavailable "
                                    "(is its API key set?)")
        return [registered[wanted]]
    if wanted not in PROVIDER_ENV:
        known = ", ".join([*registered, *PROVIDER_ENV])
        raise SearchUnavailable(f"unknown search_provider {wanted!r}: use one of {known}")
    if wanted not in builtin:
        raise SearchUnavailable(f"search_provider is {wanted}, but {PROVIDER_ENV[wanted]} is not set")
    return [builtin[wanted]]


def configured_provider(settings: WebSettings) -> SearchProvider:
    """The first provider :func:`provider_chain` would ask."""
    return provider_chain(settings)[0]


def search_available() -> bool:
    """The ``check_fn`` of web_search: True, or an exception whose message says what is missing."""
    try:
        provider_chain(load_settings())
    except SettingsError as exc:
        raise SearchUnavailable(str(exc)) from None
    return True


def web_search(args: dict[str, Any], **kwargs: Any) -> str:
    """Search with the first provider of the chain that answers; returns ``{query, provider, results}`` as JSON."""
    import httpx

    query = str(args.get("query") or "").strip()
    if not query:
        return _error("query is required and must not be empty")
    wanted = args.get("limit", args.get("max_results"))  # Hermes Agent's name, then this project's
    count = max(1, min(int(wanted or DEFAULT_RESULTS), MAX_RESULTS))
    try:
        settings = load_settings()
        chain = provider_chain(settings)
    except (SettingsError, SearchUnavailable) as exc:
        return _error(str(exc))
    failures = []
    with httpx.Client(timeout=settings.timeout, follow_redirects=True) as client:
        for provider in chain:
            try:
                results = provider.search(client, query, count)
            except Exception as exc:  # a plugin's provider may raise anything; the next one is asked
                failures.append(_failure(provider, exc, settings.timeout))
                continue
            return json.dumps({"query": query, "provider": provider.name, "results": results}, ensure_ascii=False)
    return _error(failures[0] if len(failures) == 1 else "no web search provider answered: " + "; ".join(failures))


def _failure(provider: SearchProvider, exc: Exception, timeout: float) -> str:
    import httpx

    if isinstance(exc, SearchError):
        return str(exc)
    if isinstance(exc, httpx.TimeoutException):
        return f"{provider.label} did not answer within {timeout:g} s"
    if isinstance(exc, httpx.HTTPError):
        return f"{provider.label} request failed: {str(exc) or type(exc).__name__}"
    return f"{provider.label} failed: {type(exc).__name__}: {exc}"


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
    import html  # with its table of entities, imported by a search, not by the check that lists tools

    return " ".join(html.unescape(_TAG.sub("", str(value or ""))).split())


def _error(message: str) -> str:
    from hermes_core.plugin import tool_error  # the call path's module: the check that lists tools needs none of it

    return tool_error(message)

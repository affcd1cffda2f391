"""web_search and its check_fn, against local servers that speak each provider's JSON format.

Provider URLs are set by the operator, so they are not subject to the SSRF guard: these servers
listen on 127.0.0.1 while ``web.allow_private_networks`` keeps its default (false).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from hermes_plugin_web.search import SearchUnavailable, configured_provider, search_available, web_search
from hermes_plugin_web.settings import WebSettings

from hermes_core import Runtime
from hermes_core.plugin import WebSearchProvider

# The shape of SearXNG's /search?format=json answer (fields we do not use trimmed).
SEARXNG_ANSWER = {
    "query": "hermes plugins",
    "number_of_results": 0,
    "results": [
        {
            "url": "https://example.org/hermes",
            "title": "Hermes plugins",
            "content": "Tools for agents, as plugins.",
            "engine": "duckduckgo",
            "engines": ["duckduckgo", "brave"],
            "score": 2.0,
            "category": "general",
        },
        {"url": "https://example.org/pluggy", "title": "pluggy", "content": "", "engine": "bing"},
        {"title": "an entry without a URL is skipped", "content": "x"},
        {"url": "https://example.org/third", "title": "Third", "content": "Third result."},
    ],
    "answers": [],
    "corrections": [],
    "infoboxes": [],
    "suggestions": ["hermes agent"],
    "unresponsive_engines": [],
}

# The shape of the Brave Search API's /res/v1/web/search answer: descriptions carry HTML highlights.
BRAVE_ANSWER = {
    "type": "search",
    "query": {"original": "hermes plugins"},
    "web": {
        "type": "search",
        "results": [
            {
                "title": "Hermes &amp; friends",
                "url": "https://example.com/hermes",
                "description": "The <strong>Hermes</strong> plugin &quot;ecosystem&quot;.",
                "is_source_local": False,
            },
            {"title": "Second", "url": "https://example.com/2", "description": "Another one."},
        ],
    },
}


def search(**args: Any) -> dict[str, Any]:
    return json.loads(web_search(args))


def query_of(path: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(path).query)


def test_searxng_results_are_normalised(local_server, web_config, monkeypatch) -> None:
    local_server.add("/search", json.dumps(SEARXNG_ANSWER), content_type="application/json")
    monkeypatch.setenv("SEARXNG_URL", local_server.url("/"))

    result = search(query="hermes plugins", max_results=3)

    assert result == {
        "query": "hermes plugins",
        "provider": "searxng",
        "results": [
            {
                "title": "Hermes plugins",
                "url": "https://example.org/hermes",
                "snippet": "Tools for agents, as plugins.",
            },
            {"title": "pluggy", "url": "https://example.org/pluggy", "snippet": ""},
            {"title": "Third", "url": "https://example.org/third", "snippet": "Third result."},
        ],
    }
    [request] = local_server.requests
    assert query_of(request.path) == {"q": ["hermes plugins"], "format": ["json"]}


def test_searxng_under_a_path_and_max_results(local_server, web_config, monkeypatch) -> None:
    local_server.add("/searx/search", json.dumps(SEARXNG_ANSWER), content_type="application/json")
    monkeypatch.setenv("SEARXNG_URL", local_server.url("/searx"))

    result = search(query="hermes", max_results=1)

    assert [r["url"] for r in result["results"]] == ["https://example.org/hermes"]


def test_hermes_agents_limit_is_the_number_of_results(local_server, web_config, monkeypatch) -> None:
    local_server.add("/search", json.dumps(SEARXNG_ANSWER), content_type="application/json")
    monkeypatch.setenv("SEARXNG_URL", local_server.url("/"))

    assert len(search(query="hermes", limit=2)["results"]) == 2
    assert len(search(query="hermes", limit=2, max_results=1)["results"]) == 2  # Hermes Agent's name wins


def test_searxng_without_json_format_gets_a_hint(local_server, web_config, monkeypatch) -> None:
    local_server.add("/search", "Forbidden", status=403, content_type="text/html")
    monkeypatch.setenv("SEARXNG_URL", local_server.url())

    error = search(query="hermes")["error"]

    assert error.startswith("SearXNG answered HTTP 403 Forbidden")
    assert "search.formats" in error


def test_provider_answer_that_is_not_json_is_an_error(local_server, web_config, monkeypatch) -> None:
    local_server.add("/search", "<html>a login page</html>", content_type="text/html")
    monkeypatch.setenv("SEARXNG_URL", local_server.url())

    assert search(query="hermes")["error"].startswith("SearXNG answered something that is not JSON")


def test_brave_results_are_normalised_and_the_key_sent(local_server, web_config, monkeypatch) -> None:
    local_server.add("/res/v1/web/search", json.dumps(BRAVE_ANSWER), content_type="application/json")
    monkeypatch.setenv("BRAVE_API_KEY", "test-key-123")
    web_config(brave_base_url=local_server.url(""))

    result = search(query="hermes plugins", max_results=7)

    assert result == {
        "query": "hermes plugins",
        "provider": "brave",
        "results": [
            {
                "title": "Hermes & friends",
                "url": "https://example.com/hermes",
                "snippet": 'The Hermes plugin "ecosystem".',
            },
            {"title": "Second", "url": "https://example.com/2", "snippet": "Another one."},
        ],
    }
    [request] = local_server.requests
    assert request.headers["X-Subscription-Token"] == "test-key-123"
    assert request.headers["Accept"] == "application/json"
    assert query_of(request.path) == {"q": ["hermes plugins"], "count": ["7"]}


def test_brave_rejected_key_gets_a_hint(local_server, web_config, monkeypatch) -> None:
    local_server.add(
        "/res/v1/web/search", '{"error": "bad key"}', status=401, content_type="application/json"
    )
    monkeypatch.setenv("BRAVE_API_KEY", "wrong")
    web_config(brave_base_url=local_server.url(""))

    assert search(query="hermes") == {
        "error": "Brave Search answered HTTP 401 Unauthorized: check BRAVE_API_KEY"
    }


def test_provider_that_does_not_answer_times_out(local_server, web_config, monkeypatch) -> None:
    local_server.add("/search", stall=True)
    monkeypatch.setenv("SEARXNG_URL", local_server.url())
    web_config(timeout=0.5)

    assert search(query="hermes") == {"error": "SearXNG did not answer within 0.5 s"}


def test_searxng_is_preferred_when_both_are_configured(web_config, monkeypatch) -> None:
    monkeypatch.setenv("SEARXNG_URL", "http://searx.invalid")
    monkeypatch.setenv("BRAVE_API_KEY", "key")

    assert configured_provider(WebSettings()).name == "searxng"


def test_search_provider_setting_picks_brave(local_server, web_config, monkeypatch) -> None:
    local_server.add("/res/v1/web/search", json.dumps(BRAVE_ANSWER), content_type="application/json")
    monkeypatch.setenv("SEARXNG_URL", "http://searx.invalid")
    monkeypatch.setenv("BRAVE_API_KEY", "key")
    web_config(search_provider="brave", brave_base_url=local_server.url(""))

    assert search(query="hermes")["provider"] == "brave"


def test_unavailable_with_a_reason_when_no_provider_is_configured(web_config) -> None:
    with pytest.raises(SearchUnavailable, match=r"no web search provider.*SEARXNG_URL.*BRAVE_API_KEY"):
        search_available()
    assert "no web search provider" in search(query="hermes")["error"]


@pytest.mark.parametrize("name", ["SEARXNG_URL", "BRAVE_API_KEY"])
def test_available_when_one_provider_is_configured(name, web_config, monkeypatch) -> None:
    monkeypatch.setenv(name, "http://searx.invalid" if name == "SEARXNG_URL" else "key")

    assert search_available() is True


def test_chosen_provider_without_its_env_var_is_unavailable(web_config, monkeypatch) -> None:
    monkeypatch.setenv("SEARXNG_URL", "http://searx.invalid")
    web_config(search_provider="brave")

    with pytest.raises(SearchUnavailable, match="search_provider is brave, but BRAVE_API_KEY is not set"):
        search_available()


def test_unknown_provider_is_unavailable(web_config, monkeypatch) -> None:
    monkeypatch.setenv("SEARXNG_URL", "http://searx.invalid")
    web_config(search_provider="altavista")

    with pytest.raises(SearchUnavailable, match="unknown search_provider 'altavista'"):
        search_available()


def test_empty_query_is_an_error(web_config, monkeypatch) -> None:
    monkeypatch.setenv("SEARXNG_URL", "http://searx.invalid")

    assert search(query="  ") == {"error": "query is required and must not be empty"}


# -- providers that plugins register -------------------------------------------------------------------


class Backend(WebSearchProvider):
    """A provider written to Hermes Agent's protocol; it answers what it was given and records its calls."""

    def __init__(self, name: str, answer: Any = None, available: bool = True) -> None:
        self._name, self.answer, self.available, self.calls = name, answer, available, []

    @property
    def name(self) -> str:
        return self._name

    def is_available(self) -> bool:
        return self.available

    def search(self, query: str, limit: int = 5) -> dict[str, Any]:
        self.calls.append((query, limit))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


HIT = {"success": True, "data": {"web": [
    {"title": "Hermes <b>plugins</b>", "url": "https://example.net/a", "description": "From a plugin.", "position": 1},
    {"title": "no url", "description": "skipped", "position": 2},
]}}


@pytest.fixture
def register(hermes_runtime: Runtime):
    def add(provider: Backend, plugin: str = "backends") -> Backend:
        hermes_runtime.context(plugin).register_web_search_provider(provider)
        return provider

    return add


def test_a_registered_provider_is_asked_first(register, local_server, web_config, monkeypatch) -> None:
    monkeypatch.setenv("SEARXNG_URL", local_server.url("/"))
    backend = register(Backend("ollama-cloud", HIT))

    assert search(query="hermes", max_results=4) == {"query": "hermes", "provider": "ollama-cloud", "results": [
        {"title": "Hermes plugins", "url": "https://example.net/a", "snippet": "From a plugin."}]}
    assert backend.calls == [("hermes", 4)] and local_server.requests == []


def test_unavailable_or_failing_providers_fall_back_along_the_chain(register, local_server, web_config,
                                                                     monkeypatch) -> None:
    local_server.add("/search", json.dumps(SEARXNG_ANSWER), content_type="application/json")
    monkeypatch.setenv("SEARXNG_URL", local_server.url("/"))
    asleep = register(Backend("asleep", HIT, available=False))
    refusing = register(Backend("refusing", {"success": False, "error": "quota exhausted"}))
    broken = register(Backend("broken", RuntimeError("boom")))

    assert search(query="hermes plugins")["provider"] == "searxng"
    assert (asleep.calls, len(refusing.calls), len(broken.calls)) == ([], 1, 1)


def test_when_every_provider_fails_the_error_names_each(register, local_server, web_config, monkeypatch) -> None:
    local_server.add("/search", "down", status=503)
    monkeypatch.setenv("SEARXNG_URL", local_server.url("/"))
    register(Backend("refusing", {"success": False, "error": "quota exhausted"}))

    assert search(query="x") == {"error": "no web search provider answered: refusing: quota exhausted; "
                                          "SearXNG answered HTTP 503 Service Unavailable"}


def test_search_provider_may_name_a_registered_provider(register, web_config, monkeypatch) -> None:
    monkeypatch.setenv("BRAVE_API_KEY", "key")
    register(Backend("first", HIT))
    chosen = register(Backend("chosen", HIT))
    web_config(search_provider="chosen")

    assert search(query="q")["provider"] == "chosen" and chosen.calls == [("q", 5)]
    chosen.available = False
    with pytest.raises(SearchUnavailable, match="search_provider is chosen, but it reports itself unavailable"):
        search_available()


def test_hermes_agent_search_backend_key_chooses_too(register, hermes_home, web_config) -> None:
    register(Backend("first", HIT))
    register(Backend("gemini", HIT))
    (hermes_home / "config.yaml").write_text(json.dumps({"web": {"search_backend": "gemini",
                                                                 "gemini_model": "flash"}}))

    assert search(query="q")["provider"] == "gemini"


def test_unavailable_registered_providers_are_named_in_the_reason(register, web_config) -> None:
    register(Backend("asleep", HIT, available=False))

    with pytest.raises(SearchUnavailable, match=r"Brave Search API key; asleep reports itself unavailable$"):
        search_available()


def test_an_object_without_the_protocol_is_ignored_with_a_warning(hermes_runtime: Runtime) -> None:
    context = hermes_runtime.context("odd")
    context.register_web_search_provider(object())

    assert hermes_runtime.web_search_providers == {}
    assert context.warnings == ["web search provider object ignored: its name raised AttributeError: "
                                "'object' object has no attribute 'name'"]

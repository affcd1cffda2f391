"""Tool search, Hermes Agent 0.19's way: rarely used tools stand behind three bridge tools.

``tools.tool_search`` (``config.yaml``) decides: when the definitions of the deferrable tools (every offered tool
but Hermes Agent's core set, :data:`~hermes_core.tools.presets.HERMES_AGENT_CORE_TOOLS`) would take
``threshold_pct`` of the model's context or more, ``get_tool_definitions`` returns the core tools and
``tool_search``, ``tool_describe`` and ``tool_call`` in their place. ``tool_call`` runs the real tool through the
same call path (hooks see its name; approvals, policies and its annotations apply). With Anthropic's API the
deferred tools can instead be marked ``defer_loading`` beside Anthropic's own tool-search tool (``defer="native"``).

The search ranks tools by BM25 over their name, description, parameter names, toolset and plugin.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

from .presets import HERMES_AGENT_CORE_TOOLS
from .registry import ToolEntry, tool_entry
from .toolnames import BRIDGE_TOOL_NAMES

__all__ = [
    "ANTHROPIC_TOOL_SEARCH",
    "BRIDGE_TOOL_NAMES",
    "TOOL_CALL",
    "TOOL_DESCRIBE",
    "TOOL_SEARCH",
    "Deferral",
    "SearchableTool",
    "ToolIndex",
    "ToolSearchSettings",
    "bridge_definitions",
    "bridge_entries",
    "deferral_of",
    "is_deferrable",
    "mark_native",
]

log = logging.getLogger(__name__)

TOOL_SEARCH: Final = "tool_search"
TOOL_DESCRIBE: Final = "tool_describe"
TOOL_CALL: Final = "tool_call"
#: Anthropic's server-side tool search (BM25 variant), added when the deferred tools are marked ``defer_loading``.
ANTHROPIC_TOOL_SEARCH: Final = {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
#: Hermes Agent's estimate of a definition's tokens: its compact JSON's characters over four.
CHARS_PER_TOKEN: Final = 4.0
#: Without a known context length, ``auto`` activates at this many tokens of deferrable definitions.
FALLBACK_TOKENS: Final = 20_000
#: The longest description a search hit shows.
HIT_DESCRIPTION: Final = 400
_CORE: Final = frozenset(HERMES_AGENT_CORE_TOOLS)

Enabled = Literal["auto", "on", "off"]


@dataclass(frozen=True)
class ToolSearchSettings:
    """``tools.tool_search``, read as Hermes Agent 0.19 reads it: ``true``/``false`` or ``{enabled: auto|on|off,
    threshold_pct, search_default_limit, max_search_limit}``; numbers are clamped to their ranges and a value that
    cannot be read falls back to its default (a typo never breaks the agent), with a warning."""

    enabled: Enabled = "auto"
    threshold_pct: float = 10.0
    search_default_limit: int = 5
    max_search_limit: int = 20

    @classmethod
    def of(cls, raw: Any) -> ToolSearchSettings:
        """The settings ``raw`` (the value of ``tools.tool_search``; None: the defaults) describes."""
        if raw is None or raw is True:
            return cls()
        if raw is False:
            return cls(enabled="off")
        if isinstance(raw, str):  # a shorthand Hermes Agent reads as the default: read as ``enabled`` here
            raw = {"enabled": raw}
        if not isinstance(raw, Mapping):
            log.warning("tools.tool_search: %r is neither true/false nor a mapping; the default (auto) is used",
                        raw)
            return cls()
        enabled = _enabled(raw.get("enabled", "auto"))
        threshold = max(0.0, min(100.0, _number(raw, "threshold_pct", 10.0, float)))
        maximum = max(1, min(50, _number(raw, "max_search_limit", 20, int)))
        default = max(1, min(maximum, _number(raw, "search_default_limit", 5, int)))
        return cls(enabled, threshold, default, maximum)

    def activates(self, deferrable_tokens: int, context_length: int | None) -> bool:
        """Whether deferrable definitions of this many tokens are deferred (``on``: whenever there are some)."""
        if self.enabled == "off" or deferrable_tokens <= 0:
            return False
        return self.enabled == "on" or deferrable_tokens >= self.threshold_tokens(context_length)

    def threshold_tokens(self, context_length: int | None) -> int:
        """The tokens of deferrable definitions at which ``auto`` activates."""
        if not context_length or context_length <= 0:
            return FALLBACK_TOKENS
        return int(context_length * self.threshold_pct / 100.0)

    def limit(self, requested: Any) -> int:
        """How many hits a search returns when the model asks for ``requested``."""
        if requested is None:
            return self.search_default_limit
        try:
            return max(1, min(self.max_search_limit, int(requested)))
        except (TypeError, ValueError, OverflowError):
            return self.search_default_limit


def _enabled(value: Any) -> Enabled:
    text = str(value).strip().lower()
    if text in ("true", "1", "yes", "on"):
        return "on"
    if text in ("false", "0", "no", "off"):
        return "off"
    if text != "auto":
        log.warning("tools.tool_search.enabled: %r is not auto, on or off; auto is used", value)
    return "auto"


def _number(raw: Mapping[str, Any], key: str, default: Any, kind: type) -> Any:
    value = raw.get(key)
    if value is None:
        return default
    try:
        number = kind(value)
        if isinstance(number, float) and not math.isfinite(number):
            raise ValueError(value)
        return number
    except (TypeError, ValueError, OverflowError):
        log.warning("tools.tool_search.%s: %r is not a number; %s is used", key, value, default)
        return default


def is_deferrable(name: str) -> bool:
    """A tool of this name may stand behind the bridge: any but Hermes Agent's core tools and the bridge's own."""
    return name not in _CORE and name not in BRIDGE_TOOL_NAMES


def estimate_tokens(definition: Mapping[str, Any]) -> int:
    """Hermes Agent's estimate of a definition's tokens (compact JSON's characters over four)."""
    return math.ceil(len(json.dumps(definition, ensure_ascii=False, separators=(",", ":"))) / CHARS_PER_TOKEN)


class SearchableTool(Protocol):
    """What the index reads of a tool (a :class:`~hermes_core.tools.registry.ToolEntry`)."""

    name: str
    toolset: str
    plugin: str | None
    description: str
    schema: dict[str, Any]


@dataclass(frozen=True)
class Deferral:
    """The outcome of one assembly: the names kept in the definitions and those behind the bridge."""

    kept: list[str]
    deferred: list[str]
    #: The deferred tools' estimated tokens as far as they were counted (counting stops once the gate is passed).
    counted_tokens: int


def deferral_of(names: Sequence[str], definition_of: Any, settings: ToolSearchSettings,
          context_length: int | None) -> Deferral | None:
    """The deferral of ``names`` (offered, available tools) under ``settings``, or None when nothing is deferred.
    ``definition_of(name)`` is a tool's definition; deferrable ones are estimated only until the threshold is
    passed (a home of thousands of tools does not render them all to learn that they are many)."""
    if settings.enabled == "off":
        return None
    deferred = [name for name in names if is_deferrable(name)]
    if not deferred:
        return None
    threshold = 1 if settings.enabled == "on" else settings.threshold_tokens(context_length)
    tokens = 0
    for name in deferred:
        tokens += estimate_tokens(definition_of(name))
        if tokens >= threshold:
            break
    if not settings.activates(tokens, context_length):
        return None
    return Deferral([name for name in names if not is_deferrable(name)], deferred, tokens)


def bridge_definitions(deferred_count: int) -> list[dict[str, Any]]:
    """The three bridge tools' definitions (Hermes Agent's names and argument shapes)."""
    def function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
        return {"type": "function", "function": {"name": name, "description": description, "parameters": {
            "type": "object", "properties": properties, "required": required}}}

    return [
        function(TOOL_SEARCH, f"Search {deferred_count} more tools that are loaded on demand; returns up to `limit` "
                 f"matches with their name and description. Then call `{TOOL_DESCRIBE}` for a tool's parameters "
                 f"and `{TOOL_CALL}` to run it. The tools listed directly need no search.",
                 {"query": {"type": "string", "description": "Keywords for the capability you need (e.g. 'create "
                                                             "github issue')."},
                  "limit": {"type": "integer", "description": "Most results to return (default 5)."}}, ["query"]),
        function(TOOL_DESCRIBE, f"The full parameter schema of one tool `{TOOL_SEARCH}` returned; needed before "
                 f"`{TOOL_CALL}` when its parameters are unknown.",
                 {"name": {"type": "string", "description": "The exact tool name, as tool_search returned it."}},
                 ["name"]),
        function(TOOL_CALL, f"Run a tool found with `{TOOL_SEARCH}`, by name, with arguments that match its schema "
                 f"(see `{TOOL_DESCRIBE}`). Hooks, policies and approvals apply as to any listed tool.",
                 {"name": {"type": "string", "description": "The exact tool name to run."},
                  "arguments": {"type": "object", "description": "The tool's arguments, matching its schema."}},
                 ["name", "arguments"]),
    ]


def bridge_entries(deferred_count: int) -> list[ToolEntry]:
    """The bridge tools as entries (what formats render; the dispatcher answers their calls, never a handler)."""
    return [tool_entry(function["name"], TOOL_SEARCH, _answered_by_the_dispatcher, description=function["description"],
                       parameters=function["parameters"], annotations={"read_only": function["name"] != TOOL_CALL})
            for function in (definition["function"] for definition in bridge_definitions(deferred_count))]


def _answered_by_the_dispatcher(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("the bridge tools are answered by the dispatcher (tools.tool_search is off?)")


def mark_native(rendered: list[dict[str, Any]], deferred: Iterable[str]) -> list[dict[str, Any]]:
    """Anthropic definitions with each of ``deferred`` marked ``defer_loading`` and Anthropic's tool-search tool
    added (the API keeps them out of the context until its search finds them)."""
    names = frozenset(deferred)
    marked = [{**definition, "defer_loading": True} if definition.get("name") in names else definition
              for definition in rendered]
    return [*marked, dict(ANTHROPIC_TOOL_SEARCH)] if names else marked


_TOKEN = re.compile(r"[A-Za-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
#: Words that carry no meaning in a query or a description.
_STOP_WORDS: Final = (
    "a an and are as at be by can do does for from get give has have how i in into is it its me my of on or our "
    "please some that the their them then this to tool tools use used using via want was we what when where which "
    "who will with you your")
_STOP: Final = frozenset(_STOP_WORDS.split())
#: How much each field of a tool counts (its name and toolset say most about what it does).
_WEIGHTS: Final = {"name": 3, "toolset": 2, "plugin": 1, "description": 1, "parameters": 1}


def _stem(word: str) -> str:
    """A light English stemmer (plurals and common endings): ``issues``/``issue``, ``creating``/``create``."""
    for suffix, replacement in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + replacement
    return word


#: Words a model writes for the same action, each read as the first of its group (in queries and in tools alike).
_SYNONYMS: Final = {word: group.split()[0] for group in (
    "delete remove cancel erase drop destroy purge unlink",
    "create add new make open insert register",
    "update edit change modify rename patch set",
    "get fetch retrieve read show view look load",
    "list enumerate browse",
    "search find query lookup locate grep",
    "send post message notify email publish",
    "run execute start launch trigger invoke",
    "stop halt kill terminate abort",
    "download pull save export",
    "upload push import",
    "photo picture image",
    "speech speak voice audio",
    "web internet online website",
    "page webpage url link",
    "file document doc",
    "folder directory dir",
    "reservation booking appointment",
    "plane flight",
    "schedule calendar",
) for word in group.split()}


def _terms(text: str) -> list[str]:
    words = _TOKEN.findall(_CAMEL.sub(" ", text))
    terms = [_stem(word) for word in (w.lower() for w in words) if word not in _STOP]
    return [_SYNONYMS.get(term, term) for term in terms]


class ToolIndex:
    """BM25 over tools' names, descriptions, parameter names, toolsets and plugins (each field weighted)."""

    K1: Final = 1.2
    B: Final = 0.75

    def __init__(self, tools: Iterable[SearchableTool]) -> None:
        self.tools: list[SearchableTool] = list(tools)
        self._documents: list[Counter[str]] = [self._document(tool) for tool in self.tools]
        self._lengths = [sum(document.values()) for document in self._documents]
        self._average = sum(self._lengths) / len(self._lengths) if self._lengths else 1.0
        frequency: Counter[str] = Counter()
        for document in self._documents:
            frequency.update(document.keys())
        count = len(self._documents)
        self._idf = {term: math.log(1 + (count - n + 0.5) / (n + 0.5)) for term, n in frequency.items()}

    @staticmethod
    def _document(tool: SearchableTool) -> Counter[str]:
        parameters = (tool.schema.get("parameters") or {}).get("properties")
        fields = {"name": tool.name, "toolset": tool.toolset, "plugin": tool.plugin or "",
                  "description": tool.description,
                  "parameters": " ".join(parameters) if isinstance(parameters, Mapping) else ""}
        document: Counter[str] = Counter()
        for field, text in fields.items():
            for term in _terms(text):
                document[term] += _WEIGHTS[field]
        return document

    def search(self, query: str, limit: int) -> list[SearchableTool]:
        """The ``limit`` tools that best match ``query``, best first (a query no word of which matches finds the
        tools whose name holds it)."""
        terms = [term for term in dict.fromkeys(_terms(query)) if term in self._idf]
        scored: list[tuple[float, int]] = []
        for position, document in enumerate(self._documents):
            score = 0.0
            norm = self.K1 * (1 - self.B + self.B * self._lengths[position] / self._average)
            for term in terms:
                frequency = document.get(term)
                if frequency:
                    score += self._idf[term] * frequency * (self.K1 + 1) / (frequency + norm)
            if score > 0:
                scored.append((-score, position))
        if not scored:
            needle = query.strip().lower()
            scored = [(0.0, position) for position, tool in enumerate(self.tools) if needle and needle in tool.name]
        scored.sort()
        return [self.tools[position] for _, position in scored[:limit]]

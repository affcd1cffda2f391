"""Select plugins before anything is imported: precedence of sources, config lists and per-process overrides."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

if TYPE_CHECKING:
    from ..config.model import HermesConfig
    from .discovery import PluginCandidate

__all__ = ["SOURCE_RANK", "TRUTHY", "PluginSelection", "SelectionPolicy", "select", "truthy"]

TRUTHY = frozenset({"1", "true", "yes", "on"})
#: Same id in two sources: the lower rank wins.
SOURCE_RANK = {"project": 0, "user": 1, "pip": 2}

Verdict = Literal["selected", "disabled", "not enabled", "shadowed"]


def truthy(value: str | None) -> bool:
    """``1 true yes on``, in any case, surrounding blanks ignored."""
    return (value or "").strip().lower() in TRUTHY


class SelectionPolicy(NamedTuple):
    """What decides which plugins load: config.yaml's lists and the per-process overrides."""

    disabled: frozenset[str] = frozenset()
    #: ``plugins.enabled``: an allow-list when present.
    enabled: frozenset[str] | None = None
    #: ``HERMES_LOAD_PLUGINS``: unset = all, empty = none, else only these (overrides ``enabled``).
    only: frozenset[str] | None = None
    #: ``HERMES_SAFE_MODE``: no plugins at all.
    safe_mode: bool = False

    @classmethod
    def of(cls, config: HermesConfig | Mapping[str, Any], environ: Mapping[str, str]) -> SelectionPolicy:
        """The policy of ``config`` (the model, or its plain data: ``HermesHome.config_data()``) and ``environ``."""
        plugins = config["plugins"] if isinstance(config, Mapping) else config.plugins.model_dump()
        only = environ.get("HERMES_LOAD_PLUGINS")
        return cls(disabled=frozenset(plugins["disabled"]),
                   enabled=frozenset(plugins["enabled"]) if plugins["enabled"] is not None else None,
                   only=frozenset(n.strip() for n in only.split(",") if n.strip()) if only is not None else None,
                   safe_mode=truthy(environ.get("HERMES_SAFE_MODE")))

    def exclusion(self, plugin_id: str) -> tuple[Verdict, str] | None:
        """Why ``plugin_id`` must not load, or None."""
        if self.safe_mode:
            return "disabled", "HERMES_SAFE_MODE is set: no plugins run"
        if plugin_id in self.disabled:
            return "disabled", "listed in plugins.disabled"
        if self.only is not None:
            return None if plugin_id in self.only else ("not enabled", "not listed in HERMES_LOAD_PLUGINS")
        if self.enabled is not None and plugin_id not in self.enabled:
            return "not enabled", "not listed in the plugins.enabled allow-list"
        return None


class PluginSelection(NamedTuple):
    """The verdict on one candidate."""

    candidate: PluginCandidate
    verdict: Verdict
    reason: str = ""


def select(candidates: Iterable[PluginCandidate], policy: SelectionPolicy) -> list[PluginSelection]:
    """Rank sources (project > user > pip) and apply the policy; ordered by id, then source rank."""
    ordered = sorted(candidates, key=lambda c: (c.id, SOURCE_RANK[c.source]))
    winners: dict[str, PluginCandidate] = {}
    selections = []
    for candidate in ordered:
        winner = winners.get(candidate.id)
        if winner is not None:
            selections.append(PluginSelection(candidate, "shadowed", f"shadowed by the {winner.source} plugin at "
                                                                     f"{winner.path or winner.module}"))
            continue
        winners[candidate.id] = candidate
        excluded = policy.exclusion(candidate.id)
        selections.append(PluginSelection(candidate, *excluded) if excluded else PluginSelection(candidate, "selected"))
    return selections

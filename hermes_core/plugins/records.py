"""``PluginRecord``: one plugin as ``plugins list`` and ``doctor`` show it, composed from what discovery,
selection and loading each found (none of them writes into another's result)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, NamedTuple

from .discovery import PluginCandidate, Source
from .loader import LoadResult
from .selection import PluginSelection

if TYPE_CHECKING:
    from .manifest import PluginManifest

__all__ = ["PluginRecord", "State"]

State = Literal["loaded", "declared", "disabled", "not enabled", "shadowed", "error"]


class PluginRecord(NamedTuple):
    """A read-only view of one plugin candidate: where it came from, whether it was selected, how it loaded."""

    candidate: PluginCandidate
    selection: PluginSelection
    load: LoadResult | None = None

    @property
    def id(self) -> str:
        return self.candidate.id

    @property
    def source(self) -> Source:
        return self.candidate.source

    @property
    def module(self) -> str:
        return self.load.module if self.load and self.load.module else self.candidate.module

    @property
    def path(self) -> str | None:
        return self.candidate.path

    @property
    def manifest_path(self) -> str | None:
        return self.candidate.manifest_path

    @property
    def manifest(self) -> PluginManifest | None:
        return self.candidate.manifest

    @property
    def distribution(self) -> str | None:
        return self.candidate.distribution

    @property
    def version(self) -> str | None:
        return self.candidate.version

    @property
    def state(self) -> State:
        if self.selection.verdict != "selected":
            return self.selection.verdict
        return self.load.state if self.load else "error"

    @property
    def reason(self) -> str:
        if self.selection.verdict != "selected":
            return self.selection.reason
        return self.load.reason if self.load else "not loaded"

    @property
    def active(self) -> bool:
        return self.state in ("loaded", "declared")

    @property
    def warnings(self) -> list[str]:
        return [*self.candidate.warnings, *(self.load.warnings if self.load else ())]

    @property
    def tools(self) -> list[str]:
        return list(self.load.tools) if self.load and self.active else []

    @property
    def hooks(self) -> list[str]:
        return list(self.load.hooks) if self.load and self.active else []

    @property
    def imported(self) -> bool:
        return bool(self.load and self.load.imported)

    @property
    def import_ms(self) -> float | None:
        return self.load.import_ms if self.load else None

    @property
    def register_ms(self) -> float | None:
        return self.load.register_ms if self.load else None

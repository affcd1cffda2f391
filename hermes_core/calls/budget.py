"""Result-size budgets: oversized results are saved in the home's ``results/`` folder and previewed; the media of
results go to its ``media/`` folder, each within a size cap."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..media import MediaStore

__all__ = ["PREVIEW_CHARS", "ResultBudget"]

log = logging.getLogger(__name__)

#: How much of an oversized result the model still sees.
PREVIEW_CHARS = 2_000


class ResultBudget:
    """Keeps each result, and each turn's results, within a character budget."""

    def __init__(self, results_dir: Path, per_tool: int = 100_000, per_turn: int = 200_000,
                 max_media_bytes: int = 20_000_000, media_keep: tuple[float, int] | None = None) -> None:
        self._results_dir = results_dir
        self.per_tool = per_tool
        self.per_turn = per_turn
        self.max_media_bytes = max_media_bytes
        #: ``tool_output.media_keep_hours`` and ``media_keep_bytes`` (None: the defaults).
        self.media_keep = media_keep

    @functools.cached_property
    def media(self) -> MediaStore:
        """Where the media of results are saved, and the only folder replies attach media from."""
        from ..media import MediaStore  # off the start-up path

        if self.media_keep is None:
            return MediaStore(self._results_dir, self.max_media_bytes)
        return MediaStore(self._results_dir, self.max_media_bytes, *self.media_keep)

    def fit(self, tool_name: str, result: str, limit: int | None) -> str:
        """``result`` if within ``limit`` (``None`` = unlimited), else a preview plus where it was saved."""
        if limit is None or len(result) <= limit:
            return result
        return self._shrink(tool_name, result, limit)

    def enforce_turn_budget(self, results: list[str], budget: int | None = None) -> list[str]:
        """Persist the largest results first until the turn's total is within ``budget``."""
        budget = self.per_turn if budget is None else budget
        results = list(results)
        total = sum(map(len, results))
        for index in sorted(range(len(results)), key=lambda i: len(results[i]), reverse=True):
            if total <= budget:
                break
            original = results[index]
            # what this result may keep: its share of what the others leave, but at least a preview
            allowance = max(budget - (total - len(original)), PREVIEW_CHARS)
            if len(original) <= allowance:
                continue
            results[index] = self._shrink("turn", original, allowance)
            total += len(results[index]) - len(original)
        return results

    def _shrink(self, tool_name: str, result: str, limit: int) -> str:
        preview = result[: min(PREVIEW_CHARS, limit)]
        from ..media import reference_lines

        # a medium's reference line outlives the cut, so the reply still carries the picture or the sound
        kept = "".join(f"\n{line}" for line in reference_lines(result) if line not in preview)
        try:
            path = self._save(tool_name, result)
        except OSError as exc:
            log.warning("could not save the oversized result of %s: %s", tool_name, exc)
            marker = (f"\n[... truncated: {len(result) - limit:,} of {len(result):,} characters not shown; "
                      f"the full result could not be saved ({exc.strerror or exc})]")
            return result[: max(limit - len(marker) - len(kept), 0)] + marker + kept
        return (f"[The result of {tool_name} has {len(result):,} characters, more than its budget of {limit:,}. "
                f"It was saved in full to {path}; read that file for the rest. First {len(preview):,} characters:]\n"
                f"{preview}{kept}")

    def _save(self, tool_name: str, result: str) -> Path:
        import tempfile  # off the start-up path: only an oversized result needs them
        import uuid

        folder = self._results_dir
        folder.mkdir(parents=True, exist_ok=True)
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", tool_name)[:64]
        path = folder / f"{time.strftime('%Y%m%d-%H%M%S')}-{safe}-{uuid.uuid4().hex[:8]}.txt"
        # a temporary file renamed into place: a full disk leaves no partial result behind, only the error
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as stream:
                stream.write(result)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        return path

"""The runtime's checkpoints (``runtime.checkpoints``): its workspace's, taken before the first file-changing call
of each turn when ``checkpoints`` is on in config.yaml, and listed, compared and restored on request.

A turn is one batch of the model's tool calls: one ``run_tool_calls`` or ``answer_tool_calls`` (or their async
twins), or the calls made inside ``with hermes_core.turn():``; a call made on its own through
``handle_function_call`` is a turn by itself. The calls that may change files are ``write_file``, ``patch`` and
``terminal`` (Hermes Agent's list); a tool's ``changes_files`` (the terminal pack's: all but read-only commands)
spares the calls it judges cannot change files. A checkpoint with nothing changed costs an ``ls-files`` and a
commit that finds nothing.
"""

from __future__ import annotations

import builtins
import logging
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from ..checks import Availability
from ..errors import CheckpointError, HermesError
from .git import git_problem
from .store import Checkpoint, CheckpointDiff, CheckpointStore, Restored

if TYPE_CHECKING:
    from ..config.model import CheckpointsConfig

__all__ = ["MUTATING_TOOLS", "Checkpoints"]

log = logging.getLogger(__name__)

#: The tools whose calls may change the workspace's files.
MUTATING_TOOLS: Final = frozenset({"write_file", "patch", "terminal"})


class Checkpoints:
    """The checkpoints of ``workspace`` in the store under ``root``; ``settings`` reads ``checkpoints:``."""

    def __init__(self, root: Path, workspace: Path, settings: Callable[[], CheckpointsConfig]) -> None:
        self.root = root
        self.workspace = workspace
        self._settings = settings
        self._lock = threading.Lock()
        self._turns: weakref.WeakSet[object] = weakref.WeakSet()
        self._pruned = False
        self._warned = False

    @property
    def enabled(self) -> bool:
        """``checkpoints`` is on in config.yaml."""
        return self._settings().enabled

    def availability(self) -> Availability:
        """Whether checkpoints can be taken here (git is installed), and why not."""
        problem = git_problem()
        return Availability(problem is None, problem or "")

    def _store(self) -> CheckpointStore:
        problem = git_problem()
        if problem:
            raise CheckpointError(problem)
        return CheckpointStore(self.root, self._settings())

    # -- the host API ---------------------------------------------------------------------------------------

    def take(self, reason: str = "checkpoint") -> Checkpoint | None:
        """Checkpoint the workspace now (``None`` when nothing changed since the newest checkpoint)."""
        return self._store().take(self.workspace, reason)

    def list(self, limit: int | None = None) -> list[Checkpoint]:
        """The workspace's checkpoints, newest first."""
        return self._store().list(self.workspace, limit)

    def diff(self, checkpoint_id: str) -> CheckpointDiff:
        """How the workspace differs from checkpoint ``checkpoint_id`` (its id or a prefix of 4+ hex digits)."""
        return self._store().diff(self.workspace, checkpoint_id)

    def restore(self, checkpoint_id: str, path: str | None = None) -> Restored:
        """Make the workspace (only ``path`` of it, when given; a path outside the workspace is refused) as
        checkpoint ``checkpoint_id`` holds it, after checkpointing the workspace as it is."""
        return self._store().restore(self.workspace, checkpoint_id, path)

    def prune(self) -> builtins.list[str]:
        """Prune the store now (see :meth:`CheckpointStore.prune`); the workspaces whose checkpoints were dropped."""
        return self._store().prune(force=True)

    # -- the dispatch pipeline's step -----------------------------------------------------------------------

    def watches(self, tool_name: str) -> bool:
        """Whether calls of ``tool_name`` may change the workspace's files."""
        return tool_name in MUTATING_TOOLS

    def before_mutation(self, tool_name: str, turn: object) -> None:
        """Checkpoint the workspace before ``tool_name`` runs, unless this ``turn`` already has one (or checkpoints
        were turned off since). A checkpoint that fails is logged and the call goes on."""
        with self._lock:
            if turn in self._turns or not self.enabled:
                return
            self._turns.add(turn)
            try:
                store = self._store()
                store.take(self.workspace, f"before {tool_name}")
                if not self._pruned:
                    self._pruned = True
                    store.prune()
            except (HermesError, OSError) as exc:
                if not self._warned:  # once: a missing git would say the same before every turn
                    log.warning("no checkpoint of %s before %s: %s", self.workspace, tool_name, exc)
                    self._warned = git_problem() is not None

"""The slot a compatibility layer fills: plugins written against another host's internals (Hermes Agent's
``tools.registry``, ``hermes_cli.config``...) need help the core cannot give by itself.

The core below ``plugins`` never looks for such a layer: it asks :data:`INTEROP` for what it needs (why plugin code
failed, what a tool's check looked for, which plugin owns the code being loaded), and gets the plain answers until a
layer fills the slot. ``hermes_core.plugins.compat`` fills it when the runtime that loads plugins installs it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Protocol

__all__ = ["INTEROP", "Interop", "Slot"]


class Interop(Protocol):
    """What a compatibility layer offers the core."""

    def explain(self, exc: BaseException) -> str:
        """Why plugin code failed with ``exc`` (by default ``str(exc)``): for an import of another host's internal,
        the import, the plugin's file and line, and whether the layer serves it."""

    def noting(self) -> contextlib.AbstractContextManager[list[str]]:
        """Collect, for the block, what plugin code looked for and the layer lacks (a tool's check says why)."""

    def adopt(self, prefix: str, context: object) -> None:
        """Code under module ``prefix`` belongs to the plugin whose ``PluginContext`` is ``context``."""

    def loading(self, context: object) -> contextlib.AbstractContextManager[None]:
        """For the block, the plugin of ``context`` is being imported and registered."""

    def import_problem(self, exc: ImportError, prefix: str, root: str | None) -> str | None:
        """The load error of a plugin (code under ``prefix``, files relative to ``root``) that imports another host's
        internal the layer does not serve; ``None`` for other imports."""

    def registered(self, context: object) -> None:
        """The ``register`` of the plugin of ``context`` returned: the layer takes up what its code patched."""


class Plain:
    """No compatibility layer: plain answers, nothing adopted."""

    def explain(self, exc: BaseException) -> str:
        return str(exc)

    @contextlib.contextmanager
    def noting(self) -> Iterator[list[str]]:
        yield []

    def adopt(self, prefix: str, context: object) -> None:
        """Nothing to adopt code for."""

    def loading(self, context: object) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def import_problem(self, exc: ImportError, prefix: str, root: str | None) -> str | None:
        return None

    def registered(self, context: object) -> None:
        """Nothing patched to take up."""


class Slot:
    """The layer in force: :class:`Plain` until one fills the slot."""

    def __init__(self) -> None:
        self.layer: Interop = Plain()

    def fill(self, layer: Interop) -> Callable[[], None]:
        """Put ``layer`` in force; returns what puts the previous one back."""
        previous, self.layer = self.layer, layer

        def undo() -> None:
            self.layer = previous

        return undo


#: The one slot of this process (the layer serves every runtime: it tells them apart by the plugin it acts for).
INTEROP = Slot()

"""``"package.module:attr"`` references, resolved on first use (npe2's ``python_name``)."""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import ReferenceImportError
from ..workers.streams import kept_streams

__all__ = ["LazyReference", "ReferenceImportError", "resolve_reference"]


def resolve_reference(reference: str, package: str | None = None) -> Any:
    """Import ``module:attr.sub`` (``module`` may start with ``.``, relative to ``package``)."""
    module_name, colon, attr_path = reference.partition(":")
    if not module_name or (module_name.startswith(".") and not package):
        raise ReferenceImportError(f"{reference!r} is not a 'module:attribute' reference")
    absolute = importlib.util.resolve_name(module_name, package) if module_name.startswith(".") else module_name
    import pkgutil  # off the start-up path: listing resolves no reference

    try:
        return pkgutil.resolve_name(f"{absolute}{colon}{attr_path}")
    except AttributeError as exc:
        # pkgutil names the object and the attribute; say which reference it was
        raise ReferenceImportError(f"{reference!r}: {exc}") from None
    except ValueError:
        raise ReferenceImportError(f"{reference!r} is not a 'module:attribute' reference") from None


class LazyReference:
    """A callable that imports its target on the first call and caches it."""

    __slots__ = ("_lock", "_target", "adapt", "origin", "owner", "package", "reference")

    def __init__(self, reference: str, package: str | None = None, owner: str | None = None,
                 origin: str | None = None, adapt: Callable[[Any], Any] | None = None) -> None:
        self.reference = reference
        self.package = package
        self.owner = owner
        #: The folder ``package`` must be imported from (a pip plugin's installed package), if known.
        self.origin = origin
        #: Turns the imported object into what is called (a ``@tool`` function into its handler).
        self.adapt = adapt
        self._target: Any = None
        self._lock = threading.Lock()

    @property
    def loaded(self) -> bool:
        return self._target is not None

    def resolve(self) -> Any:
        """The target, imported now if it was not yet."""
        if self._target is None:
            with self._lock:
                if self._target is None:
                    try:
                        self._check_origin()
                        with kept_streams():
                            target = resolve_reference(self.reference, self.package)
                        self._target = self.adapt(target) if self.adapt is not None else target
                    except Exception as exc:
                        owner = f"plugin {self.owner!r}: " if self.owner else ""
                        detail = exc if isinstance(exc, ReferenceImportError) else f"{type(exc).__name__}: {exc}"
                        raise ReferenceImportError(
                            f"{owner}cannot import {self.reference!r}: {detail}"
                        ) from exc
        return self._target

    def _check_origin(self) -> None:
        """Refuse to run a module of the plugin's package that does not come from the plugin's own folder."""
        if self.origin is None or not self.package:
            return
        module_name = self.reference.partition(":")[0]
        if module_name.startswith("."):
            module_name = self.package + module_name if module_name != "." else self.package
        if module_name != self.package and not module_name.startswith(self.package + "."):
            return
        spec = importlib.util.find_spec(self.package)
        location = Path(spec.origin).resolve().parent if spec and spec.origin else None
        expected = Path(self.origin).resolve()
        if location is not None and location != expected:
            raise ReferenceImportError(
                f"package {self.package!r} resolves to {location}, not to the folder its distribution installed "
                f"({expected}): a folder of that name earlier on sys.path shadows the plugin, and its code is not run")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return (self._target or self.resolve())(*args, **kwargs)

    def __repr__(self) -> str:
        return f"LazyReference({self.reference!r})"

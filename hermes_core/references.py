"""``"package.module:attr"`` references, resolved on first use (npe2's ``python_name``)."""

from __future__ import annotations

import importlib
import threading
from typing import Any

__all__ = ["LazyReference", "ReferenceImportError", "resolve_reference"]


class ReferenceImportError(ImportError):
    """A ``module:attr`` reference does not resolve."""


def resolve_reference(reference: str, package: str | None = None) -> Any:
    """Import ``module:attr.sub`` (``module`` may start with ``.``, relative to ``package``)."""
    module_name, _, attr_path = reference.partition(":")
    if not module_name or (module_name.startswith(".") and not package):
        raise ReferenceImportError(f"{reference!r} is not a 'module:attribute' reference")
    module = importlib.import_module(module_name, package if module_name.startswith(".") else None)
    target: Any = module
    for attr in filter(None, attr_path.split(".")):
        try:
            target = getattr(target, attr)
        except AttributeError:
            raise ReferenceImportError(f"{reference!r}: {target!r} has no attribute {attr!r}") from None
    return target


class LazyReference:
    """A callable that imports its target on the first call and caches it."""

    __slots__ = ("_lock", "_target", "owner", "package", "reference")

    def __init__(self, reference: str, package: str | None = None, owner: str | None = None) -> None:
        self.reference = reference
        self.package = package
        self.owner = owner
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
                        self._target = resolve_reference(self.reference, self.package)
                    except Exception as exc:
                        owner = f"plugin {self.owner!r}: " if self.owner else ""
                        detail = exc if isinstance(exc, ReferenceImportError) else f"{type(exc).__name__}: {exc}"
                        raise ReferenceImportError(
                            f"{owner}cannot import {self.reference!r}: {detail}"
                        ) from exc
        return self._target

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return (self._target or self.resolve())(*args, **kwargs)

    def __repr__(self) -> str:
        return f"LazyReference({self.reference!r})"

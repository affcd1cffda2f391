"""Approval policies and tool scopes: which tools a runtime, or a filtered view of it, offers and runs, and which
of them ask before they run.

- ``dangerous`` (the default): what asks is the terminal's dangerous-command rules and hooks that answer
  ``{"action": "approve"}``.
- ``writes``: in addition, every tool that is not annotated ``read_only`` asks the approval callback first.
- ``read-only``: only tools annotated ``read_only`` are offered and run; any other call is refused.

A scope narrows its parent (a view of a view narrows both) and is never less strict than it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Final, Literal

from ..errors import PolicyError
from .registry import ToolEntry, ToolRegistry
from .toolsets import Toolsets, UnknownToolsetError

__all__ = ["POLICIES", "Policy", "PolicyError", "ToolScope", "check_policy", "stricter"]

log = logging.getLogger(__name__)

Policy = Literal["dangerous", "writes", "read-only"]
#: The approval policies, least strict first.
POLICIES: Final[tuple[Policy, ...]] = ("dangerous", "writes", "read-only")


def check_policy(value: str) -> Policy:
    """``value`` as a :data:`Policy`; raises :class:`PolicyError` naming the policies otherwise."""
    for policy in POLICIES:
        if value == policy:
            return policy
    raise PolicyError(f"unknown approval policy {value!r}; the policies are "
                      + ", ".join(repr(name) for name in POLICIES))


def stricter(first: Policy, second: Policy) -> Policy:
    """The stricter of two policies."""
    return first if POLICIES.index(first) >= POLICIES.index(second) else second


class ToolScope:
    """The tools one runtime or one filtered view offers and dispatches, and the approval policy they run under.

    The root scope of a runtime holds every tool and runs it under :attr:`own_policy`, else under what
    ``default_policy()`` says when first asked (``approvals.policy`` of the runtime's config). A narrowed scope
    keeps only the tools it selects (a tool named in ``tools`` or belonging to one of ``toolsets``, resolved
    again whenever the registry changes), only read-only ones when ``read_only``, and runs them under its own
    policy or its parent's, whichever is stricter.
    """

    def __init__(self, registry: ToolRegistry, toolsets: Toolsets, policy: Policy | None = None,
                 default_policy: Callable[[], Policy] | None = None, *, tools: Iterable[str] | None = None,
                 toolset_names: Iterable[str] | None = None, read_only: bool = False,
                 parent: ToolScope | None = None) -> None:
        self.registry = registry
        self.toolsets = toolsets
        self.parent = parent
        #: The scope's own policy (None: its parent's; for a root scope, ``default_policy()``, read when needed).
        self.own_policy = policy
        self._default_policy = default_policy
        self._tools = None if tools is None else frozenset(tools)
        self._toolset_names = None if toolset_names is None else tuple(toolset_names)
        self._read_only = read_only
        #: A runtime's own scope: every tool is in it (the policy may still refuse some).
        self._everything = parent is None and tools is None and toolset_names is None and not read_only
        self._selected: tuple[int, frozenset[str] | None] = (-1, None)
        self._lock = threading.Lock()

    def narrowed(self, tools: Iterable[str] | None = None, toolsets: Iterable[str] | None = None,
                 read_only: bool = False, policy: str | None = None) -> ToolScope:
        """A scope of this one's tools: those named in ``tools`` or in ``toolsets`` (all when both are None),
        only the read-only ones with ``read_only``, under ``policy`` when it is stricter than this scope's.

        An unknown toolset raises :class:`~hermes_core.errors.UnknownToolsetError`; an unknown policy
        :class:`PolicyError`. A tool name not registered (yet) is kept, with a warning.
        """
        names = None if tools is None else [tools] if isinstance(tools, str) else list(tools)
        toolset_names = None if toolsets is None else [toolsets] if isinstance(toolsets, str) else list(toolsets)
        fixed = None if policy is None else check_policy(policy)
        if toolset_names:
            _, unknown = self.toolsets.resolve_many(toolset_names)
            if unknown:
                raise UnknownToolsetError(unknown[0])
        missing = [name for name in names or () if name not in self.registry]
        if missing:
            log.warning("a filtered view names tool%s that %s not registered (yet): %s", "s" * (len(missing) > 1),
                        "are" if len(missing) > 1 else "is", ", ".join(missing))
        return ToolScope(self.registry, self.toolsets, fixed, tools=names, toolset_names=toolset_names,
                         read_only=read_only, parent=self)

    # -- what the scope holds --------------------------------------------------------------------------

    def policy(self) -> Policy:
        """The approval policy the scope's calls run under."""
        own = self.own_policy
        if self.parent is None:
            if own is None:  # read once, not per call: reading the config costs more than a call
                own = self.own_policy = self._default_policy() if self._default_policy else "dangerous"
            return own
        parents = self.parent.policy()
        return parents if own is None else stricter(own, parents)

    @property
    def _selection_given(self) -> bool:
        return self._tools is not None or self._toolset_names is not None

    def contains(self, name: str) -> bool:
        """``name`` is one of the tools this scope selects (whatever its annotations)."""
        if self.parent is not None and not self.parent.contains(name):
            return False
        selected = self._selection()
        return selected is None or name in selected

    def _selection(self) -> frozenset[str] | None:
        if not self._selection_given:
            return None
        generation, selected = self._selected
        if generation != self.registry.generation:
            with self._lock:
                generation = self.registry.generation
                resolved, _ = self.toolsets.resolve_many(self._toolset_names or ())
                selected = (self._tools or frozenset()) | frozenset(resolved)
                self._selected = (generation, selected)
        return selected

    def _read_only_view(self) -> bool:
        return self._read_only or (self.parent is not None and self.parent._read_only_view())

    def refusal(self, entry: ToolEntry) -> str | None:
        """Why this scope neither offers nor runs ``entry`` (a message for the model), or None when it does."""
        read_only = entry.annotations.read_only is True
        if self._everything:  # a runtime's own scope, which every call consults: the short way
            return None if read_only or self.policy() != "read-only" else _refused_by_policy(entry.name)
        name = entry.name
        if not self.contains(name):
            return f"Tool '{name}' is not offered here: it is outside this filtered view of the tools"
        if read_only:
            return None
        if self.policy() == "read-only":
            return _refused_by_policy(name)
        if self._read_only_view():
            return f"Tool '{name}' is refused: this view offers only read-only tools, and '{name}' is not read-only"
        return None

    def offers(self, entry: ToolEntry) -> bool:
        """The scope offers ``entry`` to the model and runs its calls."""
        return self.refusal(entry) is None

    def names(self, names: Iterable[str] | None = None) -> list[str]:
        """Of ``names`` (default: every registered tool), those this scope offers, in order."""
        candidates = self.registry.names() if names is None else names
        registry = self.registry
        if self._everything and self.policy() != "read-only":  # every registered tool: none is looked at
            return list(candidates) if names is None else [name for name in candidates if name in registry]
        return [name for name in candidates if (entry := registry.get(name)) is not None and self.offers(entry)]

    def asks(self, entry: ToolEntry) -> bool:
        """A call of ``entry`` asks the approval callback before it runs (policy ``writes``, not read-only)."""
        return entry.annotations.read_only is not True and self.policy() == "writes"

    def checks_arguments(self, entry: ToolEntry) -> bool:
        """Calls of the read-only ``entry`` whose ``destructive_if`` arguments they give are asked about or refused
        here (policy ``writes`` or ``read-only``, or a read-only view)."""
        annotations = entry.annotations
        return bool(annotations.destructive_if) and annotations.read_only is True and (
            self.policy() != "dangerous" or self._read_only_view())

    def argument_refusal(self, name: str, given: list[str]) -> str | None:
        """Why this scope refuses a call of read-only tool ``name`` that gives its destructive arguments ``given``
        (a message for the model), or None when the call may run (after asking, under ``writes``)."""
        if self.policy() != "read-only" and not self._read_only_view():
            return None
        arguments = ", ".join(f"'{argument}'" for argument in given)
        where = ("the approval policy 'read-only' runs only calls that change nothing" if self.policy() == "read-only"
                 else "this view offers only read-only tools")
        return (f"Tool '{name}' is refused with {arguments}: {where}, and a call of '{name}' with {arguments} may "
                f"change things. Call it without {arguments}.")


def _refused_by_policy(name: str) -> str:
    return (f"Tool '{name}' is refused by the approval policy 'read-only': only tools annotated read-only run, and "
            f"'{name}' is not")

"""``Contributions``: everything plugins add to one runtime — tools, toolsets, hooks, middleware, commands, skills."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from ..backends.base import BackendContribution
from ..calls.hooks import HookRunner
from ..calls.middleware import Middleware
from ..config.untrusted import TEXT_LIMIT, read_untrusted_text
from ..state.providers import RegisteredMemoryProvider
from ..tools.registry import ToolRegistry, Undo
from ..tools.toolsets import Toolsets
from ..tools.websearch import RegisteredWebSearchProvider

__all__ = ["NO_GATEWAY", "CliCommand", "Command", "Contributions", "Platform", "Skill", "put"]



class Command(NamedTuple):
    """An in-session slash command ``/name``."""

    name: str
    handler: Callable[[str], Any]
    description: str
    args_hint: str
    plugin: str | None
    #: The tools ``slash_command`` may use while running it (``None``: the model may not run it at all).
    allowed_tools: tuple[str, ...] | None = None
    #: Whether it only reads: ``slash_command`` then runs it on a read-only view of its tools.
    read_only: bool = True


class CliCommand(NamedTuple):
    """A ``hermes <name>`` subcommand whose arguments an argparse ``setup_fn`` declares."""

    name: str
    help: str
    setup_fn: Callable[[Any], None]
    handler_fn: Callable[[Any], Any] | None
    description: str
    plugin: str | None


#: What a registered messaging platform is in Hermes.
NO_GATEWAY = "registered, not run: Hermes runs no messaging gateway"


class Platform(NamedTuple):
    """A messaging platform a plugin registered for Hermes Agent's gateway (``ctx.register_platform``)."""

    name: str
    label: str
    plugin: str | None
    #: The names of the other keywords it passed (adapter factory, checks, hints...), for ``info``.
    details: list[str]


class Skill(NamedTuple):
    """A read-only skill ``<plugin>:<name>``: a Markdown file, or a folder with ``SKILL.md``."""

    name: str
    path: Path
    description: str
    plugin: str | None

    @property
    def document(self) -> Path:
        return self.path / "SKILL.md" if self.path.is_dir() else self.path

    def read(self) -> str:
        return read_untrusted_text(self.document, TEXT_LIMIT, follow_symlinks=True)


def put(table: dict[str, Any], key: str, value: Any) -> Undo:
    """Set ``table[key]``; returns what puts back what was there (if it was not replaced since)."""
    previous = table.get(key)
    table[key] = value

    def undo() -> None:
        if table.get(key) is value:
            if previous is None:
                del table[key]
            else:
                table[key] = previous

    return undo


class Contributions:
    """The tables plugins write into; the runtime owns one, collaborators get the parts they use."""

    def __init__(self, registry: ToolRegistry, toolsets: Toolsets, hooks: HookRunner) -> None:
        self.registry = registry
        self.toolsets = toolsets
        self.hooks = hooks
        self.middleware: Middleware = {}
        self.commands: dict[str, Command] = {}
        self.cli_commands: dict[str, CliCommand] = {}
        self.skills: dict[str, Skill] = {}
        #: Web search backends by name, in registration order (``web_search`` asks them first).
        self.web_search_providers: dict[str, RegisteredWebSearchProvider] = {}
        #: Execution backends by name (the built-in ``local`` among them).
        self.backends: dict[str, BackendContribution] = {}
        #: Messaging platforms by name: recorded, never run (:data:`NO_GATEWAY`).
        self.platforms: dict[str, Platform] = {}
        #: Memory providers by name (``memory.provider`` selects one).
        self.memory_providers: dict[str, RegisteredMemoryProvider] = {}

    def add_middleware(self, kind: str, plugin: str, callback: Callable[..., Any]) -> Undo:
        """Append ``callback`` of ``plugin`` to the ``kind`` chain; returns what removes it again."""
        chain = self.middleware.setdefault(kind, [])
        item = (plugin, callback)
        chain.append(item)

        def undo() -> None:
            chain.remove(item)
            if not chain:
                self.middleware.pop(kind, None)

        return undo

    def of_plugin(self, plugin_id: str) -> dict[str, list[str]]:
        """Names of the commands, CLI commands, skills, middleware kinds, web search providers, messaging platforms
        and memory providers ``plugin_id`` contributed."""
        return {
            "commands": sorted(name for name, c in self.commands.items() if c.plugin == plugin_id),
            "cli_commands": sorted(name for name, c in self.cli_commands.items() if c.plugin == plugin_id),
            "skills": sorted(name for name, s in self.skills.items() if s.plugin == plugin_id),
            "middleware": sorted(kind for kind, chain in self.middleware.items()
                                 if any(plugin == plugin_id for plugin, _ in chain)),
            "web_search_providers": sorted(name for name, p in self.web_search_providers.items()
                                           if p.plugin == plugin_id),
            "platforms": sorted(name for name, p in self.platforms.items() if p.plugin == plugin_id),
            "memory_providers": sorted(name for name, p in self.memory_providers.items() if p.plugin == plugin_id),
        }

"""What every command group shares: the runtime, JSON output and user errors."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

import click

from ..config.home import HermesHome

if TYPE_CHECKING:
    from ..runtime import Runtime

__all__ = [
    "LazyGroup",
    "UserError",
    "echo_json",
    "home",
    "list_timeout",
    "not_answered",
    "plugin_cli_command",
    "require_extra",
    "runtime",
    "waiting_for_servers",
]


class UserError(click.ClickException):
    """A mistake the user can fix: one line, exit code 1, no traceback."""


def require_extra(module: str, extra: str, command: str) -> None:
    """Import ``module`` (so the command's own imports then succeed), or fail in one line naming the
    ``hermes-tools`` extra that installs it and the install command."""
    try:
        importlib.import_module(module)
    except ImportError as exc:
        raise UserError(f"`hermes {command}` needs the {extra!r} extra ({exc}): "
                        f"pip install 'hermes-tools[{extra}]'") from None


def home() -> HermesHome:
    """The home of this command (``$HERMES_HOME``), for commands that need no plugins loaded."""
    return HermesHome.from_env()


def runtime(for_tool: str | None = None) -> Runtime:
    """The default runtime with its plugins loaded (``for_tool``: what a call of that tool needs first, see
    ``Runtime.load_plugins``)."""
    from ..runtime import default_runtime

    return default_runtime(for_tool=for_tool)


def list_timeout(rt: Runtime) -> float:
    """``mcp.list_timeout``: seconds a listing waits for MCP servers that have not answered yet."""
    return float(rt.home.config_data()["mcp"]["list_timeout"])


def waiting_for_servers(timeout: float) -> Any:
    """What a listing calls with the MCP servers it is about to wait for: it says so on stderr."""

    def say(names: list[str]) -> None:
        click.echo(f"waiting up to {timeout:g} s (mcp.list_timeout) for MCP server{'s' * (len(names) > 1)} "
                   f"{', '.join(repr(name) for name in names)}...", err=True)

    return say


def not_answered(names: list[str], timeout: float) -> None:
    """Say which MCP servers a listing went on without."""
    if names:
        click.echo(f"no answer yet from MCP server{'s' * (len(names) > 1)} {', '.join(repr(n) for n in names)} "
                   f"within {timeout:g} s (mcp.list_timeout): listed without {'their' if len(names) > 1 else 'its'} "
                   "tools; `hermes mcp list` waits for them, and a call of one of them connects", err=True)


class LazyGroup(click.Group):
    """A group some of whose commands live in other modules, imported only when that command runs (its
    ``--help`` included): ``lazy`` maps a name to ``("module:attribute", "one line of help")``."""

    def __init__(self, *args: Any, lazy: dict[str, tuple[str, str]] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = lazy or {}

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *self.lazy})

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy:
            module, _, attribute = self.lazy[name][0].partition(":")
            command: click.Command = getattr(importlib.import_module(module), attribute)
            return command
        return super().get_command(ctx, name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                           list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            # click suggests only among the commands it holds, and the lazy ones are not among them
            name = args[0] if args else ""
            if ctx.resilient_parsing or not name or name.startswith("-"):
                raise
            import difflib

            close = difflib.get_close_matches(name, self.list_commands(ctx), n=3, cutoff=0.6)
            if not close:
                raise
            raise click.UsageError(f"No such command {name!r}. Did you mean {' or '.join(map(repr, close))}?",
                                   ctx) from exc

    def command_rows(self, ctx: click.Context, limit: int) -> list[tuple[str, str]]:
        """``(name, help)`` of each command, lazy ones from their declared help (nothing is imported)."""
        rows = []
        for name in self.list_commands(ctx):
            if name in self.lazy:
                rows.append((name, self.lazy[name][1]))
            elif (command := super().get_command(ctx, name)) is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(limit=limit)))
        return rows

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        names = self.list_commands(ctx)
        rows = self.command_rows(ctx, formatter.width - 6 - max(map(len, names), default=0))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def echo_json(data: Any) -> None:
    """Stable JSON output: sorted keys, two-space indent, control and bidi characters escaped."""
    from .jsontext import indented_json
    from .safetext import json_safe

    click.echo(json_safe(indented_json(data)))


def plugin_cli_command(name: str) -> click.Command | None:
    """A click command that hands its arguments to a plugin's argparse ``setup_fn`` and ``handler_fn``."""
    registered = runtime().cli_commands.get(name)
    if registered is None:
        return None

    @click.command(name=name, help=registered.help, context_settings={"ignore_unknown_options": True,
                                                                      "allow_extra_args": True,
                                                                      "help_option_names": []})
    @click.argument("argv", nargs=-1, type=click.UNPROCESSED)
    def command(argv: tuple[str, ...]) -> None:
        import argparse

        parser = argparse.ArgumentParser(prog=f"hermes {name}", description=registered.description or None)
        registered.setup_fn(parser)
        args = parser.parse_args(list(argv))
        handler = registered.handler_fn or getattr(args, "func", None)
        if handler is None:
            parser.print_help()
            return
        result = handler(args)
        if isinstance(result, int) and result:
            raise click.exceptions.Exit(result)

    return command

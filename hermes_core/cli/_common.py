"""What every command group shares: the runtime, JSON output and user errors."""

from __future__ import annotations

import argparse
import json
from typing import Any

import click

from ..home import HermesHome
from ..runtime import Runtime, default_runtime

__all__ = ["UserError", "echo_json", "home", "plugin_cli_command", "runtime"]


class UserError(click.ClickException):
    """A mistake the user can fix: one line, exit code 1, no traceback."""


def home() -> HermesHome:
    """The home of this command (``$HERMES_HOME``), for commands that need no plugins loaded."""
    return HermesHome.from_env()


def runtime() -> Runtime:
    """The default runtime with its plugins loaded."""
    return default_runtime()


def echo_json(data: Any) -> None:
    """Stable JSON output: sorted keys, two-space indent."""
    click.echo(json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False, default=str))


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

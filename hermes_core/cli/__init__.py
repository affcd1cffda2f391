"""The ``hermes`` command line; each command group lives in its own module, imported on use."""

from __future__ import annotations

import os
import sys
import threading
from typing import NoReturn

import click

from .._version import __version__
from ..errors import HermesError
from ._common import LazyGroup, plugin_cli_command
from .table import colour_enabled

__all__ = ["cli", "main"]

#: Each built-in group: the module that defines it (as a click group of the same name), and its help line.
_GROUPS = {
    "plugins": ("hermes_core.cli.plugins", "Find, install, enable and inspect plugins."),
    "tools": ("hermes_core.cli.tools", "List, show and call tools."),
    "toolsets": ("hermes_core.cli.toolsets", "List toolsets and what they resolve to."),
    "mcp": ("hermes_core.cli.mcp", "Use MCP servers' tools; serve Hermes tools over MCP."),
    "index": ("hermes_core.cli.index", "Maintain the plugin index."),
    "skills": ("hermes_core.cli.skills", "List, show, validate, create and install skills."),
}


class HermesGroup(LazyGroup):
    """Built-in groups load lazily; commands that plugins register are added after them."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        if ctx.resilient_parsing:  # shell completion: plugins' commands are known only once their code has run
            return [*self.lazy]
        from ._common import runtime

        return [*self.lazy, *sorted(runtime().cli_commands)]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy:
            return super().get_command(ctx, name)
        return None if ctx.resilient_parsing else plugin_cli_command(name)

    def command_rows(self, ctx: click.Context, limit: int) -> list[tuple[str, str]]:
        from ._common import runtime

        return [(name, help_text) for name, (_, help_text) in self.lazy.items()] + \
            [(name, command.help) for name, command in sorted(runtime().cli_commands.items())]


@click.group(cls=HermesGroup, lazy={name: (f"{module}:{name}", text) for name, (module, text) in _GROUPS.items()},
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="hermes")
def cli() -> None:
    """Hermes: tools for AI agents, as plugins.

    Shell completion: eval "$(_HERMES_COMPLETE=bash_source hermes)" (zsh_source, fish_source for others).
    """


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of the console script: user errors print one line and exit non-zero."""
    _leave(_run(argv))


def _run(argv: list[str] | None) -> int:
    try:
        # without standalone mode click returns the code of a click.exceptions.Exit instead of raising it
        returned = cli.main(args=argv, prog_name="hermes", standalone_mode=False,
                            color=None if colour_enabled() else False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        return 1
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except HermesError as exc:
        click.echo(f"Error: {exc}", err=True)
        return 1
    return returned if isinstance(returned, int) else 0


def _leave(code: int) -> NoReturn:
    """Exit with ``code``; a thread a plugin started and left running does not keep the command alive."""
    runtime = sys.modules.get("hermes_core.runtime")
    if runtime is not None:  # MCP sessions and their child processes end here, not at interpreter exit
        runtime.reset_default_runtime()
    main_thread = threading.main_thread()
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not main_thread):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)

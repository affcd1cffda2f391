"""The ``hermes`` command line; each command group lives in its own module, imported on use."""

from __future__ import annotations

import gc
import os
import sys

# ``python -m hermes_core.cli`` imports this package, with the working directory first on sys.path, before
# __main__ runs: a repository's click.py, json.py or pluggy.py would be imported instead of the real ones. While
# ``-m`` locates its module, sys.argv[0] is "-m"; the ``hermes`` console script never has the directory there.
if sys.argv[:1] == ["-m"] and not sys.flags.safe_path and sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

import threading
from typing import NoReturn

import click

from .._version import __version__
from ..errors import HermesError
from ._common import LazyGroup, UserError, echo_json, plugin_cli_command
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
    "checkpoints": ("hermes_core.cli.checkpoints", "List, compare and restore the workspace's checkpoints."),
    "cron": ("hermes_core.cli.cron", "Scheduled jobs: list, add and change them; run what is due, or serve."),
    "sessions": ("hermes_core.cli.sessions", "List, read, search, export and prune recorded sessions."),
    "memory": ("hermes_core.cli.memory", "Show and edit the agent's persistent memory."),
    "config": ("hermes_core.cli.config", "Read and change config.yaml: path, show, get, set, unset."),
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

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        rest = super().parse_args(ctx, args)
        # before the command is resolved: a plugin's command loads the plugins, whose logs count too
        level = ctx.params.get("log_level")
        _show_logs(ctx, ctx.params.get("verbose") or 0, level.upper() if level else None)
        return rest

    def command_rows(self, ctx: click.Context, limit: int) -> list[tuple[str, str]]:
        from ._common import runtime

        return [(name, help_text) for name, (_, help_text) in self.lazy.items()] + \
            [(name, command.help) for name, command in sorted(runtime().cli_commands.items())]


#: The levels ``--log-level`` takes (``-v`` is INFO, ``-vv`` DEBUG).
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _show_logs(ctx: click.Context, verbose: int, level: str | None) -> None:
    """Send the log records of Hermes and its plugins at ``level`` and above to stderr (as pytest's
    ``--log-cli-level`` shows them); by default only Python's own last-resort handler prints warnings."""
    chosen = level or ({1: "INFO"}.get(verbose, "DEBUG") if verbose else None)
    if chosen is None:  # what plugins say while loading goes to their records (`plugins list` counts it)
        from ..plugins.loadoutput import echo_load_output

        echo_load_output(False)
        ctx.call_on_close(lambda: echo_load_output(True))
        return
    import logging

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(chosen)
    ctx.call_on_close(lambda: root.removeHandler(handler))


@click.group(cls=HermesGroup, lazy={name: (f"{module}:{name}", text) for name, (module, text) in _GROUPS.items()},
             context_settings={"help_option_names": ["-h", "--help"]}, invoke_without_command=True)
@click.version_option(__version__, prog_name="hermes-tools", message="%(prog)s %(version)s")
@click.option("-v", "--verbose", count=True, help="Show Hermes' and plugins' logs on stderr: -v INFO, -vv DEBUG.")
@click.option("--log-level", type=click.Choice(LOG_LEVELS, case_sensitive=False), envvar="HERMES_LOG_LEVEL",
              help="Show Hermes' and plugins' logs of this level and above on stderr. Env: HERMES_LOG_LEVEL.")
@click.pass_context
def cli(ctx: click.Context, verbose: int, log_level: str | None) -> None:
    """Hermes: tools for AI agents, as plugins.

    Shell completion: eval "$(_HERMES_COMPLETE=bash_source hermes)" (zsh_source, fish_source for others).
    """
    if ctx.invoked_subcommand is None:  # plain `hermes`: the help, and success
        click.echo(ctx.get_help())


def main(argv: list[str] | None = None) -> NoReturn:
    """Entry point of the console script: user errors print one line and exit non-zero."""
    _leave(_run(argv))


def _run(argv: list[str] | None) -> int:
    from .safetext import SafeStream

    # what plugins and servers wrote (names, reasons, results) reaches the terminal as visible text only
    if not isinstance(sys.stdout, SafeStream):
        sys.stdout, sys.stderr = SafeStream(sys.stdout), SafeStream(sys.stderr)
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
        if isinstance(exc, UserError) and _wants_json(argv):
            echo_json({"error": exc.format_message()})
        else:
            exc.show()
        return exc.exit_code
    except HermesError as exc:
        if _wants_json(argv):
            echo_json({"error": str(exc)})
        else:
            click.echo(f"Error: {exc}", err=True)
        return 1
    return returned if isinstance(returned, int) else 0


def _wants_json(argv: list[str] | None) -> bool:
    """Whether the command line asks for JSON (``--json`` before any ``--``): then an error is JSON too,
    ``{"error": "..."}`` on stdout, so a program reading the output never gets text it cannot parse."""
    given = sys.argv[1:] if argv is None else argv
    return "--json" in given[:given.index("--")] if "--" in given else "--json" in given


def _leave(code: int) -> NoReturn:
    """Exit with ``code``; a thread a plugin started and left running, or an exit handler a plugin registered that
    does not return, does not keep the command alive."""
    runtime = sys.modules.get("hermes_core.runtime")
    finished = True
    if runtime is not None:  # plugins may have run: MCP sessions and their child processes end here
        timeout = _exit_timeout()
        runtime.reset_default_runtime()
        finished = _run_exit_handlers(timeout)
    # The process ends: the cycle collector's passes over every object at interpreter exit (thousands of tools'
    # definitions) would only cost time; objects are still freed as their references go.
    gc.freeze()
    main_thread = threading.main_thread()
    if not finished or any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not main_thread):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def _exit_timeout() -> float:
    """``plugins.exit_timeout`` of the home's config (its default when the config cannot be read)."""
    from ..config.home import HermesHome

    try:
        return float(HermesHome.from_env().config_data()["plugins"]["exit_timeout"])
    except Exception:
        return EXIT_TIMEOUT


#: Seconds the exit handlers (``atexit``) of Hermes and its plugins may take, when the config does not say.
EXIT_TIMEOUT = 10.0


def _run_exit_handlers(timeout: float) -> bool:
    """Run the interpreter's exit handlers now, on a daemon thread, within ``timeout`` seconds; False when they did
    not finish (the process then leaves without waiting for them)."""
    import atexit

    run = getattr(atexit, "_run_exitfuncs", None)  # (CPython's and PyPy's; elsewhere they run at exit, unbounded)
    if run is None:
        return True
    done = threading.Event()

    def handlers() -> None:
        try:
            run()
        finally:
            done.set()

    threading.Thread(target=handlers, name="hermes-exit-handlers", daemon=True).start()
    if done.wait(timeout):
        return True
    sys.stderr.write(f"hermes: the exit handlers did not finish within {timeout:g} s (plugins.exit_timeout): a "
                     "plugin's atexit function may hang; exiting without them\n")
    return False

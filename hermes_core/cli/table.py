"""The listings' tables: a header row, columns fitted to the terminal, ``…`` where a cell is cut, and colour
through ``click.style`` (``click.echo`` drops it when the output is not a terminal, and ``hermes`` turns it off
when ``NO_COLOR`` is set)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import click

from .safetext import printable

__all__ = ["Column", "clip", "colour_enabled", "echo_table", "state_colour", "terminal_width"]

#: A cut column keeps at least this many characters.
MIN_WIDTH = 8
#: The width of a terminal that does not tell its own.
FALLBACK_WIDTH = 80
GAP = "  "


class Column(NamedTuple):
    """One column: its header, whether it may be cut to fit the terminal, and how its cells are coloured."""

    header: str
    #: Cells may be cut (ending with ``…``) when the table is wider than the terminal; the rightmost such
    #: column is cut first.
    shrink: bool = False
    align: str = "<"
    #: The foreground colour of a cell, from its text (None: uncoloured).
    colour: Callable[[str], str | None] | None = None


def colour_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """False when ``NO_COLOR`` is set to anything but the empty string (https://no-color.org)."""
    return not (os.environ if environ is None else environ).get("NO_COLOR")


def clip(text: str, width: int) -> str:
    """``text`` in at most ``width`` characters, ending with ``…`` when it was cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)].rstrip() + "…"


STATE_COLOURS = {"loaded": "green", "declared": "green", "ready": "green", "available": "green",
                 "error": "red", "unavailable": "red", "disabled": "yellow", "not enabled": "yellow",
                 "shadowed": "yellow", "connecting": "yellow", "sdk-missing": "yellow", "not-started": "yellow"}


def state_colour(state: str) -> str | None:
    """The colour of a state word: green when it works, red when it failed, yellow when it is switched off."""
    return STATE_COLOURS.get(state.split(":")[0].strip())


def terminal_width() -> int | None:
    """``COLUMNS`` when it is set, else the width of the terminal standard output is, else None: a pipe or a
    file gets whole cells (``grep`` should find what the terminal cuts)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if not sys.stdout.isatty():
        return None
    # os.get_terminal_size, not shutil's: importing shutil (and the compression modules it imports) costs
    # every listing a few milliseconds
    try:
        return os.get_terminal_size(sys.stdout.fileno()).columns or FALLBACK_WIDTH
    except (OSError, ValueError):
        return FALLBACK_WIDTH


def echo_table(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int | None = None,
               details: Sequence[Sequence[str]] | None = None) -> None:
    """Print ``rows`` under a header, each column as wide as its widest cell, the shrinkable ones cut to fit
    ``width`` (default: :func:`terminal_width`); ``details[i]`` are whole lines printed, indented, under row ``i``
    (what a cell cannot hold: reasons, warnings)."""
    rows = [[printable(cell, lines=False) for cell in row] for row in rows]  # a name cannot break its row
    widths = [max([len(column.header), *(len(row[i]) for row in rows)]) for i, column in enumerate(columns)]
    available = width or terminal_width()
    excess = sum(widths) + len(GAP) * (len(widths) - 1) - available if available else 0
    for i in reversed(range(len(columns))):
        if excess <= 0:
            break
        if columns[i].shrink:
            cut = min(excess, widths[i] - max(MIN_WIDTH, len(columns[i].header)))
            if cut > 0:
                widths[i] -= cut
                excess -= cut
    click.echo(_line(columns, widths, [column.header for column in columns], header=True))
    for i, row in enumerate(rows):
        click.echo(_line(columns, widths, row))
        for detail in details[i] if details else ():
            click.echo(f"    {printable(detail, lines=False)}")


def _line(columns: Sequence[Column], widths: list[int], cells: Sequence[str], header: bool = False) -> str:
    parts = []
    for i, (column, cell) in enumerate(zip(columns, cells, strict=True)):
        text = clip(cell, widths[i])
        last = i == len(columns) - 1
        padded = text if last and column.align == "<" else f"{text:{column.align}{widths[i]}}"
        colour = None if header or column.colour is None else column.colour(cell)
        parts.append(click.style(padded, bold=True) if header else
                     click.style(padded, fg=colour) if colour else padded)
    return GAP.join(parts).rstrip()

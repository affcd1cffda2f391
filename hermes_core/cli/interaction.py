"""``hermes tools call`` at a terminal: a tool's questions to the user become prompts, its progress a spinner (or
a bar when the total is known) on stderr. Without a terminal nothing is drawn and questions are refused."""

from __future__ import annotations

import shutil
import sys
import threading
from typing import Any, Final, TextIO

import click

from ..calls.asking import UserQuestion
from ..calls.progress import Progress
from ..errors import NoAnswer
from .safetext import printable

__all__ = ["TerminalProgress", "terminal_question"]

_FRAMES: Final = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
_BAR: Final = 20


class TerminalProgress:
    """Draws each progress report over the last one, on one line of ``stream`` (a terminal)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self._lock = threading.Lock()
        self._frame = 0
        self._drawn = False

    def __call__(self, progress: Progress) -> None:
        if progress.total:
            filled = min(_BAR, int(_BAR * progress.done / progress.total))
            count = f"[{'█' * filled}{'·' * (_BAR - filled)}] {progress.done:g}/{progress.total:g}"
        else:
            count = f"{progress.done:g}"
        text = printable(f"{progress.tool_name or 'tool'}: {count}  {progress.message or ''}", lines=False).rstrip()
        width = max(20, shutil.get_terminal_size().columns - 3)
        with self._lock:
            self._frame = (self._frame + 1) % len(_FRAMES)
            self.stream.write(f"\r\x1b[K{_FRAMES[self._frame]} {text[:width]}")
            self.stream.flush()
            self._drawn = True

    def clear(self) -> None:
        """Remove the line drawn last (before a prompt, and when the call is done)."""
        with self._lock:
            if self._drawn:
                self.stream.write("\r\x1b[K")
                self.stream.flush()
                self._drawn = False


def terminal_question(question: UserQuestion, progress: TerminalProgress | None = None) -> Any:
    """Ask ``question`` on the terminal: a choice by its number (several, comma-separated, when it allows), or an
    answer of the user's own; an empty answer declines. Refused (:class:`NoAnswer`) when stdin is no terminal."""
    if not (sys.stdin and sys.stdin.isatty()):
        raise NoAnswer("nobody can answer here: `hermes tools call` asks the user only when its input is a terminal")
    if progress is not None:
        progress.clear()
    click.echo(f"\n❓ {question.question}", err=True)
    for number, choice in enumerate(question.choices, 1):
        click.echo(f"  {number}. {choice}", err=True)
    hint = ("numbers, comma-separated" if question.multi_select else "a number") if question.choices else ""
    if question.free_text and hint:
        hint += ", or your own answer"
    click.echo(f"Answer{f' ({hint})' if hint else ''}: ", err=True, nl=False)
    typed = sys.stdin.readline().strip()
    if not typed:
        return None
    numbers = [part.strip() for part in typed.split(",")] if question.multi_select else [typed]
    if question.choices and all(part.isdigit() and 1 <= int(part) <= len(question.choices) for part in numbers):
        picked = [question.choices[int(part) - 1] for part in numbers]
        return picked if question.multi_select else picked[0]
    if not question.free_text and question.choices:
        raise NoAnswer(f"the answer {typed!r} is none of the choices")
    return typed

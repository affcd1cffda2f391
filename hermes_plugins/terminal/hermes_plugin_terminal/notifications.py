"""What a background process reports by itself: its end (``notify_on_complete``) and lines that match its
``watch_patterns``, as Hermes Agent words and rate-limits them.

One watcher thread per process table scans the output of the processes that asked, while any do. A report goes
to the session's agent loop (``ToolContext.inject_message``); without one it waits in the table and comes back
with the task's next ``terminal`` or ``process`` result. The host's progress callback hears each report too
(``ToolContext.background_reporter``), as progress of the call that started the process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from hermes_core.plugin import ProgressReporter

    from .processes import BackgroundProcess

__all__ = ["Notifier", "Watch"]

#: At most one watch-pattern report per process in this many seconds; matches in between are dropped.
WATCH_MIN_INTERVAL_SECONDS: Final = 15.0
#: After this many windows in a row with dropped matches, the patterns are switched off for the process and it
#: reports its end instead.
WATCH_STRIKE_LIMIT: Final = 3
#: How often the watcher looks at the output.
SCAN_SECONDS: Final = 0.2
#: The end of the output a completion report carries, and what a watch report carries of its matches.
COMPLETION_TAIL_CHARS: Final = 2000
MATCHED_LINES: Final = 20
#: The most of a line still without its end the watcher keeps (a stream without newlines must not grow it).
PARTIAL_LINE_CHARS: Final = 4096


@dataclass
class Watch:
    """What one background process asked to report, and where its watcher is."""

    notify_on_complete: bool
    patterns: tuple[str, ...]
    #: Output scanned so far (an absolute position), and the incomplete last line.
    position: int = 0
    partial: str = ""
    cooldown_until: float = 0.0
    strike_in_window: bool = False
    strikes: int = 0
    suppressed: int = 0
    disabled: bool = False
    done: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: Hears each report as progress of the call that started the process (the host's progress callback).
    reporter: ProgressReporter | None = field(default=None, repr=False)
    reported: int = 0

    def report_progress(self, report: str) -> None:
        """Tell the reporter about ``report`` (the n-th report is progress n of n: it is never dropped as too
        soon)."""
        if self.reporter:
            self.reported += 1
            self.reporter(self.reported, self.reported, report)


#: Hands one report (its text) on for one process's task; the notifier calls it from its own thread.
Deliver = Callable[["BackgroundProcess", str], None]


class Notifier:
    """The watcher thread of one process table: started by the first watched process, gone when none is left."""

    def __init__(self, deliver: Deliver) -> None:
        self._deliver = deliver
        self._watched: list[BackgroundProcess] = []
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._thread: threading.Thread | None = None

    def watch(self, entry: BackgroundProcess) -> None:
        with self._lock:
            self._watched.append(entry)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="hermes-process-watcher", daemon=True)
                self._thread.start()

    def close(self) -> None:
        self._closed.set()

    def _run(self) -> None:
        while not self._closed.wait(SCAN_SECONDS):
            with self._lock:
                entries = [entry for entry in self._watched if entry.watch is not None and not entry.watch.done]
                self._watched = entries
                if not entries:
                    self._thread = None
                    return
            for entry in entries:
                for report in scan(entry):
                    self._deliver(entry, report)


def scan(entry: BackgroundProcess) -> list[str]:
    """The reports ``entry`` has due now: watch matches in its new output, then its end."""
    watch = entry.watch
    assert watch is not None
    with watch.lock:
        exit_code = entry.process.poll()  # before reading: output that came before the end is in the buffer
        reports = _matches(entry, watch, time.monotonic()) if watch.patterns and not watch.disabled else []
        if exit_code is None:
            return reports
        watch.done = True
        if watch.notify_on_complete and not entry.exit_seen:
            reports.append(_completion(entry, exit_code))
        return reports


def _matches(entry: BackgroundProcess, watch: Watch, now: float) -> list[str]:
    output = entry.process.output
    total = output.total_chars
    text = watch.partial + output.since(watch.position)
    watch.position = total
    *lines, partial = text.split("\n")
    watch.partial = partial[-PARTIAL_LINE_CHARS:]
    if entry.process.poll() is not None:  # nothing more is coming: the last line is complete
        lines.append(watch.partial)
        watch.partial = ""
    matched: list[tuple[str, str]] = []
    for line in lines:
        pattern = next((p for p in watch.patterns if p in line), None)  # one report line per output line
        if pattern is not None:
            matched.append((line.rstrip(), pattern))
    if not matched:
        return []
    if now < watch.cooldown_until:
        watch.suppressed += len(matched)
        if not watch.strike_in_window:
            watch.strike_in_window = True
            watch.strikes += 1
            if watch.strikes >= WATCH_STRIKE_LIMIT:
                watch.disabled = True
                watch.notify_on_complete = True
                return [(f"[IMPORTANT: Watch patterns disabled for process {entry.id} — {WATCH_STRIKE_LIMIT} "
                         f"consecutive rate-limit windows triggered (min spacing {WATCH_MIN_INTERVAL_SECONDS:g}s). "
                         "Falling back to notify_on_complete semantics; you'll get exactly one notification "
                         "when the process exits.]")]
        return []
    if watch.cooldown_until and not watch.strike_in_window:
        watch.strikes = 0
    watch.strike_in_window = False
    watch.cooldown_until = now + WATCH_MIN_INTERVAL_SECONDS
    suppressed, watch.suppressed = watch.suppressed, 0
    shown = "\n".join(line for line, _ in matched[:MATCHED_LINES])
    report = (f"[IMPORTANT: Background process {entry.id} matched watch pattern \"{matched[0][1]}\".\n"
              f"Command: {entry.command}\nMatched output:\n{shown}")
    if suppressed:
        report += f"\n({suppressed} earlier matches were suppressed by rate limit)"
    return [report + "]"]


def _completion(entry: BackgroundProcess, exit_code: int) -> str:
    if entry.killed:
        status = "terminated by Hermes"
    elif exit_code == 0:
        status = "completed normally"
    else:
        status = "exited"
    signal = ", SIGTERM" if exit_code in (-15, 143) else ""
    tail = entry.process.output.text()[-COMPLETION_TAIL_CHARS:]
    return (f"[IMPORTANT: Background process {entry.id} {status} (exit code {exit_code}{signal}).\n"
            f"Command: {entry.command}\nOutput:\n{tail}]")

"""Run output as Hermes Agent writes it: one Markdown file per run, ``cron/output/<job id>/<%Y-%m-%d_%H-%M-%S>.md``,
the newest ``cron.output_retention`` (default 50) of each job kept.

A file is published without replacing another: two runs of one job within a second (another scheduler's, or a
clock that stands still) get ``..._2.md`` rather than one overwriting the other.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_KEEP", "Outcome", "failed_outcome", "prompt_outcome", "save_output", "tool_outcome"]

DEFAULT_KEEP = 50


@dataclass(frozen=True)
class Outcome:
    """What one run produced: the document to save, the text to deliver and whether it succeeded."""

    success: bool
    document: str
    response: str  #: what is delivered (the tool's result, the model's final answer)
    error: str | None = None


def header(job: dict[str, Any], when: datetime, failed: bool = False) -> str:
    return (f"# Cron Job: {job['name']}{' (FAILED)' if failed else ''}\n\n**Job ID:** {job['id']}\n"
            f"**Run Time:** {when.strftime('%Y-%m-%d %H:%M:%S')}\n**Schedule:** {job.get('schedule_display', 'N/A')}\n")


def tool_outcome(job: dict[str, Any], when: datetime, result: str, error: str | None) -> Outcome:
    """A tool job's run: the call, then the result or the error."""
    call = f"## Tool Call\n\n`{job['tool']}` with arguments:\n\n```json\n" \
           f"{json.dumps(job.get('arguments') or {}, indent=2, ensure_ascii=False, sort_keys=True)}\n```\n\n"
    if error is None:
        return Outcome(True, f"{header(job, when)}\n{call}## Response\n\n{result}\n", result)
    return Outcome(False, f"{header(job, when, True)}\n{call}## Error\n\n```\n{error}\n```\n", "", error)


def prompt_outcome(job: dict[str, Any], when: datetime, prompt: str, response: str | None,
                   error: str | None, refused: tuple[str, ...] = ()) -> Outcome:
    """A prompt job's run, in Hermes Agent's layout (Prompt, then Response or Error), then the calls refused for
    want of a user to approve them, if any."""
    notes = "".join(f"- {line}\n" for line in refused)
    notes = f"\n## Refused Calls\n\nNobody can approve a call during a cron run; refused:\n\n{notes}" if notes else ""
    if error is None:
        answer = response or ""
        return Outcome(True, f"{header(job, when)}\n## Prompt\n\n{prompt}\n\n## Response\n\n"
                             f"{answer or '(No response generated)'}\n{notes}", answer)
    return Outcome(False, f"{header(job, when, True)}\n## Prompt\n\n{prompt}\n\n## Error\n\n```\n{error}\n```\n"
                          f"{notes}", "", error)


def failed_outcome(job: dict[str, Any], when: datetime, error: str) -> Outcome:
    """A run that could not start (or whose scheduler died): only the error."""
    return Outcome(False, f"{header(job, when, True)}\n## Error\n\n```\n{error}\n```\n", "", error)


def save_output(output_dir: Path, job_id: str, document: str, when: datetime, keep: int = DEFAULT_KEEP) -> Path:
    """Write one run's document (mode 0600, folder 0700) and prune the job's oldest beyond ``keep`` (0: keep all)."""
    folder = output_dir / job_id
    folder.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        os.chmod(folder, 0o700)
    fd, temporary = tempfile.mkstemp(dir=folder, prefix=".output_", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(document)
            handle.flush()
            os.fsync(handle.fileno())
        with contextlib.suppress(OSError):
            os.chmod(temporary, 0o600)
        path = _publish(Path(temporary), folder, when.strftime("%Y-%m-%d_%H-%M-%S"))
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
    _prune(folder, keep)
    return path


def _publish(temporary: Path, folder: Path, stamp: str) -> Path:
    """Link the finished file under the first free name (a hard link never replaces an existing file)."""
    for index in range(1, 1000):
        path = folder / (f"{stamp}.md" if index == 1 else f"{stamp}_{index}.md")
        try:
            os.link(temporary, path)
        except FileExistsError:
            continue
        except OSError:  # a file system without hard links: reserve the name, then fill it
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except FileExistsError:
                continue
            os.replace(temporary, path)
        return path
    raise OSError(f"{folder}: no free output name for {stamp}")


def _prune(folder: Path, keep: int) -> None:
    if keep <= 0:
        return
    with contextlib.suppress(OSError):
        files = sorted((f for f in folder.glob("*.md") if f.is_file()), key=lambda f: f.name, reverse=True)
        for stale in files[keep:]:
            with contextlib.suppress(OSError):
                stale.unlink()

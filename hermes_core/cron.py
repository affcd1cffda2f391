"""Scheduled jobs as a host sees them (``Runtime.cron``): the :class:`CronScheduler` the cron pack
(``hermes-tools-cron``) provides, found through the plugin records, and why it is unavailable when it is.

Nothing of the pack is imported until a host asks for the scheduler.
"""

from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, Any, Protocol

from .errors import CronUnavailable

if TYPE_CHECKING:
    from .plugins.records import PluginRecord

__all__ = ["PACK_MODULE", "CronScheduler", "RunReport", "scheduler_of"]

#: The cron pack's package; its ``scheduler`` module has ``scheduler_for(runtime)``.
PACK_MODULE = "hermes_plugin_cron"


class RunReport(Protocol):
    """How one run went."""

    job_id: str
    name: str
    success: bool
    error: str | None
    delivery_error: str | None
    output: str | None

    def as_dict(self) -> dict[str, Any]: ...


class CronScheduler(Protocol):
    """The jobs of one home (``$HERMES_HOME/cron/jobs.json``, Hermes Agent's format) and the runs of them.

    Jobs are plain records in Hermes Agent's shape; errors are :class:`~hermes_core.errors.CronError`.
    """

    def jobs(self, include_disabled: bool = True) -> list[dict[str, Any]]:
        """Every job (paused ones unless ``include_disabled`` is False)."""

    def problems(self) -> list[str]:
        """What the jobs file needs repaired (the next write repairs it)."""

    def job(self, ref: str) -> dict[str, Any]:
        """The job with id (or name) ``ref``."""

    def create(self, schedule: str | None, *, prompt: str | None = None, tool: str | None = None,
               arguments: Any = None, name: str | None = None, repeat: int | None = None, deliver: Any = None,
               skills: Any = None, model: Any = None, enabled_toolsets: Any = None, context_from: Any = None,
               **others: Any) -> dict[str, Any]:
        """A new job: a prompt (for a model), or a tool call (``tool`` + ``arguments``)."""

    def pause(self, ref: str, reason: str | None = None) -> dict[str, Any]: ...

    def resume(self, ref: str) -> dict[str, Any]: ...

    def remove(self, ref: str) -> dict[str, Any]: ...

    def run(self, ref: str) -> RunReport:
        """Run a job now, due or not."""

    def tick(self) -> list[RunReport]:
        """Run every due job once; how each went."""

    def serve(self, stop: threading.Event, interval: float = 1.0, drain_timeout: float = 30.0) -> int:
        """Run jobs as they fall due until ``stop`` is set, then drain; how many runs were cut off."""


def scheduler_of(runtime: Any, record: PluginRecord | None) -> CronScheduler:
    """The cron pack's scheduler for ``runtime`` (whose ``cron`` plugin record is ``record``), or
    :class:`CronUnavailable` saying why there is none."""
    if record is None:
        raise CronUnavailable("scheduled jobs need the cron pack (hermes-tools-cron), which is not installed: "
                              "`hermes plugins install cron` installs it")
    if record.module != PACK_MODULE:
        raise CronUnavailable(f"the plugin 'cron' here is {record.module} ({record.source}), not hermes-tools-cron, "
                              "so there is no scheduler")
    if not record.active:
        raise CronUnavailable(f"the cron pack (hermes-tools-cron) is {record.state}: {record.reason}; "
                              "`hermes plugins enable cron` switches it on")
    scheduler: CronScheduler = importlib.import_module(f"{PACK_MODULE}.scheduler").scheduler_for(runtime)
    return scheduler

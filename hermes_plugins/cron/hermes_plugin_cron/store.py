"""The job store: ``$HERMES_HOME/cron/jobs.json`` in Hermes Agent's format, read and written under its lock file
(``cron/.jobs.lock``, taken by Hermes Agent's scheduler too), each write an atomic replace.

Exactly once: a due run is claimed before it starts, in one locked write that stamps ``run_claim`` on the job and
moves ``next_run_at`` on (or counts a one-shot's dispatch), while the claiming process holds an OS lock on
``cron/.running/<job id>.lock`` for as long as the run lasts. Another scheduler that finds the claim tries that
lock: held, the run is in flight and the job is skipped; free, the process that claimed it died mid-run (the OS
drops a dead process's locks), so the run is recorded as failed and not repeated.

A ``jobs.json`` Hermes cannot read is never replaced: invalid JSON or an unexpected shape is refused with the
reason; what Hermes Agent repairs (bare control characters, a bare list, records without an id or with unreadable
times) is repaired on the next write.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import tempfile
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from hermes_core.errors import CronError, FileLockTimeout
from hermes_core.plugin import exclusive_lock

from .clock import Clock, ensure_aware, parse_time
from .records import is_safe_id, new_id, normalized
from .schedules import compute_next_run

__all__ = ["Claim", "JobStore", "Loaded", "owner_name"]

log = logging.getLogger(__name__)

#: Hermes Agent's lock file for jobs.json critical sections.
LOCK_NAME = ".jobs.lock"
#: Hermes Agent's lock of a whole tick (due jobs found, then their next runs moved on, in two steps): a pass
#: that claims runs holds it too, so it never falls between those steps of a Hermes Agent ticker on the home.
TICK_LOCK_NAME = ".tick.lock"
#: A jobs.json larger than this is refused (a thousand jobs take about 1.5 MB).
MAX_BYTES = 64 * 1024 * 1024
#: A one-shot claim Hermes Agent stamped (it holds no lease) is stale after this long (its default).
FOREIGN_CLAIM_TTL = timedelta(seconds=1800)
#: The keys Hermes Agent writes beside ``jobs``.
_DOCUMENT_KEYS = frozenset({"jobs", "updated_at"})


def owner_name() -> str:
    """Who claims a run (attribution only; liveness comes from the lease)."""
    explicit = os.environ.get("HERMES_MACHINE_ID", "").strip()
    return explicit or f"{socket.gethostname()}:{os.getpid()}"


@dataclass
class Loaded:
    """The file as read: its entries (dicts are jobs; anything else is kept untouched), the document's other keys,
    and the repairs a write will persist."""

    entries: list[Any]
    extra: dict[str, Any] = field(default_factory=dict)
    repairs: list[str] = field(default_factory=list)
    changed: bool = False

    def jobs(self) -> Iterator[dict[str, Any]]:
        return (entry for entry in self.entries if isinstance(entry, dict))

    def find(self, job_id: str) -> dict[str, Any] | None:
        return next((job for job in self.jobs() if job.get("id") == job_id), None)

    def remove(self, job: dict[str, Any]) -> None:
        self.entries[:] = [entry for entry in self.entries if entry is not job]
        self.changed = True


class Lease:
    """The OS lock held while one run of a job is in flight (released by the OS if the process dies)."""

    def __init__(self, path: Path, stack: contextlib.ExitStack) -> None:
        self.path = path
        self._stack = stack

    @classmethod
    def take(cls, path: Path) -> Lease | None:
        """The lease, or None when another run (in this process or another) holds it."""
        stack = contextlib.ExitStack()
        try:
            stack.enter_context(exclusive_lock(path, timeout=0))
        except FileLockTimeout:
            return None
        return cls(path, stack)

    def release(self, forget: bool = False) -> None:
        """Let the lease go; ``forget`` removes its file too (only for a job that no longer exists)."""
        self._stack.close()
        if forget:
            with contextlib.suppress(OSError):
                self.path.unlink()


@dataclass
class Claim:
    """One claimed run: the job as it was when claimed, and the lease that proves the run is alive."""

    job: dict[str, Any]
    record: dict[str, Any]  #: the ``run_claim`` stamped on the job
    lease: Lease


class JobStore:
    """One home's jobs (``cron_dir`` is ``$HERMES_HOME/cron``)."""

    def __init__(self, cron_dir: Path, clock: Clock, lock_timeout: float = 30.0) -> None:
        self.cron_dir = cron_dir
        self.clock = clock
        self.lock_timeout = lock_timeout
        self.jobs_file = cron_dir / "jobs.json"
        self.output_dir = cron_dir / "output"
        self.leases_dir = cron_dir / ".running"

    # -- reading and writing --------------------------------------------------------------------------------

    def read(self) -> Loaded:
        """The jobs as stored (no lock needed: writes replace the file whole); repairs are applied in memory."""
        try:
            with self.jobs_file.open("rb") as handle:
                size = os.fstat(handle.fileno()).st_size
                if size > MAX_BYTES:
                    raise CronError(f"{self.jobs_file}: {size} bytes, more than the {MAX_BYTES} a jobs file may "
                                    "hold; Hermes leaves it as it is")
                raw = handle.read()
        except FileNotFoundError:
            return Loaded([])
        except OSError as exc:
            raise CronError(f"{self.jobs_file}: cannot read: {exc.strerror or exc}") from None
        return self._parse(raw)

    def _parse(self, raw: bytes) -> Loaded:
        repairs: list[str] = []
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise self._refusal(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            try:
                data = json.loads(text, strict=False)
            except json.JSONDecodeError:
                raise self._refusal(f"not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
            repairs.append("control characters in strings escaped")
        if isinstance(data, list):
            if data:
                repairs.append("a bare list of jobs wrapped as {\"jobs\": [...]}")
            loaded = Loaded(data, {}, repairs)
        elif isinstance(data, dict):
            jobs = data.get("jobs", [])
            if "jobs" not in data and data.keys() - _DOCUMENT_KEYS:
                raise self._refusal(f"an object without 'jobs' (keys: {', '.join(sorted(map(str, data)))})")
            if not isinstance(jobs, list):
                raise self._refusal(f"'jobs' is {type(jobs).__name__}, not a list")
            loaded = Loaded(jobs, {k: v for k, v in data.items() if k not in _DOCUMENT_KEYS}, repairs)
        else:
            raise self._refusal(f"expected {{\"jobs\": [...]}}, found {type(data).__name__}")
        self._repair(loaded)
        return loaded

    def _refusal(self, why: str) -> CronError:
        return CronError(f"{self.jobs_file}: {why}. Hermes neither reads nor replaces it: fix it, or move it aside "
                         "to start with no jobs")

    def _repair(self, loaded: Loaded) -> None:
        """Hermes Agent's repairs of hand-edited records, so that one bad record never stops the others."""
        skipped = sum(1 for entry in loaded.entries if not isinstance(entry, dict))
        if skipped:
            loaded.repairs.append(f"{skipped} entr{'y is' if skipped == 1 else 'ies are'} not a job object "
                                  "(kept, ignored)")
        for job in loaded.jobs():
            if not job.get("id"):
                job["id"] = job.pop("job_id", None) or new_id()
                loaded.repairs.append(f"a job without an id got id {job['id']}")
            if not isinstance(job.get("schedule"), dict):
                job["schedule"] = {}
                loaded.repairs.append(f"job {job['id']}: its schedule was not an object (it will not run)")
            for key in ("next_run_at", "last_run_at"):
                value = job.get(key)
                if value is not None and not _is_time(value):
                    job.pop(key)
                    loaded.repairs.append(f"job {job['id']}: unreadable {key} {value!r} dropped")
        loaded.changed = bool(loaded.repairs and any("kept, ignored" not in r for r in loaded.repairs))

    def _write(self, loaded: Loaded) -> None:
        self.ensure_dirs()
        document = {**loaded.extra, "jobs": loaded.entries, "updated_at": self.clock.now().isoformat()}
        fd, temporary = tempfile.mkstemp(dir=self.cron_dir, prefix=".jobs_", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(document, handle, indent=2, ensure_ascii=False)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, self.jobs_file)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
        with contextlib.suppress(OSError):
            os.chmod(self.jobs_file, 0o600)
        for repair in loaded.repairs:
            log.warning("%s: repaired: %s", self.jobs_file, repair)

    def ensure_dirs(self) -> None:
        for folder in (self.cron_dir, self.output_dir):
            folder.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(OSError):
                os.chmod(folder, 0o700)

    @contextlib.contextmanager
    def edit(self) -> Iterator[Loaded]:
        """Read under the lock for the block; written back if the block (or a repair) changed it."""
        self.ensure_dirs()
        try:
            with exclusive_lock(self.cron_dir / LOCK_NAME, self.lock_timeout):
                loaded = self.read()
                yield loaded
                if loaded.changed:
                    self._write(loaded)
        except FileLockTimeout as exc:
            raise CronError(f"the jobs file is locked by another process: {exc}") from None

    # -- looking jobs up --------------------------------------------------------------------------------------

    def jobs(self) -> list[dict[str, Any]]:
        """Every job, read-safe (paused ones included)."""
        return [normalized(job) for job in self.read().jobs()]

    def resolve(self, loaded: Loaded, ref: str) -> dict[str, Any] | None:
        """The job with id ``ref``, else the one named ``ref`` (case-insensitive); :class:`CronError` naming the
        candidates when the name is ambiguous."""
        if not ref:
            return None
        found = loaded.find(ref)
        if found is not None:
            return found
        named = [job for job in loaded.jobs() if str(job.get("name") or "").lower() == ref.lower()]
        if len(named) > 1:
            raise AmbiguousJob(ref, named)
        return named[0] if named else None

    # -- runs -------------------------------------------------------------------------------------------------

    def lease_path(self, job_id: str) -> Path:
        return self.leases_dir / f"{job_id}.lock"

    def _take_lease(self, job_id: str) -> Lease | None:
        self.leases_dir.mkdir(parents=True, exist_ok=True)
        return Lease.take(self.lease_path(job_id))

    def claim_due(self, limit: int, on_crashed: Callable[[dict[str, Any], str], None],
                  exclude: Collection[str] = ()) -> list[Claim]:
        """Claim up to ``limit`` due runs of jobs not in ``exclude`` (Hermes Agent's due rules and catch-up: a job
        that missed runs runs once, its next run the next one after now). Runs whose scheduler died are recorded as
        failed first, and ``on_crashed(job, error)`` is told of each."""
        now = self.clock.now()
        if not self._anything_to_do(self.read(), now):
            return []  # the common case takes no lock and writes nothing
        claims: list[Claim] = []
        released: list[tuple[Lease, bool]] = []
        tick = contextlib.ExitStack()
        try:
            tick.enter_context(exclusive_lock(self.cron_dir / TICK_LOCK_NAME, timeout=0))
        except FileLockTimeout:
            return []  # another pass (or Hermes Agent's ticker) is claiming: the next pass looks again
        with tick, self.edit() as loaded:
            for job in list(loaded.jobs()):
                claim = _mapping(job.get("run_claim"))
                if claim.get("lease") is True:
                    lease = self._take_lease(str(job["id"])) if is_safe_id(job["id"]) else None
                    if lease is None:
                        continue  # in flight
                    crashed, error = dict(job), _crash_message(claim)
                    removed = self._finish(loaded, job, now, False, error, None)
                    released.append((lease, removed))
                    on_crashed(crashed, error)
                    continue
                if len(claims) >= limit or job["id"] in exclude or not self._due(loaded, job, now):
                    continue
                taken = self._claim(loaded, job, now)
                if taken is not None:
                    claims.append(taken)
        for lease, removed in released:
            lease.release(forget=removed)
        return claims

    def claim_now(self, ref: str) -> Claim:
        """Claim a run of ``ref`` now, due or not (``cronjob(action='run')``, ``hermes cron run``)."""
        with self.edit() as loaded:
            job = self.resolve(loaded, ref)
            if job is None:
                raise CronError("Job no longer exists; nothing to run.")
            if not job.get("enabled", True) or job.get("state") == "paused":
                raise CronError("Job is paused/disabled; resume it before running.")
            taken = self._claim(loaded, job, self.clock.now()) if is_safe_id(job["id"]) else None
            if taken is None:
                raise CronError("Job is already being fired by the scheduler; not run again." if is_safe_id(job["id"])
                                else f"Job id {job['id']!r} cannot name an output folder; give the job a new id")
            return taken

    def finish(self, claim: Claim, success: bool, error: str | None, delivery_error: str | None) -> None:
        """Record the end of a claimed run (Hermes Agent's ``mark_job_run``) and let its lease go."""
        removed = False
        try:
            with self.edit() as loaded:
                job = loaded.find(claim.job["id"])
                if job is None:
                    removed = True  # removed while it ran
                elif job.get("run_claim") == claim.record:
                    removed = self._finish(loaded, job, self.clock.now(), success, error, delivery_error)
                else:
                    log.warning("job %s: its claim changed while it ran; the result is not recorded", job["id"])
        finally:
            claim.lease.release(forget=removed)

    def _anything_to_do(self, loaded: Loaded, now: datetime) -> bool:
        """Whether a locked pass could change anything: a repair, a claim to check, a run due or to recompute."""
        if loaded.changed:
            return True
        for job in loaded.jobs():
            if job.get("run_claim"):
                return True
            if not job.get("enabled", True):
                continue
            next_run = job.get("next_run_at")
            if not next_run or ensure_aware(parse_time(next_run), self.clock) <= now:
                return True
        return False

    def _due(self, loaded: Loaded, job: dict[str, Any], now: datetime) -> bool:
        """Whether ``job`` is due (repairing what Hermes Agent repairs on the way)."""
        if not job.get("enabled", True):
            return False
        schedule = job["schedule"]
        kind = schedule.get("kind")
        claim = job.get("run_claim")
        if isinstance(claim, dict) and kind == "once" and _fresh(claim, now, self.clock):
            return False  # Hermes Agent is running it
        next_run = job.get("next_run_at")
        if not next_run:
            if kind in {"cron", "interval"}:
                next_run = compute_next_run(schedule, self.clock, now=now)
            elif kind == "once":
                next_run = compute_next_run(schedule, self.clock, job.get("last_run_at"), now=now)
            if not next_run:
                return False
            job["next_run_at"] = next_run
            loaded.changed = True
        stored = parse_time(next_run)
        moment = ensure_aware(stored, self.clock)
        if moment > now:
            return False
        if kind == "cron" and stored.utcoffset() is not None and stored.utcoffset() != now.utcoffset() \
                and stored.replace(tzinfo=None) > now.replace(tzinfo=None):
            # the zone changed since it was stored: keep the wall-clock intent instead of running hours early
            job["next_run_at"] = compute_next_run(schedule, self.clock, now=now)
            loaded.changed = True
            return False
        repeat = _mapping(job.get("repeat"))
        times = repeat.get("times")
        if kind == "once" and isinstance(times, int) and 0 < times <= repeat.get("completed", 0):
            loaded.remove(job)  # dispatched as often as it may be, by a run that never finished
            return False
        return True

    def _claim(self, loaded: Loaded, job: dict[str, Any], now: datetime) -> Claim | None:
        lease = self._take_lease(str(job["id"]))
        if lease is None:
            return None
        record = {"at": now.isoformat(), "by": owner_name(), "due": job.get("next_run_at"), "lease": True}
        job["run_claim"] = record
        schedule = _mapping(job.get("schedule"))
        if schedule.get("kind") in {"cron", "interval"}:
            job["next_run_at"] = compute_next_run(schedule, self.clock, now=now) or job.get("next_run_at")
        else:
            repeat = job.get("repeat")
            if isinstance(repeat, dict) and isinstance(repeat.get("times"), int) and repeat["times"] > 0:
                repeat["completed"] = repeat.get("completed", 0) + 1  # counted before it runs, as Hermes Agent
        loaded.changed = True
        return Claim(json.loads(json.dumps(job)), record, lease)

    def _finish(self, loaded: Loaded, job: dict[str, Any], now: datetime, success: bool, error: str | None,
                delivery_error: str | None) -> bool:
        """Hermes Agent's ``mark_job_run`` on ``job``; True when the job is gone (its runs are used up)."""
        stamp = now.isoformat()
        job.update(last_run_at=stamp, last_status="ok" if success else "error", last_error=None if success else error,
                   last_delivery_error=delivery_error, fire_claim=None, run_claim=None)
        loaded.changed = True
        schedule = _mapping(job.get("schedule"))
        repeat = job.get("repeat")
        if isinstance(repeat, dict):
            times, completed = repeat.get("times"), repeat.get("completed", 0)
            if not (schedule.get("kind") == "once" and isinstance(times, int) and times > 0 and completed > 0):
                completed += 1
                repeat["completed"] = completed
            if isinstance(times, int) and times > 0 and completed >= times:
                loaded.remove(job)
                return True
        job["next_run_at"] = compute_next_run(schedule, self.clock, stamp, now=now)
        if job["next_run_at"] is None:
            if schedule.get("kind") in {"cron", "interval"}:
                job["state"] = "error"
                job["last_error"] = job.get("last_error") or "Failed to compute next run for recurring schedule"
            else:
                job["enabled"], job["state"] = False, "completed"
        elif job.get("state") != "paused":
            job["state"] = "scheduled"
        return False


class AmbiguousJob(CronError):
    """A job name that several jobs have."""

    def __init__(self, ref: str, matches: list[dict[str, Any]]) -> None:
        self.ref = ref
        self.matches = [normalized(job) for job in matches]
        ids = ", ".join(str(job.get("id")) for job in matches)
        super().__init__(f"Job name '{ref}' is ambiguous — matches {len(matches)} jobs: {ids}. Use the job ID instead.")


def _is_time(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        parse_time(value)
    except ValueError:
        return False
    return True


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _fresh(claim: dict[str, Any], now: datetime, clock: Clock) -> bool:
    """A claim Hermes Agent stamped is fresh for its TTL (a future-dated one is stale, as there)."""
    try:
        age = now - ensure_aware(parse_time(str(claim["at"])), clock)
    except (KeyError, ValueError):
        return False
    return timedelta(0) <= age < FOREIGN_CLAIM_TTL


def _crash_message(claim: dict[str, Any]) -> str:
    return (f"The run claimed at {claim.get('at')} by {claim.get('by')} did not finish: its scheduler stopped "
            "(killed or crashed) before recording a result. It is recorded as failed and not run again.")

"""Execution backends: where ``terminal``, ``process`` and ``execute_code`` run commands.

A backend runs a shell command to completion (reporting the directory it ended in, so a ``cd`` carries over
to the task's next command), starts one in the background, and stages files for ``execute_code``. Plugins
contribute backends (``ctx.register_execution_backend`` or a manifest's ``backends:``); ``terminal.backend``
in config.yaml picks one, and the agent loop may pick another for a task (:meth:`ExecutionBackends.assign`).
"""

from __future__ import annotations

import json
import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, TypeVar, runtime_checkable

from ..checks import Availability
from ..errors import BackendError, BackendUnavailable, MissingDirectory
from .output import OutputBuffer

if TYPE_CHECKING:  # pydantic and the config models stay off the start-up path: only a command needs them
    from pydantic import BaseModel

    from ..config.model import TerminalConfig

__all__ = [
    "BackendContribution",
    "BackendError",
    "BackendFactory",
    "BackendSetup",
    "BackendUnavailable",
    "CommandResult",
    "ExecutionBackend",
    "ExecutionBackends",
    "InteractiveProcess",
    "MissingDirectory",
    "Process",
    "Staged",
]

log = logging.getLogger(__name__)

M = TypeVar("M", bound="BaseModel")


class CommandResult(NamedTuple):
    """A finished foreground command."""

    output: str  #: stdout and stderr interleaved, capped with a marker where the middle was dropped
    exit_code: int  #: negative when the shell itself was killed by that signal
    cwd: str  #: the directory the command ended in
    timed_out: bool


class Staged(NamedTuple):
    """Files staged for commands: ``directory`` as commands see it, ``local_directory`` on this machine.

    A Unix socket bound at ``local_directory / name`` (for each name passed to ``stage(sockets=...)``) is
    reached by commands at ``directory/name``.
    """

    directory: str
    local_directory: Path


@runtime_checkable
class Process(Protocol):
    """A command running in the background."""

    pid: int
    output: OutputBuffer

    def poll(self) -> int | None:
        """The exit code, or ``None`` while it runs."""

    def wait(self, timeout: float) -> int | None:
        """Wait up to ``timeout`` seconds; the exit code, or ``None`` if it still runs."""

    def kill(self) -> int:
        """Stop it and everything it started; returns the exit code."""


@runtime_checkable
class InteractiveProcess(Process, Protocol):
    """A background process whose input can be written (``process`` actions ``write``, ``submit`` and ``close``).
    ``ShellBackend``'s background processes are; a backend whose processes are not says so by leaving it out."""

    def write(self, data: str, timeout: float) -> int:
        """Send ``data`` to its input (its terminal, when it runs in one); the bytes written. Raises
        :class:`BackendError` when the input is closed or not read within ``timeout`` seconds."""

    def close_input(self) -> str:
        """End its input (close the pipe, or type end-of-file on its terminal); says which was done."""


@runtime_checkable
class ExecutionBackend(Protocol):
    """Runs shell commands somewhere. ``hermes_core.backends.ShellBackend`` implements all of it for any backend
    that can start a POSIX shell through a local process (``bwrap``, ``ssh``, ``docker exec -i``, ...)."""

    #: The name config.yaml selects it by (``terminal.backend``).
    name: str
    #: Where a task's first command starts, as a path on the backend's machine.
    default_cwd: str
    #: The Python interpreter ``execute_code`` runs there.
    python: str

    def run(self, command: str, *, cwd: str, timeout: float, max_output_chars: int,
            env: Mapping[str, str | None] | None = None, pty: bool = False) -> CommandResult:
        """Run ``command`` in ``cwd`` to completion, or kill it with everything it started after ``timeout``
        seconds. ``env`` sets variables (``None`` unsets one); ``pty`` runs it in a pseudo-terminal.
        Raises :class:`MissingDirectory` when ``cwd`` does not exist, :class:`BackendError` when it cannot run."""

    def spawn(self, command: str, *, cwd: str, env: Mapping[str, str | None] | None = None,
              pty: bool = False) -> Process:
        """Start ``command`` in ``cwd`` without waiting for it (raises as :meth:`run` does)."""

    def stage(self, files: Mapping[str, str], *, sockets: Iterable[str] = ()) -> AbstractContextManager[Staged]:
        """A fresh directory commands can read, holding ``files`` (name → text), through which they reach the
        Unix sockets named in ``sockets``; removed when the block ends."""

    def close(self) -> None:
        """Release what the backend holds (connections, temporary folders); it is not used afterwards."""


class BackendSetup(NamedTuple):
    """What a backend factory gets: its name, its settings (``terminal.<name>``) and the runtime's folders."""

    name: str
    #: ``terminal.<name>`` of config.yaml, with the task's own settings over it.
    settings: dict[str, Any]
    #: The runtime's workspace (where local commands start).
    workspace: Path
    #: The runtime's home folder (config, logs, cache).
    home: Path

    def parse(self, model: type[M]) -> M:
        """``settings`` validated as ``model``; raises :class:`BackendError` naming each bad key."""
        from pydantic import ValidationError

        try:
            return model.model_validate(self.settings)
        except ValidationError as exc:
            problems = "; ".join(f"terminal.{self.name}.{'.'.join(map(str, e['loc'])) or '(section)'}: {e['msg']}"
                                 for e in exc.errors())
            raise BackendError(f"invalid config.yaml: {problems}") from None


#: Makes a backend from its setup; may raise :class:`BackendUnavailable` (or any :class:`BackendError`).
BackendFactory = Callable[[BackendSetup], ExecutionBackend]


class BackendContribution(NamedTuple):
    """One backend a plugin contributed (``plugin`` is ``None`` for the built-in ``local``)."""

    name: str
    factory: BackendFactory
    plugin: str | None
    description: str = ""
    #: Returns true when the backend can work here; an exception's message says why it cannot.
    check_fn: Callable[[], Any] | None = None

    def availability(self) -> Availability:
        if self.check_fn is None:
            return Availability(True)
        try:
            ok = self.check_fn()
        except Exception as exc:
            return Availability(False, str(exc) or f"its check raised {type(exc).__name__}")
        return Availability(True) if ok else Availability(False, "its check reported it unavailable")


class _Assignment(NamedTuple):
    backend: str
    settings: dict[str, Any]


class ExecutionBackends:
    """The runtime's backends: which one a task uses, each made once per configuration, all closed with the runtime.

    ``table`` is the contributions' name → :class:`BackendContribution` map; ``config`` reads ``terminal:``.
    """

    def __init__(self, table: dict[str, BackendContribution], config: Callable[[], TerminalConfig],
                 workspace: Path, home: Path) -> None:
        self.table = table
        self._config = config
        self._workspace = workspace
        self._home = home
        self._assignments: dict[str, _Assignment] = {}
        self._instances: dict[tuple[str, str], ExecutionBackend] = {}
        self._lock = threading.Lock()
        # a runtime that is never closed still closes its backends (ssh masters, sandbox folders) at exit
        weakref.finalize(self, _close_all, self._instances)

    def assign(self, task_id: str, backend: str, settings: Mapping[str, Any] | None = None) -> None:
        """Run ``task_id``'s commands on ``backend``, with ``settings`` over its ``terminal.<backend>`` section."""
        self._assignments[task_id] = _Assignment(backend, dict(settings or {}))

    def unassign(self, task_id: str) -> None:
        """``task_id`` goes back to the configured backend."""
        self._assignments.pop(task_id, None)

    def selected(self, task_id: str | None = None) -> tuple[str, dict[str, Any]]:
        """The backend name ``task_id`` uses and its settings."""
        config = self._config()
        assignment = self._assignments.get(task_id or "")
        name = assignment.backend if assignment else config.backend
        settings = config.section(name)
        if assignment:
            settings.update(assignment.settings)
        return name, settings

    def get(self, task_id: str | None = None) -> ExecutionBackend:
        """The backend ``task_id`` runs on, made on first use; raises :class:`BackendError` when it cannot be."""
        name, settings = self.selected(task_id)
        key = (name, json.dumps(settings, sort_keys=True, default=str))
        with self._lock:
            backend = self._instances.get(key)
            if backend is None:
                backend = self._instances[key] = self._make(name, settings)
        return backend

    def _make(self, name: str, settings: dict[str, Any]) -> ExecutionBackend:
        contribution = self.table.get(name)
        if contribution is None:
            known = ", ".join(sorted(self.table)) or "none"
            raise BackendUnavailable(f"no plugin provides the terminal backend {name!r} (terminal.backend in "
                                     f"config.yaml; known backends: {known})")
        availability = contribution.availability()
        if not availability.available:
            raise BackendUnavailable(f"the terminal backend {name!r} is unavailable: {availability.reason}")
        setup = BackendSetup(name, settings, self._workspace, self._home)
        try:
            return contribution.factory(setup)
        except BackendUnavailable as exc:
            raise BackendUnavailable(f"the terminal backend {name!r} is unavailable: {exc}") from None
        except BackendError:
            raise
        except Exception as exc:
            owner = f" of plugin {contribution.plugin!r}" if contribution.plugin else ""
            raise BackendError(f"the terminal backend {name!r}{owner} failed to start: "
                               f"{type(exc).__name__}: {exc}") from exc

    def close(self) -> None:
        """Close every backend made so far."""
        with self._lock:
            _close_all(self._instances)


def _close_all(instances: dict[tuple[str, str], ExecutionBackend]) -> None:
    made = list(instances.values())
    instances.clear()
    for backend in made:
        try:
            backend.close()
        except Exception:
            log.exception("closing the terminal backend %r failed", getattr(backend, "name", backend))

"""The ``terminal`` and ``process`` tools (handlers named in plugin.yaml)."""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from typing import Any, Final

from hermes_core.backends import (
    BackendError,
    ExecutionBackend,
    InteractiveProcess,
    MissingDirectory,
    OutputBuffer,
    ShellBackend,
)
from hermes_core.plugin import tool_context, tool_error

from .approvals import check_command, check_input
from .notifications import Watch
from .processes import BackgroundProcess, ProcessTable
from .settings import SettingsError, TerminalSettings, load_settings
from .workdirs import WorkingDirectories

__all__ = ["process", "terminal"]

DEFAULT_TIMEOUT: Final = 180.0
DEFAULT_OUTPUT_CHARS: Final = 50_000
DEFAULT_LOG_LINES: Final = 200
MAX_RUNNING: Final = 32
#: Most characters one ``write`` or ``submit`` sends.
MAX_INPUT_CHARS: Final = 65_536
MAX_WATCH_PATTERNS: Final = 20
#: The task of calls made without a ``task_id``.
DEFAULT_TASK: Final = "default"


def _workdirs() -> WorkingDirectories:
    """The calling runtime's per-task working directories."""
    return tool_context().state("workdirs", WorkingDirectories)


def processes() -> ProcessTable:
    """The calling runtime's background processes (their reports go to the runtime's agent loop)."""
    context = tool_context()
    return context.state("processes", lambda: ProcessTable(context.inject_message))


def _with_reports(payload: dict[str, Any], task: str) -> dict[str, Any]:
    """``payload`` with the reports of the task's background processes that no agent loop took."""
    reports = processes().take_reports(task)
    return {**payload, "notifications": reports} if reports else payload


class _UserError(Exception):
    """A problem with the call itself; becomes ``{"error": message}``."""


def terminal(args: dict[str, Any], **kwargs: Any) -> str:
    """Run a shell command in the task's working directory, or start it in the background."""
    try:
        task = kwargs.get("task_id") or DEFAULT_TASK
        return json.dumps(_with_reports(_terminal(args, task, kwargs.get("session_id")), task))
    except _UserError as exc:
        return tool_error(str(exc))


def _terminal(args: dict[str, Any], task: str, session_id: str | None) -> dict[str, Any]:
    command = str(args.get("command") or "")
    if not command.strip():
        raise _UserError("command is empty: pass the shell command to run")
    settings = _settings()
    backend = _backend(task)
    cwd = _start_directory(args.get("workdir"), task, settings, backend)
    watch = _watch(args) if args.get("background") else None  # a bad argument is refused before approval is asked
    # approval comes before any backend sees the command
    refusal = check_command(command, session_id=session_id, args=args, cwd=cwd, workspace=backend.default_cwd)
    if refusal:
        raise _UserError(refusal)
    pty = bool(args.get("pty"))
    if args.get("background"):
        return _start_background(backend, command, cwd, task, pty, bool(args.get("workdir")), watch)
    timeout = min(float(args.get("timeout") or DEFAULT_TIMEOUT), settings.max_timeout)
    cap = min(int(args.get("max_output_chars") or DEFAULT_OUTPUT_CHARS), settings.max_output_chars)
    progress = tool_context().progress_reporter()  # lines of output, for a listening client or terminal
    try:
        if progress and isinstance(backend, ShellBackend):
            result = backend.run(command, cwd=cwd, timeout=timeout, max_output_chars=cap, pty=pty,
                                 on_output=progress.output)
        else:
            result = backend.run(command, cwd=cwd, timeout=timeout, max_output_chars=cap, pty=pty)
    except MissingDirectory:
        raise _missing(cwd, task, settings, backend, bool(args.get("workdir"))) from None
    except BackendError as exc:
        raise _UserError(str(exc)) from None
    except OSError as exc:
        raise _UserError(f"could not start the command in {cwd}: {exc.strerror or exc}") from None
    if not args.get("workdir"):
        _workdirs().set(task, result.cwd)
    output = _transformed(command, result.output, result.exit_code, task, backend.name, cap)
    payload: dict[str, Any] = {"output": output, "exit_code": result.exit_code, "cwd": result.cwd}
    if result.timed_out:
        payload["error"] = (f"the command timed out after {timeout:g}s and was killed with everything it "
                            "started; use background=true for long-running commands")
    return payload


def _transformed(command: str, output: str, exit_code: int, task: str, backend: str, cap: int) -> str:
    """``output`` after the plugins' ``transform_terminal_output`` hooks (the first string wins), within ``cap``."""
    for value in tool_context().invoke_hook("transform_terminal_output", command=command, output=output,
                                            returncode=exit_code, task_id=task, env_type=backend):
        if isinstance(value, str):
            capped = OutputBuffer(cap // 2, cap - cap // 2)
            capped.write(value)
            return capped.text()
    return output


def _settings() -> TerminalSettings:
    try:
        return load_settings()
    except SettingsError as exc:
        raise _UserError(str(exc)) from None


def _backend(task: str) -> ExecutionBackend:
    try:
        return tool_context().execution_backend(task)
    except BackendError as exc:
        raise _UserError(str(exc)) from None


def _initial_directory(settings: TerminalSettings, backend: ExecutionBackend) -> str:
    return settings.workdir or backend.default_cwd


def _start_directory(workdir: str | None, task: str, settings: TerminalSettings, backend: ExecutionBackend) -> str:
    """``workdir`` (relative to the task's directory) for this call only, else the task's directory.

    Paths are the backend's (POSIX, ``~`` its user's home); whether they exist is the backend's to say.
    """
    base = _workdirs().get(task) or _initial_directory(settings, backend)
    if not workdir:
        return base
    return workdir if workdir.startswith("~") else posixpath.join(base, workdir)


def _missing(cwd: str, task: str, settings: TerminalSettings, backend: ExecutionBackend,
             one_call: bool) -> _UserError:
    """The error for a start directory that does not exist; a task's vanished directory is reset."""
    if one_call or _workdirs().get(task) != cwd:
        return _UserError(f"working directory {cwd} does not exist or is not a directory")
    _workdirs().forget(task)
    return _UserError(f"the task's working directory {cwd} no longer exists; it is reset to "
                      f"{_initial_directory(settings, backend)}")


def _watch(args: dict[str, Any]) -> Watch | None:
    """What a background command asked to report by itself; Hermes Agent drops the patterns when both are set."""
    patterns = args.get("watch_patterns") or []
    if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
        raise _UserError("watch_patterns must be a list of non-empty strings to look for in the output")
    if len(patterns) > MAX_WATCH_PATTERNS:
        raise _UserError(f"watch_patterns has {len(patterns)} strings; give at most {MAX_WATCH_PATTERNS}")
    if args.get("notify_on_complete"):
        return Watch(notify_on_complete=True, patterns=())
    return Watch(notify_on_complete=False, patterns=tuple(patterns)) if patterns else None


def _start_background(backend: ExecutionBackend, command: str, cwd: str, task: str, pty: bool,
                      one_call: bool, watch: Watch | None) -> dict[str, Any]:
    if processes().running() >= MAX_RUNNING:
        raise _UserError(f"{MAX_RUNNING} background processes are already running; "
                         "stop some with process(action='kill') first")
    try:
        process = backend.spawn(command, cwd=cwd, pty=pty)
    except MissingDirectory:
        raise _missing(cwd, task, _settings(), backend, one_call) from None
    except BackendError as exc:
        raise _UserError(str(exc)) from None
    except OSError as exc:
        raise _UserError(f"could not start the command in {cwd}: {exc.strerror or exc}") from None
    if watch is not None:
        watch.reporter = tool_context().background_reporter()
    entry = processes().add(command, cwd, task, process, backend=backend.name, pty=pty, watch=watch)
    reported = (" you will be told when it exits;" if watch and watch.notify_on_complete else
                " you will be told when its output matches watch_patterns;" if watch else "")
    return {**entry.describe(),
            "message": f"started in the background;{reported} follow it with process(action='poll', "
                       f"session_id='{entry.id}'), answer a prompt with action='submit' and stop it with "
                       "action='kill'"}


def process(args: dict[str, Any], **kwargs: Any) -> str:
    """List, poll, read, wait for, write to or kill the task's background processes."""
    task = kwargs.get("task_id") or DEFAULT_TASK
    try:
        return json.dumps(_with_reports(_process(args, task), task))
    except _UserError as exc:
        return tool_error(str(exc))


def _process(args: dict[str, Any], task: str) -> dict[str, Any]:
    action = args.get("action")
    if action == "list":
        return {"processes": [entry.describe() for entry in processes().for_task(task)]}
    if action not in _ACTIONS:
        raise _UserError(f"unknown action {action!r}; use one of: list, {', '.join(_ACTIONS)}")
    process_id = args.get("session_id")
    if not process_id:
        raise _UserError(f"action '{action}' needs session_id: the id that terminal(background=true) returned")
    entry = processes().get(process_id, task)
    if entry is None:
        raise _UserError(f"no background process {process_id!r} in this task; "
                         "process(action='list') shows the task's processes")
    return _ACTIONS[action](entry, args, _settings())


def _poll(entry: BackgroundProcess, args: dict[str, Any], settings: TerminalSettings) -> dict[str, Any]:
    """Status and the output since the last poll, wait or kill."""
    described = entry.describe()
    entry.exit_seen = entry.exit_seen or described["status"] != "running"
    return {**described, "output": _tail(entry.unread_output(), settings)}


def _log(entry: BackgroundProcess, args: dict[str, Any], settings: TerminalSettings) -> dict[str, Any]:
    """A page of lines from the kept output: by default the last 200."""
    lines = entry.process.output.text().splitlines()
    limit = int(args.get("limit") or DEFAULT_LOG_LINES)
    offset = args.get("offset")
    start = max(0, len(lines) - limit) if offset is None else max(0, int(offset))
    page = lines[start:start + limit]
    return {**entry.describe(), "output": _tail("\n".join(page), settings),
            "offset": start, "lines": len(page), "total_lines": len(lines)}


def _wait(entry: BackgroundProcess, args: dict[str, Any], settings: TerminalSettings) -> dict[str, Any]:
    """Block until the process exits or ``timeout`` passes; then like poll."""
    timeout = min(float(args.get("timeout") or DEFAULT_TIMEOUT), settings.max_timeout)
    finished = entry.process.wait(timeout) is not None
    return {**_poll(entry, args, settings), "timed_out": not finished}


def _kill(entry: BackgroundProcess, args: dict[str, Any], settings: TerminalSettings) -> dict[str, Any]:
    """Stop the process and everything it started; then like poll (the caller knows it ended: no report)."""
    entry.exit_seen = True
    entry.kill()
    return _poll(entry, args, settings)


def _write(entry: BackgroundProcess, args: dict[str, Any], settings: TerminalSettings) -> dict[str, Any]:
    """Send ``data`` to the process's input as it is (no newline)."""
    return _send(entry, str(args.get("data") or ""), settings, args)


def _submit(entry: BackgroundProcess, args: dict[str, Any], settings: TerminalSettings) -> dict[str, Any]:
    """Send ``data`` and Enter, as a user answering a prompt."""
    return _send(entry, f"{args.get('data') or ''}\n", settings, args)


def _close(entry: BackgroundProcess, args: dict[str, Any], settings: TerminalSettings) -> dict[str, Any]:
    """End the process's input (end of file), without stopping it."""
    process = _interactive(entry)
    try:
        done = process.close_input()
    except BackendError as exc:
        raise _UserError(f"cannot close the input of {entry.id}: {exc}") from None
    return {"status": "ok", "session_id": entry.id, "message": done}


def _send(entry: BackgroundProcess, data: str, settings: TerminalSettings, args: dict[str, Any]) -> dict[str, Any]:
    if len(data) > MAX_INPUT_CHARS:
        raise _UserError(f"data has {len(data)} characters; send at most {MAX_INPUT_CHARS} at a time")
    process = _interactive(entry)
    # the line being typed so far and this data, judged as the command's input: a shell runs what it reads
    line = entry.pending_input + data
    refusal = check_input(entry.command, line, session_id=tool_context().session_id, args=args, cwd=entry.cwd)
    if refusal is not None:
        raise _UserError(refusal)
    try:
        written = process.write(data, settings.input_timeout)
    except BackendError as exc:
        raise _UserError(f"cannot write to {entry.id}: {exc}") from None
    entry.pending_input = line.rpartition("\n")[2][-MAX_INPUT_CHARS:]
    return {"status": "ok", "session_id": entry.id, "bytes_written": written}


def _interactive(entry: BackgroundProcess) -> InteractiveProcess:
    if entry.process.poll() is not None:
        raise _UserError(f"{entry.id} has already exited (exit code {entry.process.poll()}); it reads no input")
    if not isinstance(entry.process, InteractiveProcess):
        raise _UserError(f"the {entry.backend} backend's processes take no input")
    return entry.process


_ACTIONS: Final[dict[str, Callable[[BackgroundProcess, dict[str, Any], TerminalSettings], dict[str, Any]]]] = {
    "poll": _poll, "log": _log, "wait": _wait, "kill": _kill, "write": _write, "submit": _submit, "close": _close,
}


def _tail(text: str, settings: TerminalSettings) -> str:
    """The end of ``text`` within the output cap, with a marker when its start was cut."""
    cap = min(DEFAULT_OUTPUT_CHARS, settings.max_output_chars)
    if len(text) <= cap:
        return text
    return f"[... {len(text) - cap} earlier characters omitted ...]\n{text[-cap:]}"

"""Every public error of Hermes, each a :class:`HermesError` (mixed with the built-in base callers caught before).

The CLI prints a ``HermesError`` as one line, never a traceback: its message says what to change.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "ArgumentError",
    "BackendError",
    "BackendUnavailable",
    "CheckpointError",
    "CompileError",
    "ConfigError",
    "CronError",
    "CronUnavailable",
    "DeadlineExceeded",
    "DelegationError",
    "FileLockTimeout",
    "HermesError",
    "HookImplementationError",
    "InstallRefused",
    "InstallerError",
    "InteropError",
    "LlmEndpointError",
    "ManifestError",
    "McpCallError",
    "McpLoginNeeded",
    "MediaError",
    "MissingDirectory",
    "NoAnswer",
    "NotStrictError",
    "PluginFault",
    "PluginIndexError",
    "PolicyError",
    "ReferenceImportError",
    "ScaffoldError",
    "SessionStoreError",
    "SkillError",
    "ToolCallCancelled",
    "ToolError",
    "ToolsetCycleError",
    "UnknownToolsetError",
    "UnsafeFileError",
    "WheelError",
]


class HermesError(Exception):
    """A problem with the user's configuration, input or environment; its message says what to change."""


class ConfigError(HermesError):
    """config.yaml cannot be read, parsed, validated or written."""


class UnsafeFileError(HermesError, OSError):
    """A file Hermes did not write is not one it will read or lock: not a regular file, a symlink, too large, or in
    a folder another user may change."""


class FileLockTimeout(HermesError, TimeoutError):
    """Another edit of the same file held its lock for longer than the wait allowed."""


# -- Calls: arguments, policies, toolsets, hooks, formats ------------------------------------------------

class ArgumentError(HermesError, ValueError):
    """The arguments do not fit the tool's schema; ``problems`` lists each one."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


class PolicyError(HermesError, ValueError):
    """A name that is not an approval policy."""


class UnknownToolsetError(HermesError, ValueError):
    """No toolset, alias, preset or legacy name is called this."""

    def __init__(self, name: str) -> None:
        super().__init__(f"unknown toolset {name!r}")
        self.name = name


class ToolsetCycleError(HermesError, ValueError):
    """Composite toolsets include each other in a loop."""

    def __init__(self, cycle: list[str]) -> None:
        super().__init__("toolset include cycle: " + " -> ".join(cycle))
        self.cycle = cycle


class NotStrictError(HermesError, ValueError):
    """A schema that OpenAI strict mode cannot express without changing what it means."""

    def __init__(self, path: Sequence[str], problem: str) -> None:
        self.path = ".".join(path)
        super().__init__(f"property {self.path!r} {problem}" if path else f"the parameters {problem}")


class HookImplementationError(HermesError):
    """A hook implementation Hermes cannot run as written (pluggy's ``PluginValidationError``, in its words)."""

    def __init__(self, plugin: str, hook: str, function: Callable[..., Any], problem: str) -> None:
        try:
            signature = f"{hook}{inspect.signature(function)}"
        except (TypeError, ValueError):
            signature = hook
        super().__init__(f"Plugin {plugin!r} for hook {hook!r}\nhookimpl definition: {signature}\n{problem}")
        self.plugin, self.hook = plugin, hook


class PluginFault(HermesError):
    """Plugin code raised something that is not an ``Exception`` (``SystemExit``, its own ``KeyboardInterrupt``...):
    the tool call it ran for fails, naming the plugin, instead of its caller. Never raised out of a tool call."""

    def __init__(self, plugin: str | None, part: str, error: BaseException) -> None:
        try:
            detail = str(error)
        except Exception:
            detail = ""
        owner = f"{part} of plugin '{plugin}'" if plugin else part
        super().__init__(f"{owner} raised {type(error).__name__}" + (f": {detail}" if detail else ""))
        self.plugin, self.error = plugin, error


class ToolCallCancelled(HermesError):
    """The task awaiting this tool call was cancelled, so what it would have run next is not started."""


class NoAnswer(HermesError, RuntimeError):
    """A question to the user or a model got no answer: nobody is there to ask (the message says why), the answer
    did not come in time, the user declined, or the callback failed."""


class DelegationError(HermesError, ValueError):
    """A sub-agent cannot be started: the depth limit, too many tasks, a toolset it may not have (the message
    says which)."""


class ReferenceImportError(HermesError, ImportError):
    """A ``module:attr`` reference does not resolve."""


class DeadlineExceeded(HermesError, TimeoutError):
    """A call did not finish in time; it goes on, abandoned, on its worker thread."""


# -- Plugins and their tools -----------------------------------------------------------------------------

class ToolError(HermesError):
    """Raised by a tool function to fail the call: the model gets ``{"error": message}`` and nothing else."""


class ManifestError(HermesError, ValueError):
    """A ``plugin.yaml`` that cannot be read, parsed or validated."""


# -- Execution backends ----------------------------------------------------------------------------------

class BackendError(HermesError):
    """A backend could not run a command (a connection failed, its settings are invalid, ...)."""


class BackendUnavailable(BackendError):
    """The backend cannot work on this machine; the message says why and what to install or change."""


class MissingDirectory(BackendError):
    """The directory a command should start in does not exist on the backend's machine."""

    def __init__(self, path: str) -> None:
        super().__init__(f"working directory {path} does not exist or is not a directory")
        self.path = path


# -- Checkpoints -------------------------------------------------------------------------------------------------

class CheckpointError(HermesError):
    """A checkpoint cannot be taken, listed, compared or restored (git is missing, an unknown id, a path outside
    the workspace, ...)."""


# -- The index and installs ------------------------------------------------------------------------------

class PluginIndexError(HermesError):
    """The index cannot be read, parsed or validated; the message names where it came from."""


class InstallerError(HermesError):
    """pip cannot or should not run here."""


class InstallRefused(InstallerError):
    """The argument is not something ``hermes plugins install`` may hand to pip; nothing was run."""


class WheelError(HermesError):
    """A wheel that cannot be had or read; the message names it."""


# -- Authoring -------------------------------------------------------------------------------------------

class CompileError(HermesError):
    """The plugin's manifest cannot be written from its code; the message says why."""


class ScaffoldError(HermesError, ValueError):
    """A project that cannot be rendered: an invalid answer, or a directory in the way."""


# -- Skills ----------------------------------------------------------------------------------------------

class SkillError(HermesError):
    """A skill cannot be found, read, written or installed: a bad name or path, an invalid ``SKILL.md``."""


# -- Scheduled jobs ----------------------------------------------------------------------------------------

class CronError(HermesError):
    """A scheduled job cannot be read, found, changed or run: a corrupt ``jobs.json``, an unknown job id, an invalid
    schedule; the message says which and what to do."""


class CronUnavailable(CronError):
    """Scheduled jobs need the cron pack (``hermes-tools-cron``), which is not installed or is switched off."""

# -- the agent's own state ---------------------------------------------------------------------------------

class SessionStoreError(HermesError, ValueError):
    """A session store call Hermes cannot carry out: an unknown role, a session id that is not text, a write to a
    store opened read-only."""


# -- MCP -------------------------------------------------------------------------------------------------

class InteropError(HermesError):
    """Another client's configuration file cannot be read or written; the message names it."""


class McpCallError(HermesError):
    """A remote tool call failed: the tool reported an error, the server refused, timed out or went away."""


class McpLoginNeeded(HermesError, RuntimeError):
    """An OAuth MCP server wants a (new) sign-in, which only ``hermes mcp login NAME`` does (the message says so)."""

    def __init__(self, server: str, why: str) -> None:
        super().__init__(f"MCP server '{server}' {why}: run hermes mcp login {server}")


class MediaError(HermesError, ValueError):
    """An image or a sound of a tool result cannot be kept: too large, not an image or a sound, unreadable."""


# -- Hermes Agent compatibility ----------------------------------------------------------------------------

class LlmEndpointError(HermesError, RuntimeError):
    """``agent.auxiliary_client.call_llm`` (a shim) has no model endpoint configured, or the endpoint failed."""

"""``HERMES_HOME`` and ``config.yaml``: typed loading and comment-preserving edits."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = [
    "ConfigError",
    "HermesConfig",
    "config_path",
    "edit_config",
    "hermes_home",
    "load_config",
    "plugin_settings",
]


class ConfigError(Exception):
    """config.yaml cannot be read, parsed, validated or written."""


def hermes_home() -> Path:
    """``$HERMES_HOME``, or ``~/.hermes`` when it is unset or empty."""
    return Path(os.environ.get("HERMES_HOME") or Path.home() / ".hermes").expanduser()


def config_path(home: Path | None = None) -> Path:
    """The path of ``config.yaml`` under ``home`` (default: :func:`hermes_home`)."""
    return (home or hermes_home()) / "config.yaml"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PluginEntryConfig(_Section):
    allow_tool_override: bool = Field(
        False, description="Let this plugin replace a tool that another toolset already owns."
    )
    settings: dict[str, Any] = Field(default_factory=dict, description="The plugin's own settings.")


class PluginsConfig(_Section):
    enabled: list[str] | None = Field(None, description="An allow-list of plugin ids; absent = all.")
    disabled: list[str] = Field(default_factory=list, description="Plugin ids never loaded; always wins.")
    entries: dict[str, PluginEntryConfig] = Field(default_factory=dict)
    hook_timeout: float = Field(30.0, gt=0, description="Seconds a hook implementation may take.")


class ApprovalsConfig(_Section):
    mode: Literal["ask", "deny", "approve"] = "ask"
    timeout: float = Field(60.0, gt=0)


class ToolOutputConfig(_Section):
    max_result_size_chars: int = Field(100_000, gt=0, description="Default per-tool result budget.")
    turn_budget_chars: int = Field(200_000, gt=0, description="Budget for all results of one turn.")


class WebConfig(_Section):
    allow_private_networks: bool = False


class IndexConfig(_Section):
    url: str | None = None


class McpToolFilter(_Section):
    include: list[str] | None = None
    exclude: list[str] = Field(default_factory=list)


class McpServerConfig(_Section):
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    timeout: float = Field(300.0, gt=0)
    connect_timeout: float = Field(60.0, gt=0)
    enabled: bool = True
    tools: McpToolFilter = Field(default_factory=McpToolFilter)


class HermesConfig(BaseModel):
    """The whole of ``config.yaml``; unknown top-level keys are kept for plugins."""

    model_config = ConfigDict(extra="allow")

    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    toolsets: list[str] | None = Field(None, description="Default toolsets for `hermes mcp serve`.")
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    command_allowlist: list[str] = Field(default_factory=list)
    approvals: ApprovalsConfig = Field(default_factory=ApprovalsConfig)
    tool_output: ToolOutputConfig = Field(default_factory=ToolOutputConfig)
    web: WebConfig = Field(default_factory=WebConfig)
    index: IndexConfig = Field(default_factory=IndexConfig)


_cache: dict[Path, tuple[tuple[int, int], HermesConfig]] = {}
_cache_lock = threading.Lock()


def load_config(path: Path | None = None) -> HermesConfig:
    """Load and validate ``config.yaml`` (a missing file means defaults); cached by mtime."""
    path = path or config_path()
    try:
        stat = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return HermesConfig()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    key = (stat.st_mtime_ns, stat.st_size)
    with _cache_lock:
        cached = _cache.get(path)
        if cached and cached[0] == key:
            return cached[1]
    config = _parse(path, path.read_text(encoding="utf-8"))
    with _cache_lock:
        _cache[path] = (key, config)
    return config


def _parse(path: Path, text: str) -> HermesConfig:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise ConfigError(f"{path}{where}: invalid YAML: {getattr(exc, 'problem', exc)}") from None
    if data is None:
        return HermesConfig()
    if not isinstance(data, dict):
        raise ConfigError(f"{path}:1: the top level must be a mapping of keys, not {type(data).__name__}")
    try:
        return HermesConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(path, text, exc)) from None


def describe_validation_error(path: Path, text: str, exc: ValidationError) -> str:
    """One message naming the file, the line and the key of every problem."""
    problems = []
    for error in exc.errors():
        loc = [part for part in error["loc"] if not str(part).startswith(("function-", "union["))]
        line = yaml_line_of(text, loc)
        where = f"{path}:{line}" if line else str(path)
        key = ".".join(str(part) for part in loc) or "(top level)"
        problems.append(f"{where}: {key}: {error['msg']}")
    return "; ".join(problems)


def yaml_line_of(text: str, loc: list[Any]) -> int | None:
    """The 1-based line of the node at ``loc`` in a YAML document (the closest existing parent)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None
    line = node.start_mark.line + 1 if node else None
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            match = next((v for k, v in node.value if k.value == str(part)), None)
            key_node = next((k for k, _ in node.value if k.value == str(part)), None)
            if match is None:
                break
            line, node = key_node.start_mark.line + 1, match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def plugin_settings(plugin_id: str, config: HermesConfig | None = None) -> dict[str, Any]:
    """``plugins.entries.<plugin_id>.settings`` (empty when absent)."""
    entry = (config or load_config()).plugins.entries.get(plugin_id)
    return dict(entry.settings) if entry else {}


_edit_lock = threading.Lock()


def edit_config(mutate: Callable[[Any], None], path: Path | None = None) -> HermesConfig:
    """Apply ``mutate`` to the round-trip document of config.yaml, validate it, and write it back.

    Comments, key order and quoting of the user's file are kept (ruamel.yaml round-trip mode).
    """
    from io import StringIO

    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap

    path = path or config_path()
    rt = YAML()
    rt.preserve_quotes = True
    with _edit_lock:
        try:
            original = path.read_text(encoding="utf-8") if path.exists() else ""
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
        document = rt.load(original) if original.strip() else None
        if document is None:
            document = CommentedMap()
        mutate(document)
        buffer = StringIO()
        rt.dump(document, buffer)
        text = buffer.getvalue()
        config = _parse(path, text)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
        except OSError as exc:
            raise ConfigError(
                f"{path}: cannot write the configuration ({exc.strerror}); check the folder's permissions"
            ) from None
    return config

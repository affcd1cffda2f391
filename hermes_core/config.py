"""``config.yaml``: its models, typed loading and comment-preserving edits (the home decides the path)."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .errors import HermesError
from .yamlmodel import validate_yaml

__all__ = [
    "ConfigError",
    "HermesConfig",
    "edit_config",
    "load_config",
    "parse_config",
]


class ConfigError(HermesError):
    """config.yaml cannot be read, parsed, validated or written."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", defer_build=True)


class PluginEntryConfig(BaseModel):
    """``plugins.entries.<id>``: our keys, and any others a plugin written for Hermes Agent 0.19 reads there."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    allow_tool_override: bool = Field(
        False, description="Let this plugin replace a tool that another toolset already owns."
    )
    settings: dict[str, Any] = Field(default_factory=dict, description="The plugin's own settings.")

    def plugin_settings(self) -> dict[str, Any]:
        """What the plugin reads as its settings: the keys beside ours, then ``settings`` over them."""
        return {**(self.model_extra or {}), **self.settings}


class PluginsConfig(_Section):
    enabled: list[str] | None = Field(None, description="An allow-list of plugin ids; absent = all.")
    disabled: list[str] = Field(default_factory=list, description="Plugin ids never loaded; always wins.")
    entries: dict[str, PluginEntryConfig] = Field(default_factory=dict)
    hook_timeout: float = Field(30.0, ge=0, description="Seconds a hook implementation may take; 0 for no deadline "
                                                        "(implementations then run inline, in the caller's thread).")


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

    model_config = ConfigDict(extra="allow", defer_build=True)

    plugins: PluginsConfig = Field(default_factory=PluginsConfig)
    toolsets: list[str] | None = Field(None, description="Default toolsets for `hermes mcp serve`.")
    mcp_servers: dict[str, McpServerConfig] = Field(default_factory=dict)
    command_allowlist: list[str] = Field(default_factory=list)
    approvals: ApprovalsConfig = Field(default_factory=ApprovalsConfig)
    tool_output: ToolOutputConfig = Field(default_factory=ToolOutputConfig)
    web: WebConfig = Field(default_factory=WebConfig)
    index: IndexConfig = Field(default_factory=IndexConfig)

    def plugin_settings(self, plugin_id: str) -> dict[str, Any]:
        """The settings of ``plugin_id``: ``plugins.entries.<id>.settings`` and the keys beside it."""
        entry = self.plugins.entries.get(plugin_id)
        return entry.plugin_settings() if entry else {}

    def override_granted(self, plugin_id: str | None) -> bool:
        """``plugins.entries.<id>.allow_tool_override`` is true."""
        entry = self.plugins.entries.get(plugin_id or "")
        return bool(entry and entry.allow_tool_override)


_cache: dict[Path, tuple[tuple[int, int], HermesConfig]] = {}
_cache_lock = threading.Lock()


def load_config(path: Path) -> HermesConfig:
    """Load and validate ``config.yaml`` at ``path`` (a missing file means defaults); cached by mtime."""
    try:
        stat = path.stat()
    except (FileNotFoundError, NotADirectoryError):
        return _defaults()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    key = (stat.st_mtime_ns, stat.st_size)
    with _cache_lock:
        cached = _cache.get(path)
        if cached and cached[0] == key:
            return cached[1]
    config = parse_config(path.read_text(encoding="utf-8"), path)
    with _cache_lock:
        _cache[path] = (key, config)
    return config


@functools.cache
def _defaults() -> HermesConfig:
    return HermesConfig()


def parse_config(text: str, path: Path) -> HermesConfig:
    """Validate the text of ``config.yaml``; raises :class:`ConfigError` naming ``path``, the line and the key."""
    return validate_yaml(text, path, HermesConfig, ConfigError, "the top level")


_edit_lock = threading.Lock()


def edit_config(mutate: Callable[[Any], None], path: Path) -> HermesConfig:
    """Apply ``mutate`` to the round-trip document of config.yaml, validate it, and write it back.

    Comments, key order and quoting of the user's file are kept (ruamel.yaml round-trip mode).
    """
    from io import StringIO

    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap

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
        config = parse_config(text, path)
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

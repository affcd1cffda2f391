"""Shim of Hermes Agent's ``hermes_cli.config``: the config.yaml and ``.env`` of the runtime running the plugin."""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import yaml

from ...config.home import HermesHome
from ...config.untrusted import TEXT_LIMIT, read_untrusted_text
from . import host

__all__ = ["get_config_path", "get_env_path", "get_env_value", "get_hermes_home", "load_config",
           "load_config_readonly", "read_raw_config"]


def home() -> HermesHome:
    """The home of the runtime that loads or calls this plugin."""
    runtime_home = host().home
    if runtime_home is None:
        raise RuntimeError("this plugin context has no Hermes home")
    return runtime_home


def get_hermes_home() -> Path:
    """The home folder of the runtime that loads or calls this plugin."""
    return home().root


def get_config_path() -> Path:
    return home().config_file


def get_env_path() -> Path:
    return get_hermes_home() / ".env"


def load_config_readonly() -> dict[str, Any]:
    """``config.yaml`` as a dict, Hermes' defaults filled in; every key of the file is kept (plugins'
    settings under ``plugins.entries.<id>`` and top-level sections of their own included)."""
    return home().config().model_dump(mode="json")


def load_config() -> dict[str, Any]:
    """Like :func:`load_config_readonly`, as a copy the caller may change (changes are not saved)."""
    return copy.deepcopy(load_config_readonly())


def read_raw_config() -> dict[str, Any]:
    """``config.yaml`` as written, without defaults (``{}`` when there is none)."""
    try:
        data = yaml.safe_load(read_untrusted_text(home().config_file, TEXT_LIMIT, follow_symlinks=True))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def get_env_value(key: str) -> str | None:
    """``key`` from the environment, else from the home's ``.env`` file, else None."""
    if key in os.environ:
        return os.environ[key]
    try:
        path = get_env_path()
    except RuntimeError:  # called outside a plugin Hermes loaded: the environment is all there is
        return None
    return _dotenv(path).get(key)


def _dotenv(path: Path) -> dict[str, str]:
    """``KEY=VALUE`` lines (``export`` and surrounding quotes allowed; ``#`` comments skipped)."""
    try:
        lines = read_untrusted_text(path, TEXT_LIMIT, follow_symlinks=True).splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    values = {}
    for line in lines:
        line = line.strip().removeprefix("export ").strip()
        key, sep, value = line.partition("=")
        if sep and key.strip() and not key.lstrip().startswith("#"):
            value = value.strip()
            if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
                value = value[1:-1]
            values[key.strip()] = value
    return values

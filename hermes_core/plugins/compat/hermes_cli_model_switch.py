"""Shim of Hermes Agent's ``hermes_cli.model_switch``: parsing ``/model`` arguments and resolving a switch, for
plugins that route work to another model (hermes-delegate-routing resolves ``delegate_task``'s per-task
``model`` with it).

Hermes asks models at one endpoint (``delegation.base_url``, or the host's and the MCP client's callbacks), so a
switch keeps the current endpoint and names another model on it; a switch to another provider fails, saying so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["ModelFlagParseResult", "ModelSwitchResult", "parse_model_flags", "parse_model_flags_detailed",
           "switch_model"]

_FLAGS = {"--global": "is_global", "--session": "is_session", "--refresh": "force_refresh", "--once": "is_once"}


@dataclass(frozen=True)
class ModelFlagParseResult:
    model_input: str
    explicit_provider: str = ""
    is_global: bool = False
    force_refresh: bool = False
    is_session: bool = False
    is_once: bool = False


@dataclass
class ModelSwitchResult:
    success: bool
    new_model: str = ""
    target_provider: str = ""
    provider_changed: bool = False
    api_key: str = ""
    base_url: str = ""
    api_mode: str = ""
    error_message: str = ""
    warning_message: str = ""
    provider_label: str = ""
    resolved_via_alias: str = ""
    is_global: bool = False


def parse_model_flags_detailed(raw_args: str) -> ModelFlagParseResult:
    """``"sonnet --provider anthropic --global"`` -> the model, the provider and the flags."""
    words = re.sub(r"[\u2012\u2013\u2014\u2015](provider|global|session|refresh|once)", r"--\1", raw_args).split()
    flags: dict[str, Any] = {}
    model: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in _FLAGS:
            flags[_FLAGS[word]] = True
        elif word == "--provider" and index + 1 < len(words):
            flags["explicit_provider"] = words[index + 1]
            index += 1
        else:
            model.append(word)
        index += 1
    return ModelFlagParseResult(" ".join(model).strip(), **flags)


def parse_model_flags(raw_args: str) -> tuple[str, str, bool, bool, bool]:
    """The historical 5-tuple: model, provider, global, refresh, session."""
    parsed = parse_model_flags_detailed(raw_args)
    return parsed.model_input, parsed.explicit_provider, parsed.is_global, parsed.force_refresh, parsed.is_session


def switch_model(raw_input: str, current_provider: str, current_model: str, current_base_url: str = "",
                 current_api_key: str = "", is_global: bool = False, explicit_provider: str = "",
                 user_providers: Any = None, custom_providers: Any = None, **ignored: Any) -> ModelSwitchResult:
    """Model ``raw_input`` on the current endpoint; another provider than the current one is refused."""
    if explicit_provider and explicit_provider != current_provider:
        return ModelSwitchResult(False, error_message=(
            f"Hermes asks every model at one endpoint (delegation.base_url in config.yaml, or the host's model); it "
            f"cannot switch to provider {explicit_provider!r}"))
    model = raw_input.strip() or current_model
    if not model:
        return ModelSwitchResult(False, error_message="no model named, and no current model")
    return ModelSwitchResult(True, new_model=model, target_provider=current_provider, api_key=current_api_key,
                             base_url=current_base_url, is_global=is_global)

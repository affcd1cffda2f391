"""Dotted keys of ``config.yaml`` (``browser.allow_private``) checked against the config model (``hermes config``)."""

from __future__ import annotations

import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from ..errors import ConfigError
from .model import HermesConfig

__all__ = ["ConfigKey", "resolve_key"]


@dataclass(frozen=True)
class ConfigKey:
    """A dotted key and what the config model says of it."""

    parts: tuple[str, ...]
    #: The type of its value where the model declares one (``None``: a plugin's or a free-form setting).
    annotation: Any = None
    #: The first part is not a section of Hermes itself: a plugin's own top-level section.
    plugin_section: bool = False

    @property
    def takes_text(self) -> bool:
        """Its declared type is text (and neither a number nor a yes/no): ``true`` or ``5`` stay text."""
        kinds = set(_members(self.annotation)) - {type(None)}
        return str in kinds and not kinds & {bool, int, float}


def resolve_key(key: str, plugin_sections: frozenset[str] = frozenset()) -> ConfigKey:
    """The key ``key`` of config.yaml; raises :class:`ConfigError` naming the valid keys where it is not one.

    A top-level key that is not Hermes's own is accepted when it is one of ``plugin_sections`` (the ids of the
    plugins found, whose own settings may live there, and the sections the file already has); below a section
    that keeps keys it does not know (``delegation``, ``terminal.<backend>``, a plugin's block) any key is
    accepted.
    """
    parts = tuple(key.split("."))
    if not key or any(not part for part in parts):
        raise ConfigError(f"{key!r} is not a key: dotted names such as browser.allow_private or approvals.mode")
    model: Any = HermesConfig
    for index, part in enumerate(parts):
        here = ".".join(parts[:index])
        if isinstance(model, type) and issubclass(model, BaseModel):
            field = model.model_fields.get(part)
            if field is None:
                if index == 0 and part not in plugin_sections:
                    raise ConfigError(f"unknown key {part!r}: the settings of Hermes are {_names(model)}; the "
                                      f"plugins' own sections here are {_names_of(plugin_sections)} (or put a plugin's "
                                      "settings under plugins.<id>)")
                if model.model_config.get("extra") != "allow":
                    raise ConfigError(f"unknown key {key!r}: the keys of {here} are {_names(model)}")
                return ConfigKey(parts, plugin_section=index == 0)
            model = field.annotation
            continue
        if model is Any:  # free-form data (a plugin's ``settings``): any key below it
            return ConfigKey(parts)
        mapping = _mapping_value(model)
        if mapping is None:
            raise ConfigError(f"{here} is a value, not a section: {key!r} cannot be set")
        model = mapping
    return ConfigKey(parts, model)


def _names(model: type[BaseModel]) -> str:
    return ", ".join(name for name in model.model_fields)


def _names_of(sections: frozenset[str]) -> str:
    return ", ".join(sorted(sections)) or "(none found)"


def _members(annotation: Any) -> list[Any]:
    """The types of a union (``X | None``), or the annotation itself."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return [member for arg in typing.get_args(annotation) for member in _members(arg)]
    if typing.get_origin(annotation) is typing.Literal:
        return [type(value) for value in typing.get_args(annotation)]
    return [typing.get_origin(annotation) or annotation]


def _mapping_value(annotation: Any) -> Any:
    """The value type of a ``dict[str, X]`` (or ``dict[str, X] | None``) annotation, else None."""
    for member in (annotation, *typing.get_args(annotation)):
        if typing.get_origin(member) is dict:
            return typing.get_args(member)[1]
    return None

"""``hermes config path|show|get|set|unset``: read and change config.yaml, checked against the config model, with
its comments kept."""

from __future__ import annotations

import json
from typing import Any, cast

import click
import yaml

from ..config.keys import ConfigKey, resolve_key
from ..config.model import edit_config
from ..config.yamlmodel import round_trip_node
from ..errors import ConfigError
from ._common import UserError, echo_json, home

__all__ = ["config"]


@click.group()
def config() -> None:
    """Read and change config.yaml (its comments are kept)."""


@config.command("path")
def path_command() -> None:
    """Print where config.yaml is (it may not exist yet)."""
    click.echo(str(home().config_file))


@config.command("show")
@click.option("--effective", is_flag=True, help="Every setting of Hermes with the defaults filled in, not the file.")
@click.option("--json", "as_json", is_flag=True, help="The effective settings as JSON.")
def show(effective: bool, as_json: bool) -> None:
    """Print config.yaml as written (comments included)."""
    if effective or as_json:
        data = _effective()
        echo_json(data) if as_json else click.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), nl=False)
        return
    path = home().config_file
    try:
        click.echo(path.read_text(encoding="utf-8"), nl=False)
    except FileNotFoundError:
        click.echo(f"no {path} yet: every setting has its default (`hermes config show --effective` lists them)",
                   err=True)


@config.command("get")
@click.argument("key")
@click.option("--json", "as_json", is_flag=True, help="The value as JSON.")
def get(key: str, as_json: bool) -> None:
    """Print the value of KEY (a dotted name, e.g. approvals.mode), its default when config.yaml has none."""
    checked = _resolve(key)
    value: Any = _effective()
    for part in checked.parts:
        if not isinstance(value, dict) or part not in value:
            raise UserError(f"{key} is not set (and has no default)")
        value = value[part]
    if as_json:
        echo_json(value)
    elif isinstance(value, str):
        click.echo(value)
    elif isinstance(value, dict | list):
        click.echo(yaml.safe_dump(value, sort_keys=False, allow_unicode=True), nl=False)
    else:
        click.echo(json.dumps(value))


@config.command("set")
@click.argument("key")
@click.argument("value")
def set_command(key: str, value: str) -> None:
    """Set KEY to VALUE (read as YAML: true, 5, [a, b]; text where the setting is text)."""
    checked = _resolve(key)
    try:
        parsed = value if checked.takes_text else yaml.safe_load(value)
    except yaml.YAMLError as exc:
        raise UserError(f"{value!r} is not a YAML value: {getattr(exc, 'problem', None) or exc}") from None

    def mutate(document: Any) -> None:
        parent = document
        for part in checked.parts[:-1]:
            child = parent.get(part)
            if not hasattr(child, "ca"):  # missing, or a value where a section goes: made a section
                from ruamel.yaml.comments import CommentedMap

                child = parent[part] = CommentedMap()
            parent = child
        parent[checked.parts[-1]] = round_trip_node(parsed)

    _edit(mutate)
    click.echo(f"{key} = {json.dumps(parsed)} in {home().config_file}")


@config.command("unset")
@click.argument("key")
def unset(key: str) -> None:
    """Remove KEY from config.yaml (it goes back to its default)."""
    checked = _resolve(key)
    found: list[bool] = []

    def mutate(document: Any) -> None:
        from ..config.model import remove_from_mapping

        holder: Any = None
        parent: Any = document
        for part in checked.parts[:-1]:
            holder, parent = parent, parent.get(part) if isinstance(parent, dict) else None
        last = checked.parts[-1]
        if not isinstance(parent, dict) or last not in parent:
            return
        found.append(True)
        if holder is None:
            cast(Any, parent).ca.items.pop(last, None)  # a round-trip mapping: its comments on that key
            del parent[last]
        else:
            remove_from_mapping(holder, checked.parts[-2], last)

    _edit(mutate)
    click.echo(f"{key} removed from {home().config_file}" if found else f"{key} was not set")


def _resolve(key: str) -> ConfigKey:
    from ..runtime import Runtime

    try:
        # the sections plugins may own: the ids of those found, and the top-level sections config.yaml has
        sections = {candidate.id for candidate in Runtime(home=home()).discover()}
        sections.update(home().config().model_extra or {})
        return resolve_key(key, frozenset(sections))
    except ConfigError as exc:
        raise UserError(str(exc)) from None


def _effective() -> dict[str, Any]:
    try:
        return home().config().model_dump(mode="json")
    except ConfigError as exc:
        raise UserError(str(exc)) from None


def _edit(mutate: Any) -> None:
    try:
        edit_config(mutate, home().config_file)
    except ConfigError as exc:
        raise UserError(f"{exc}\nnothing was changed") from None

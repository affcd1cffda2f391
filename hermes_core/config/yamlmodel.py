"""YAML documents validated into pydantic models, with errors that name the file, the line and the key."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

__all__ = ["describe_validation_error", "load_untrusted_yaml", "round_trip_node", "validate_data", "validate_yaml",
           "yaml_line_of"]

M = TypeVar("M", bound=BaseModel)
_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _AliasesRefused(yaml.YAMLError):
    """An untrusted document uses YAML anchors and aliases (``&a`` / ``*a``), which could expand it without bound."""

    def __init__(self, line: int) -> None:
        super().__init__(f"line {line}: YAML aliases (*name) are not allowed here")
        self.line = line


def load_untrusted_yaml(text: str) -> Any:
    """``yaml.safe_load`` for a document from someone else (a plugin's manifest, an index entry): aliases are
    refused, so a "billion laughs" document cannot expand into gigabytes."""
    if "*" in text:
        for event in yaml.parse(text, Loader=_Loader):
            if isinstance(event, yaml.AliasEvent):
                raise _AliasesRefused(event.start_mark.line + 1 if event.start_mark else 0)
    loader = _UntrustedLoader(text)
    try:  # what yaml.load does, with the common nodes built by _plain (PyYAML's constructor is pure Python)
        node = loader.get_single_node()
        if node is None:
            return None
        try:
            return _plain(node, loader)
        except (_Unusual, RecursionError):
            return loader.construct_document(node)
    finally:
        loader.dispose()


class _UntrustedLoader(_Loader):
    """The safe loader, remembering the tags of short plain scalars (names, types, numbers recur in every manifest:
    PyYAML matches each against its patterns, in Python, each time)."""

    _tags: ClassVar[dict[tuple[str, tuple[bool, bool]], str]] = {}

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: Any) -> str:
        if kind is not yaml.ScalarNode or len(value) > 64 or self.yaml_path_resolvers:
            return str(super().resolve(kind, value, implicit))
        key = (value, implicit)
        tag = self._tags.get(key)
        if tag is None:
            tag = str(super().resolve(kind, value, implicit))
            if len(self._tags) >= 4096:
                self._tags.clear()
            self._tags[key] = tag
        return tag


_TAG = "tag:yaml.org,2002:"
_STR, _MAP, _SEQ = f"{_TAG}str", f"{_TAG}map", f"{_TAG}seq"
_SCALARS = frozenset({f"{_TAG}null", f"{_TAG}bool", f"{_TAG}int", f"{_TAG}float"})


class _Unusual(Exception):
    """A node :func:`_plain` leaves to PyYAML's constructor (a merge key, a timestamp, a set, a key that is not a
    scalar...): the whole document is built by it instead."""


def _plain(node: yaml.Node, loader: Any) -> Any:
    """What PyYAML's safe constructor builds of ``node`` when it holds only text, numbers, booleans, nulls, lists and
    mappings with scalar keys (about a third of its time); :class:`_Unusual` for anything else."""
    tag = node.tag
    if isinstance(node, yaml.ScalarNode):
        if tag == _STR:
            return node.value
        if tag in _SCALARS:
            return loader.yaml_constructors[tag](loader, node)
    elif isinstance(node, yaml.MappingNode) and tag == _MAP:
        mapping = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode) or (key.tag not in _SCALARS and key.tag != _STR):
                raise _Unusual
            mapping[_plain(key, loader)] = _plain(value, loader)
        return mapping
    elif isinstance(node, yaml.SequenceNode) and tag == _SEQ:
        return [_plain(item, loader) for item in node.value]
    raise _Unusual


def validate_yaml(text: str, source: Path | str, model: type[M], error: type[Exception], what: str,
                  *, trusted: bool = True) -> M:
    """Parse ``text`` and validate it as ``model``; any problem raises ``error`` naming file and line.

    ``what`` names the document in the message for a non-mapping ("a manifest", "the top level");
    ``trusted=False`` refuses YAML aliases (see :func:`load_untrusted_yaml`).
    """
    try:
        data = yaml.load(text, Loader=_Loader) if trusted else load_untrusted_yaml(text)
    except _AliasesRefused as exc:
        raise error(f"{source}:{exc.line}: YAML aliases (*name) are not allowed in {what}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark else ""
        raise error(f"{source}{where}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    return validate_data(data, text, source, model, error, what)


def validate_data(data: Any, text: str, source: Path | str, model: type[M], error: type[Exception], what: str) -> M:
    """Validate ``data``, the parsed YAML ``text``, as ``model`` (see :func:`validate_yaml`)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise error(f"{source}:1: {what} must be a mapping of keys, not {type(data).__name__}")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error(describe_validation_error(Path(source), text, exc)) from None


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
            if match is None or key_node is None:
                break
            line, node = key_node.start_mark.line + 1, match
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line


def round_trip_node(value: Any) -> Any:
    """``value`` as a ruamel round-trip node that reads back as ``value`` with PyYAML too.

    ruamel writes YAML 1.2, where ``on``, ``no`` or ``0o7`` are text, but Hermes reads its files with PyYAML
    (YAML 1.1), where they are not: such text is quoted. Lists and mappings are written in block style, one
    item a line (``[]`` and ``{}`` when empty); text of several lines as a ``|`` block.
    """
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import LiteralScalarString, SingleQuotedScalarString

    if isinstance(value, dict):
        mapping = CommentedMap((round_trip_node(key), round_trip_node(item)) for key, item in value.items())
        if not value:
            mapping.fa.set_flow_style()
        return mapping
    if isinstance(value, list):
        sequence = CommentedSeq(round_trip_node(item) for item in value)
        if not value:
            sequence.fa.set_flow_style()
        return sequence
    if isinstance(value, str):
        if "\n" in value:
            return LiteralScalarString(value)
        try:
            same = yaml.load(value, Loader=_Loader) == value
        except yaml.YAMLError:
            same = False
        return value if same else SingleQuotedScalarString(value)
    return value

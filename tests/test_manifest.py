"""The plugin.yaml model: tolerant of Hermes Agent manifests, strict where it matters, schema published."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import hermes_core
from hermes_core.plugins.manifest import ManifestError, manifest_json_schema, parse_manifest

PUBLISHED = Path(hermes_core.__file__).parent / "schemas" / "plugin-manifest.schema.json"


def test_published_json_schema_matches_the_model():
    assert json.loads(PUBLISHED.read_text()) == json.loads(json.dumps(manifest_json_schema())), (
        "regenerate hermes_core/schemas/plugin-manifest.schema.json from manifest_json_schema()")


def test_hermes_agent_manifest_shapes_are_accepted():
    manifest = parse_manifest("""
name: github-app
version: 0.1
description: x
kind: standalone
provides_tools: [a, b]
provides_hooks: [pre_tool_call]
requires_env:
  - PLAIN_NAME
  - {name: SECRET_KEY, description: key, url: https://example.org, secret: true}
provides: {hooks: [post_tool_call]}
label: GitHub
""")
    assert manifest.version == "0.1" and [e.name for e in manifest.requires_env] == ["PLAIN_NAME", "SECRET_KEY"]
    assert manifest.requires_env[1].secret and manifest.unknown_fields == ["label", "provides"]
    assert manifest.tools is None and not manifest.declarative


def test_declarative_means_tools_declared_and_no_hooks():
    assert parse_manifest("tools: []\n").declarative
    assert not parse_manifest("tools: []\nprovides_hooks: [pre_tool_call]\n").declarative


@pytest.mark.parametrize(("text", "message"), [
    ("requires_hermes: 'not a spec'\n", "requires_hermes"),
    ("tools:\n  - name: t\n    toolset: s\n    description: d\n    handler: no-colon\n", "tools.0.handler"),
    ("tools:\n  - name: t\n    toolset: s\n    description: d\n    handler: a:b\n    bogus: 1\n", "tools.0.bogus"),
    ("tools:\n  - name: t\n    toolset: s\n    handler: a:b\n", "tools.0.description"),
    ("- just\n- a list\n", "must be a mapping"),
])
def test_invalid_manifests_name_the_field_and_line(text, message):
    with pytest.raises(ManifestError, match=message) as info:
        parse_manifest(text, "p/plugin.yaml")
    assert str(info.value).startswith("p/plugin.yaml:")


def test_relative_handlers_are_allowed():
    manifest = parse_manifest("tools:\n  - {name: t, toolset: s, description: d, handler: .tools:run}\n")
    assert manifest.tools[0].handler == ".tools:run"

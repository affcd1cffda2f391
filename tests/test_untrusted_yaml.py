"""``load_untrusted_yaml`` (manifests, index entries, skill front matter) builds what PyYAML's safe loader builds,
its common nodes without PyYAML's constructor, and refuses aliases."""

from __future__ import annotations

import pytest
import yaml

from hermes_core.config.yamlmodel import load_untrusted_yaml

SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

DOCUMENTS = [
    "", "# only a comment\n", "plain text", "42", "~", "[]", "{}",
    "name: demo\nversion: 1.0.0\ntools:\n  - {name: a_tool, toolset: demo, annotations: {read_only: true}}\n",
    "yes: no\non: off\nTrue: FALSE\nnull: ~\n",
    "ints: [0x1F, 0o17, 017, 1_000, -3, +4, 0b101, '12', 1:20]\nfloats: [1.5, -.inf, .NaN, 6.02e+23, 1_0.5, 1:20.5]\n",
    "text: |\n  two\n  lines\nfolded: >\n  one\n  line\nquoted: \"a\\tb\\u00e9\"\nsingle: 'it''s'\n",
    "nested: {a: [1, {b: [c, {d: e}]}]}\nempty: {x: [], y: {}, z: ''}\n",
    "1: one\n2.5: half\n~: none\ntrue: yes\n",
    "when: 2026-12-06\nstamp: 2026-12-06T10:00:00Z\n",
    "blob: !!binary aGVsbG8=\n",
    "a_set: !!set {x, y}\nordered: !!omap [{b: 1}, {a: 2}]\n",
    "base: {x: 1}\nmerged: {<<: {x: 1, y: 2}, y: 3}\n",
    "=: the value key\n",
    "? [not, hashable]\n: value\n",
    "explicit: !!str 12\nnumber: !!int '7'\nfloat: !!float '1'\n",
    "duplicate: 1\nduplicate: 2\n",
    "--- first\n--- second\n",
    "key: !custom value\n",
    "deep: " + "[" * 200 + "]" * 200 + "\n",
    "bad: [unclosed\n",
]


def _outcome(load, text: str) -> object:
    try:
        return ("value", load(text))
    except yaml.YAMLError as exc:
        return ("error", type(exc).__name__, str(exc))


@pytest.mark.parametrize("text", DOCUMENTS)
def test_the_data_is_what_pyyaml_builds(text: str) -> None:
    ours, theirs = _outcome(load_untrusted_yaml, text), _outcome(lambda t: yaml.load(t, Loader=SAFE), text)
    assert repr(ours) == repr(theirs)  # (repr: a NaN equals no NaN)


def test_aliases_are_refused_with_their_line() -> None:
    with pytest.raises(yaml.YAMLError, match="line 2: YAML aliases"):
        load_untrusted_yaml("a: &x [1, 2]\nb: *x\n")

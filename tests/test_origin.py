"""How pip installed a distribution (PEP 610's ``direct_url.json``), read once for the freeze, discovery and
Hermes' own origin: a record that cannot be read counts as an install from an index, never an error."""

from __future__ import annotations

from importlib.metadata import PathDistribution
from pathlib import Path

import pytest

from hermes_core.origin import direct_url


def installed(tmp_path: Path, record: str | None) -> PathDistribution:
    info = tmp_path / "demo-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n")
    if record is not None:
        (info / "direct_url.json").write_text(record)
    return PathDistribution(info)


def test_a_folder_install_is_read(tmp_path: Path) -> None:
    record = '{"url": "file:///src/demo", "dir_info": {"editable": true}}'
    assert direct_url(installed(tmp_path, record)) == {"url": "file:///src/demo", "dir_info": {"editable": True}}


@pytest.mark.parametrize("record", [None, "", "not json {", "[1, 2]", '"a string"'])
def test_no_record_or_one_that_is_not_an_object_is_an_index_install(tmp_path: Path, record: str | None) -> None:
    assert direct_url(installed(tmp_path, record)) == {}

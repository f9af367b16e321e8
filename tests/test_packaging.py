"""Packaging habits: the licence file says what pyproject says, CITATION.cff is valid Citation
File Format 1.2.0 metadata for this version and cites the seed papers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import hbo_envs

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ROOT / ".." / "shared" / "papers"


def test_license_file_is_the_license_pyproject_declares() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert meta["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License")
    assert "Permission is hereby granted, free of charge" in text


def test_citation_cff() -> None:
    yaml = pytest.importorskip("yaml", reason="pyyaml is in the [test] extra")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    # required keys of CFF 1.2.0 and the ones we rely on
    for key in ("cff-version", "message", "title", "authors", "version", "license"):
        assert cff.get(key), key
    assert cff["cff-version"] == "1.2.0"
    assert cff["version"] == hbo_envs.__version__
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert cff["version"] == meta["version"] and cff["license"] == meta["license"]["text"]
    refs = cff["references"]
    assert len(refs) == 3
    for ref in refs:
        assert ref["type"] == "conference-paper" and isinstance(ref["year"], int)
        assert all("family-names" in a and "given-names" in a for a in ref["authors"])
    if not PAPERS.is_dir():
        pytest.skip("../shared/papers is absent: reference titles not checked against the papers")
    names = {p.name for p in PAPERS.iterdir() if p.is_file()}
    for ref in refs:  # the papers are stored as <family-names>-<year>-<topic>
        stem = "-".join(a["family-names"].lower() for a in ref["authors"]) + f"-{ref['year']}-"
        assert any(n.startswith(stem) for n in names), (stem, names)
    assert len(names) >= len(refs)

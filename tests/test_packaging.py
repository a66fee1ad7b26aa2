"""Packaging facts a user's tools read: an SPDX license with its file, the typing marker, and the
lower bounds the code needs."""

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[1]


def _project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_license_is_an_spdx_expression_with_its_file():
    project = _project()["project"]
    assert project["license"] == "MIT"  # the table form stops building on 2027-02-18
    assert project["license-files"] == ["LICENSE"] and "MIT License" in (ROOT / "LICENSE").read_text()


def test_the_package_says_it_is_typed():
    assert (ROOT / "ctxselect" / "py.typed").exists()
    assert "py.typed" in _project()["tool"]["setuptools"]["package-data"]["ctxselect"]


def test_lower_bounds_the_code_needs():
    needs = {d.split(">=")[0]: d.split(">=")[1] for d in _project()["project"]["dependencies"]}
    assert tuple(map(int, needs["rapidfuzz"].split("."))) >= (3, 8)  # older ones fail ctxselect's calls (issue 15)
    assert tuple(map(int, needs["typer"].split("."))) >= (0, 16)  # typer that works with click 8.2

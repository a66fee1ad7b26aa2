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


def test_classifiers_say_typed_and_the_python_versions_of_requires_python():
    project = _project()["project"]
    classifiers = project["classifiers"]
    assert "Typing :: Typed" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")]  # an SPDX license forbids them
    versions = sorted(c.rsplit(" ", 1)[1] for c in classifiers if c.startswith("Programming Language :: Python :: 3."))
    assert project["requires-python"] == f">={versions[0]}" and versions[0] == "3.10"
    assert "urls" not in project  # no public home yet: no placeholder URL (docs: pyproject's comment)


def test_the_optional_extras_and_tomli_only_on_310():
    project = _project()["project"]
    extras = project["optional-dependencies"]
    assert extras["parquet"] == ["pyarrow>=14"] and "pyarrow>=14" in extras["dev"]
    assert {"build>=1.0", "setuptools>=77"} <= set(extras["dev"])  # the sdist test builds without isolation
    assert extras["plot"] == ["matplotlib>=3.7"]
    assert "tomli>=1.1; python_version < '3.11'" in project["dependencies"]
    assert "evaluate/data/*.jsonl" in _project()["tool"]["setuptools"]["package-data"]["ctxselect"]


def _copy_source(target: Path) -> Path:
    import shutil

    skip = shutil.ignore_patterns(".git", "__pycache__", "build", "dist", "*.egg-info", ".pytest_cache",
                                  ".hypothesis", ".benchmarks")
    return Path(shutil.copytree(ROOT, target, ignore=skip))


def test_the_sdist_carries_and_runs_its_tests(tmp_path):
    """`python -m build --sdist` of the source, unpacked: it holds the tests, the examples, the docs
    and the packaged example, and its tests pass from it (a sample: the whole suite is CI's)."""
    import subprocess
    import sys
    import tarfile

    from importlib.metadata import version

    pytest.importorskip("build")
    setuptools = tuple(int(p) for p in version("setuptools").split(".")[:2] if p.isdigit())
    if setuptools < (77,):  # the dev extra brings it; a venv's bundled setuptools is older
        pytest.skip(f"building without isolation needs setuptools>=77 (the dev extra), found {setuptools}")
    source = _copy_source(tmp_path / "src")
    built = subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--skip-dependency-check",
                            "--outdir", str(tmp_path / "dist")], cwd=source, capture_output=True, text=True,
                           timeout=600)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    (archive,) = (tmp_path / "dist").glob("ctxselect-*.tar.gz")
    with tarfile.open(archive) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}  # Python >= 3.10.12
        tar.extractall(tmp_path / "unpacked", **safe)
    for needed in ("tests/conftest.py", "tests/cli/test_parquet_cmd.py", "tests/data/ragscope_vectors.json",
                   "examples/support_desk.jsonl", "ctxselect/evaluate/data/support_desk.jsonl", "ctxselect/evaluate/data/demo.jsonl", "docs/cli.md",
                   "ctxselect/py.typed", "LICENSE", "MANIFEST.in"):
        assert needed in names, needed
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    (unpacked,) = (tmp_path / "unpacked").iterdir()
    # a sample that compiles no kernel (a fresh folder would compile them all: ~30 s)
    sample = ["tests/model/test_overrides.py", "tests/model/test_parquet.py", "tests/test_layout.py"]
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *sample, "-x",
                          "-o", "addopts="], cwd=unpacked, capture_output=True, text=True, timeout=900)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert " passed" in ran.stdout.splitlines()[-1]
    where = subprocess.run([sys.executable, "-c", "import ctxselect; print(ctxselect.__file__)"], cwd=unpacked,
                           capture_output=True, text=True, timeout=300)
    assert Path(where.stdout.strip()).is_relative_to(unpacked)  # the sdist's code was tested, not an install

"""The dump that `ctxselect gen` writes, shared by the command tests (generated once per session)."""

import pytest
from typer.testing import CliRunner

from ctxselect.cli.core import app


@pytest.fixture(scope="session")
def generated(tmp_path_factory):
    """Four generated queries of 30 candidates (seed 5), written by the `gen` command."""
    path = tmp_path_factory.mktemp("gen") / "gen.jsonl"
    result = CliRunner().invoke(app, ["gen", str(path), "--queries", "4", "--candidates", "30", "--seed", "5"])
    assert result.exit_code == 0, result.output
    return path

"""Issue 17 through the command: the takeaway lines come first, before the tables, on the bundled
demonstration dump."""

from typer.testing import CliRunner

from ctxselect.cli.core import app
from tests.conftest import EXAMPLES

runner = CliRunner()


def test_bench_opens_with_the_takeaway_then_the_table():
    result = runner.invoke(app, ["bench", str(EXAMPLES / "demo.jsonl"), "--methods", "greedy,optimal"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("optimal vs greedy over 40 queries: gate passed 40/40 (greedy ")
    first_table = next(k for k, line in enumerate(lines) if "┃" in line or "|" in line)
    assert any(line.startswith("the dump's own contexts (selected, 40 queries)") for line in lines[:first_table])
    assert "the gate decides first" in result.stdout

"""The README is the first thing a user reads: its main job is what CI runs, and the output it
quotes is the command's real output (latencies aside, which vary run to run)."""

import re
from pathlib import Path

from typer.testing import CliRunner

from ctxselect.cli.core import app

ROOT = Path(__file__).resolve().parent.parent


def _normalised(text: str) -> str:
    """Latencies (the only one-decimal numbers of the output) masked, whitespace collapsed."""
    return " ".join(re.sub(r"(?<![\d.])\d+\.\d(?![\d.])", "N", text).split())


def test_the_readme_main_job_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    commands = re.findall(r"```bash\n(pip install [^\n]+)\n```", readme)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert commands[:2] == ["pip install . && ctxselect bench examples/demo.jsonl", "pip install -e '.[dev]' && pytest"]
    assert all(f"\n{c}\n" in ci for c in commands[:2])


def test_the_readme_quotes_the_real_output():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quoted = re.search(r"```text\n(optimal vs greedy.*?)\n```", readme, re.S).group(1)
    result = CliRunner().invoke(app, ["bench", str(ROOT / "examples" / "demo.jsonl")], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in quoted.splitlines()) <= 80
    assert _normalised(result.stdout) == _normalised(quoted)

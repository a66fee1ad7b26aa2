"""Bench plots (issue 15.7): drawn without touching the process's matplotlib backend or pyplot, and
checked (matplotlib, the target) by check_plot before any work."""

from __future__ import annotations

import subprocess
import sys

import pytest

import ctxselect
from ctxselect.errors import InputError
from ctxselect.evaluate.bench import run_bench
from ctxselect.evaluate.plot import check_plot, plot_bench
from tests.conftest import EXAMPLES, ROOT

matplotlib = pytest.importorskip("matplotlib")

EXAMPLE = EXAMPLES / "support_desk.jsonl"
PNG = b"\x89PNG\r\n\x1a\n"


def test_plot_keeps_the_notebooks_backend(tmp_path):
    result = run_bench(list(ctxselect.read_dump(EXAMPLE)), ["greedy", "density"])
    saved = matplotlib.get_backend()
    try:
        matplotlib.use("svg")  # a notebook's backend stands in: anything but Agg
        plot_bench(result, tmp_path / "p.png")
        assert matplotlib.get_backend() == "svg"
    finally:
        matplotlib.use(saved)
    assert (tmp_path / "p.png").read_bytes()[:8] == PNG


def test_plot_never_imports_pyplot_or_sets_a_backend(tmp_path):
    code = f"""
import sys, matplotlib, ctxselect
from ctxselect.evaluate.bench import run_bench
from ctxselect.evaluate.plot import plot_bench
before = dict.__getitem__(matplotlib.rcParams, "backend")
plot_bench(run_bench(list(ctxselect.read_dump({str(EXAMPLE)!r})), ["greedy"]), {str(tmp_path / "q.png")!r})
print("matplotlib.pyplot" in sys.modules, before == dict.__getitem__(matplotlib.rcParams, "backend"))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["False", "True"]
    assert (tmp_path / "q.png").read_bytes()[:8] == PNG


def test_check_plot_names_the_extra_and_the_target(tmp_path, monkeypatch):
    with pytest.raises(InputError, match="cannot write: no folder"):
        check_plot(tmp_path / "missing" / "p.png")
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(InputError, match=r"plotting needs matplotlib; expected pip install 'ctxselect\[plot\]'"):
        check_plot(tmp_path / "p.png")


def test_the_plot_shows_gate_pass_rates_and_recall_against_latency(tmp_path, monkeypatch):
    """Issue 17.4: what the picture holds is the bench's numbers — one bar per method at its gate
    pass rate, one point per method at (latency p50 in ms, gold recall)."""
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    from ctxselect.evaluate.demo import demo_queries

    drawn = []
    save = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: (drawn.append(self), save(self, *a, **k))[1])
    result = run_bench(demo_queries(queries=6), ["greedy", "optimal"])
    plot_bench(result, tmp_path / "bench.png")
    (fig,) = drawn
    left, right = fig.axes
    widths = [bar.get_width() for bar in left.patches]
    assert widths == pytest.approx([100 * s.gate_passed / s.queries for s in result.summaries])
    points = right.collections[0].get_offsets()
    expected = [(s.latency_p50 * 1e3, s.gold["recall"]) for s in result.summaries]
    assert [float(v) for p in points for v in p] == pytest.approx([v for p in expected for v in p])

"""Bench plots (matplotlib is an optional extra: ``pip install 'ctxselect[plot]'``).

Drawn with matplotlib's object API (a :class:`matplotlib.figure.Figure` of its own, printed by the
Agg canvas): :mod:`matplotlib.pyplot` is never imported and the process's backend never switched,
so a notebook's inline or interactive backend stays as it was.
"""

from __future__ import annotations

import os

from ctxselect.errors import InputError
from ctxselect.evaluate.bench import BenchResult
from ctxselect.model.files import open_atomic, output_target

__all__ = ["check_plot", "plot_bench"]

def check_plot(path: str | os.PathLike) -> None:
    """Check, before any work, that a plot can be written: matplotlib is installed and ``path`` is
    a target :func:`ctxselect.model.files.output_target` accepts.

    Raises
    ------
    InputError
        Naming the extra to install, or the target's problem.
    """
    try:
        import matplotlib.figure  # noqa: F401
    except ImportError:
        raise InputError(field="--plot", message="plotting needs matplotlib",
                         expected="pip install 'ctxselect[plot]'") from None
    output_target(path)


def plot_bench(result: BenchResult, path: str | os.PathLike) -> None:
    """Gate pass rate per method (left) and gold recall — or article 000's quality score without
    gold — against latency (right), a PNG written whole or not at all.

    Parameters
    ----------
    result : BenchResult
    path : str or path-like
        Written as :func:`ctxselect.model.files.open_atomic` writes (mode from the umask or the existing
        file, symlinks written through, a non-regular target refused).

    Raises
    ------
    InputError
        Without matplotlib, or when the target cannot be written.
    """
    check_plot(path)  # refuse a bad target before drawing
    from matplotlib.figure import Figure

    summaries = result.summaries
    fig = Figure(figsize=(11, 4.2))
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 1.4]})
    names = [s.method for s in summaries]
    rates = [s.gate_passed / s.queries if s.queries else 0.0 for s in summaries]
    colours = ["#2e7d32" if r >= 1.0 else "#ef6c00" if r >= 0.5 else "#c62828" for r in rates]
    bars = left.barh(range(len(names)), [100 * r for r in rates], color=colours)
    for bar, s in zip(bars, summaries):
        left.text(min(bar.get_width() + 2, 88), bar.get_y() + bar.get_height() / 2,
                  f"{s.gate_passed}/{s.queries}", va="center", fontsize=9)
    left.set_yticks(range(len(names)), names)
    left.invert_yaxis()
    left.set_xlim(0, 105)
    left.set_xlabel("contexts that pass the quality gate (%)")
    left.set_title("Does the context pass the gate?")
    with_gold = all(s.gold_queries for s in summaries)
    quality = [s.gold["recall"] if with_gold else s.quality_score for s in summaries]
    latency = [s.latency_p50 * 1e3 for s in summaries]
    right.scatter(latency, quality, s=80, c=colours, zorder=3)
    for s, x, y in zip(summaries, latency, quality):
        right.annotate(s.method, (x, y), textcoords="offset points", xytext=(6, 4), fontsize=9)
    right.set_xlim(0, max(latency + [1e-3]) * 1.25)
    low = min(quality + [1.0])
    right.set_ylim(max(0.0, low - 0.1), 1.06)
    right.grid(alpha=0.3, zorder=0)
    right.set_xlabel("latency of select(), p50 (ms)")
    right.set_ylabel("gold recall" if with_gold else "quality score (article 000)")
    right.set_title("What it gets right, and what it costs")
    fig.suptitle(f"{result.queries} queries — green: every context passes the gate, orange: half or more, "
                 "red: fewer", fontsize=9, y=0.02, va="bottom")
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    with open_atomic(path, binary=True) as handle:
        fig.savefig(handle, format="png", dpi=110)

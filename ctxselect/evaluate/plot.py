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

_SHOWN = ("coverage_weighted", "token_utilization", "source_starvation", "contradiction_density",
          "freshness", "policy_admissibility")


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
    """Quality against latency (left) and per-metric bars (right), a PNG written whole or not at all.

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

    fig = Figure(figsize=(12, 4.5))
    left, right = fig.subplots(1, 2)
    for s in result.summaries:
        left.scatter(s.latency_p50 * 1e3, s.objective, s=60)
        left.annotate(s.method, (s.latency_p50 * 1e3, s.objective), textcoords="offset points", xytext=(5, 5))
    left.set_xscale("log")
    left.set_xlabel("latency p50 (ms, log)")
    left.set_ylabel("mean objective")
    left.set_title("quality against latency")
    width = 0.8 / max(len(result.summaries), 1)
    for k, s in enumerate(result.summaries):
        right.bar([m + k * width for m in range(len(_SHOWN))], [s.metrics[name] for name in _SHOWN],
                  width=width, label=s.method)
    right.set_xticks([m + 0.4 - width / 2 for m in range(len(_SHOWN))])
    right.set_xticklabels([n.replace("_", "\n") for n in _SHOWN], fontsize=8)
    right.set_title("quality metrics (mean)")
    right.legend(fontsize=8)
    fig.tight_layout()
    with open_atomic(path, binary=True) as handle:
        fig.savefig(handle, format="png", dpi=110)

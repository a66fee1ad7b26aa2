"""Bench plots (matplotlib is an optional extra: ``pip install 'ctxselect[plot]'``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .bench import BenchResult
from .errors import InputError

__all__ = ["plot_bench"]

_SHOWN = ("coverage_weighted", "token_utilization", "source_starvation", "contradiction_density",
          "freshness", "policy_admissibility")


def plot_bench(result: BenchResult, path: str | os.PathLike) -> None:
    """Quality against latency (left) and per-metric bars (right), written whole or not at all."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError(field="--plot", message="plotting needs matplotlib",
                         expected="pip install 'ctxselect[plot]'") from None
    target = Path(path)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
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
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".png", dir=target.parent if str(target.parent) else ".")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110)
        os.replace(tmp, target)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)

"""Small helpers shared by test modules (inputs live in strategies.py, reference twins in naive/)."""

from __future__ import annotations

import tracemalloc

MiB = 1 << 20

# Library bugs the suite has found; each is an expected failure (strict) where it shows.
SUPERSESSION_BUG = ("library bug: an older version is kept although a newer version of its document is "
                    "eligible, when the newer version listed last is not eligible — "
                    "selection/corroboration.py superseded_versions() maps each older chunk to one newer "
                    "partner (the last pair wins the dict) and resolve_conflicts() checks only that one, "
                    "so the outcome depends on the candidates' order")


def seeds_with_known_bug(seeds, failing, reason):
    """``seeds`` as pytest parameters, those in ``failing`` marked as strict expected failures."""
    import pytest

    return [pytest.param(s, marks=pytest.mark.xfail(strict=True, reason=reason)) if s in failing else s
            for s in seeds]


def peak_memory(work) -> tuple[object, int]:
    """(result of ``work()``, peak bytes Python allocated while it ran)."""
    tracemalloc.start()
    try:
        result = work()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()

"""Process settings a call scopes to itself: the cyclic garbage collector paused while it runs.

A ``select()`` call allocates a few container objects per candidate (rows, claims, reasons). Each
700 of them start a collection of the youngest generation, and every tenth of those an older one;
the oldest generation scans every object the process holds (the caller's included), so its cost
grows with the caller's heap, not with the call. Measured at n = 50,000 (benchmarks/latency.py,
2026-12-01): 207 young, 19 middle and 2 full collections per call, 370 ms of a 1.6 s call, and
they freed nothing (the call's objects hold no reference cycles; they are freed by reference
counting as usual). The collector is paused for the call instead and resumes, as it was, when the
call returns or raises; collections it skipped are not owed (the counters carry on from where
they were).

Threads: the pause is counted, so it ends when the last of several concurrent calls returns. A
collector the caller paused stays paused; a caller that pauses or resumes the collector from
another thread *while* a call runs has that setting replaced when the call ends (CPython's switch
is one per process).
"""

from __future__ import annotations

import functools
import gc
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

__all__ = ["collection_paused", "pauses_collection"]

_LOCK = threading.Lock()
_DEPTH = 0  # calls inside a pause, over all threads
_RESUME = False  # whether the collector was on when the first of them started


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (see the module docstring)."""
    global _DEPTH, _RESUME
    with _LOCK:
        if _DEPTH == 0:
            _RESUME = gc.isenabled()
            gc.disable()
        _DEPTH += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0 and _RESUME:
                gc.enable()


F = TypeVar("F", bound=Callable)


def pauses_collection(function: F) -> F:
    """Decorator: ``function`` runs inside :func:`collection_paused`."""

    @functools.wraps(function)
    def paused(*args, **kwargs):
        with collection_paused():
            return function(*args, **kwargs)

    return paused  # type: ignore[return-value]

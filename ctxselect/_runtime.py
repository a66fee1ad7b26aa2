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

Threads: the call that finds the collector on pauses it and resumes it when it ends, even while
calls of other threads still run (they ran inside its pause, and the rest of them runs with the
collector on): so the pause never outlasts one call, and a server whose threads always have a
call running still collects (a pause counted until the last concurrent call ended never ended
there: 241,800 cyclic objects piled up in 6 s with two threads calling). A collector the caller
paused stays paused; a caller that pauses or resumes the collector from another thread *while* a
call runs has that setting replaced when the call ends (CPython's switch is one per process). A
process forked while another thread's call had paused the collector resumes it in the child
(that thread does not exist there).
"""

from __future__ import annotations

import functools
import gc
import os
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, TypeVar

__all__ = ["collection_paused", "pauses_collection"]

_LOCK = threading.Lock()
_OWNER: tuple[object, int] | None = None  # (the call, its thread) that paused the collector


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (see the module docstring)."""
    global _OWNER
    token = object()
    with _LOCK:
        if _OWNER is None and gc.isenabled():
            gc.disable()
            _OWNER = (token, threading.get_ident())
    try:
        yield
    finally:
        with _LOCK:
            if _OWNER is not None and _OWNER[0] is token:
                _OWNER = None
                gc.enable()


def _after_fork_in_child() -> None:
    """In a forked child only the forking thread exists: a pause another thread's call began would
    never end there, and a lock that thread held would never be released."""
    global _LOCK, _OWNER
    _LOCK = threading.Lock()
    if _OWNER is not None and _OWNER[1] != threading.get_ident():
        _OWNER = None
        gc.enable()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


F = TypeVar("F", bound=Callable)


def pauses_collection(function: F) -> F:
    """Decorator: ``function`` runs inside :func:`collection_paused`."""

    @functools.wraps(function)
    def paused(*args, **kwargs):
        with collection_paused():
            return function(*args, **kwargs)

    return paused  # type: ignore[return-value]

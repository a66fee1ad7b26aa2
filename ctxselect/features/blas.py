"""BLAS on one thread for a block of code: the setting in force read on entry and put back on exit."""

from __future__ import annotations

import threading
from contextlib import contextmanager

__all__ = ["one_blas_thread"]


class _BlasLimit:
    """The process-wide state of :func:`one_blas_thread`: the controller (found once: building one
    costs ~0.3 ms, ``threadpool_limits`` ~0.27 ms a call) and the thread whose limit is in force."""

    lock = threading.Lock()
    owner: threading.Thread | None = None
    controller = None


@contextmanager
def one_blas_thread():
    """BLAS limited to one thread inside the ``with`` block, the previous setting restored on exit.

    The setting in force (the user's ``threadpoolctl.threadpool_limits``, ``OPENBLAS_NUM_THREADS``)
    is read on entry and put back on exit, by the same thread: it is never changed for good. BLAS
    threads are one process-wide setting, so only one block sets it at a time: a nested block, or
    one in another thread while a block is open, runs under the limit already in force and
    restores nothing. When another thread holds a ``threadpool_limits`` of its own, threadpoolctl
    lets only that thread change OpenBLAS: the block then runs with the setting as it is. Without
    threadpoolctl the block runs unchanged.
    """
    limiter = None
    with _BlasLimit.lock:
        if _BlasLimit.owner is None:
            controller = _blas_controller()
            if controller is not None:
                limiter = controller.limit(limits=1)  # reads the setting in force, then sets 1
                limiter.__enter__()  # threadpoolctl counts the thread's ownership of OpenBLAS
                _BlasLimit.owner = threading.current_thread()
    try:
        yield
    finally:
        if limiter is not None:
            with _BlasLimit.lock:  # restored before another block can read the setting
                limiter.__exit__(None, None, None)
                _BlasLimit.owner = None


def _blas_controller():
    """The BLAS libraries loaded (NumPy's among them), found on first use."""
    if _BlasLimit.controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # a declared dependency; without it BLAS keeps its threads
            return None
        _BlasLimit.controller = ThreadpoolController().select(user_api="blas")
    return _BlasLimit.controller

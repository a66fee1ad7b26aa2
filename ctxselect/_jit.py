"""The one place where Numba compilation options are set.

Serial kernels use :data:`serial`, parallel kernels :data:`parallel`; both cache to disk so a
fresh process loads machine code instead of compiling. ``FASTMATH`` lists the LLVM flags allowed
in floating-point kernels: reassociation and contraction (faster dot products) but not
``nnan``/``ninf``, so NaN and infinity keep their meaning.
"""

from __future__ import annotations

from numba import njit

FASTMATH = {"reassoc", "contract", "arcp", "nsz"}

serial = njit(cache=True, nogil=True)
serial_fast = njit(cache=True, nogil=True, fastmath=FASTMATH)
parallel = njit(cache=True, nogil=True, parallel=True)

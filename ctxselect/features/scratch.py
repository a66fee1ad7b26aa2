"""Scratch arrays a thread keeps from one call to the next: the cosine's unit rows and its tiles,
the MinHash signatures.

Many VMs (this one among them) hand the memory a process frees back to their host within about a
second, and the first touch of fresh memory then costs 4.5-8.6 s a GB, against 0.17 s for memory
the process still holds. At 50,000 x 384 the cosine's unit rows (77 MB of float32) took 98-742 ms
to normalise in fresh memory (benchmarks/latency.py, whose greedy calls run between the optimizer's),
and 58-73 ms in the array kept from the call before; the time saved goes to comparing rows. At
50,000 texts the pass that signs them (51 MB of signatures) took 385-930 ms, then 185-194 ms.

A thread keeps one buffer per name, grown by half again when a request does not fit (so that a
slowly growing n does not pay for fresh memory on every call); all its buffers together hold at
most :data:`KEPT_BYTES`: a request that would pass it frees the thread's other buffers first, and
one larger than it gets a fresh array that is not kept. The buffers live as long as their thread,
or until it calls :func:`release`. Only code that never lets the array outlive the call may use it:
the thread's next request of the same name overwrites it.
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["KEPT_BYTES", "release", "scratch"]

#: The most a thread keeps, all its buffers together: 128 MiB holds the unit rows of 87,000 x 384
#: (the cosine's float32 tiles and block besides: 10 MB at the default block_size); with int8 products
#: (features/tiles.py) the rows packed as int8 too and a tile of bits, up to ~68,000 x 384 (int16, whose
#: tiles are int32: ~54,000; a call whose int8 gave way to int16 holds both, ~45,000); or the signatures
#: of 130,000 texts.
KEPT_BYTES = 128 * 2**20

_KEPT = threading.local()


def scratch(name: str | None, shape: tuple[int, ...], dtype) -> np.ndarray:
    """An uninitialised C-contiguous array of ``shape`` and ``dtype``, in this thread's kept buffer
    ``name`` when it needs at most :data:`KEPT_BYTES` (the buffer grows to fit), else fresh.

    Parameters
    ----------
    name : str or None
        The buffer: one array in use per name and thread at a time. None: a fresh array, not kept.
    shape : tuple of int
        Non-negative sizes.
    dtype : numpy dtype

    Returns
    -------
    ndarray
        Its contents are whatever the buffer held: write before reading.
    """
    dtype = np.dtype(dtype)
    size = dtype.itemsize
    for extent in shape:
        if int(extent) < 0:
            raise ValueError(f"negative dimensions are not allowed: {tuple(shape)}")
        size *= int(extent)  # (a Python int: no overflow)
    if name is None or size > KEPT_BYTES:
        return np.empty(shape, dtype=dtype)
    kept = getattr(_KEPT, "buffers", None)
    if kept is None:
        kept = _KEPT.buffers = {}
    buffer = kept.get(name)
    if buffer is None or buffer.nbytes < size:
        others = sum(b.nbytes for key, b in kept.items() if key != name)
        grown = min(max(size, 0 if buffer is None else buffer.nbytes * 3 // 2), KEPT_BYTES)
        if others + grown > KEPT_BYTES:
            kept.clear()  # the other buffers go first: the thread keeps at most KEPT_BYTES
        kept.pop(name, None)  # (freed before the new one is made)
        buffer = kept[name] = np.empty(max(grown, 1), dtype=np.uint8)  # (16-byte aligned: any dtype's view)
    return buffer[:size].view(dtype).reshape(shape)


def release() -> int:
    """Free this thread's kept buffers (a thread done with large calls gives the memory back now,
    not when it ends); the bytes they held."""
    kept = getattr(_KEPT, "buffers", None)
    held = sum(b.nbytes for b in kept.values()) if kept else 0
    if kept:
        kept.clear()
    return held

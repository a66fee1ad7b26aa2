"""Term hashes and their tables, jitted: what the query-aware signals look terms up with.

A term (a word of :mod:`ctxselect.kernels.words`, stemmed) is identified by a 64-bit hash of its
UTF-8 bytes (FNV-1a, then the splitmix64 finaliser: ``words._hash_each``), never by its string: two terms with equal
hashes (among m terms, about m²/2⁶⁵ expected, 3·10⁻⁸ for a million) would count as one,
undetected. Stopwords are matched exactly (hash, then bytes): :func:`_stop_bits` and a
:func:`_key_table` of their hashes are the word scan's stopword arguments. Probe terms are looked
up by the FNV state of their bytes (:func:`_state_keys`, :func:`_probe_table`), so the scan needs
no finaliser per word. A listed text's terms are matched with :func:`_membership`.
"""

from __future__ import annotations

import numpy as np
from numba import prange, uint64

from ctxselect._config import parallel, serial, serial_twin

_CHUNKS = 256  # the parallel kernel's prange steps: chunks of consecutive rows


@serial
def _state_keys(hashes):
    """The FNV-1a state whose splitmix64 finaliser (``words._mix64``) is each hash (inverted), its halves
    swapped so that the low bits, a table's slot, are the state's better-mixed high bits."""
    out = np.empty_like(hashes)
    for k in range(hashes.shape[0]):
        x = hashes[k]
        x = (x ^ (x >> uint64(31)) ^ (x >> uint64(62))) * uint64(0x319642B2D24D8EC3)
        x = (x ^ (x >> uint64(27)) ^ (x >> uint64(54))) * uint64(0x96DE1B173F119089)
        x = x ^ (x >> uint64(30)) ^ (x >> uint64(60))
        out[k] = (x >> uint64(32)) | (x << uint64(32))
    return out


@serial
def _table_size(count, spread):
    """A power of two, at least 16, 2 x ``count`` and (up to 65,536) ``spread`` x ``count``: in a
    sparse table most absent keys stop at an empty first slot, a branch the CPU predicts."""
    size = 16
    while size < spread * count and size < 65536:
        size *= 2
    while size < 2 * count:
        size *= 2
    return size


@serial
def _key_table(keys, spread):
    """An open-addressing table of ``keys`` (uint64, already well spread; linear probing): the
    keys by slot, and their positions in ``keys`` by slot (-1: empty)."""
    size = _table_size(keys.shape[0], spread)
    table_keys = np.zeros(size, dtype=np.uint64)
    table_index = np.full(size, -1, dtype=np.int64)
    for k in range(keys.shape[0]):
        slot = np.int64(keys[k] & uint64(size - 1))
        while table_index[slot] >= 0:
            slot = (slot + 1) & (size - 1)
        table_keys[slot] = keys[k]
        table_index[slot] = k
    return table_keys, table_index


@serial
def _stop_bits(hashes):
    """16,384 bits, bit ``h >> 50`` set for each hash: a word whose bit is clear is no stopword."""
    bits = np.zeros(256, dtype=np.uint64)
    for k in range(hashes.shape[0]):
        top = hashes[k] >> uint64(50)
        bits[top >> uint64(6)] |= uint64(1) << (top & uint64(63))
    return bits


@serial
def _probe_table(probes):
    """The probes' :func:`_key_table` (keyed by FNV state, :func:`_state_keys`; a sparse table: most
    words are no probe and stop at an empty first slot, spread 128 rather than 32: 0.92 / 0.90 /
    0.94x the time at n = 200 / 2,000 / 20,000, in-process A/B, same output)."""
    return _key_table(_state_keys(probes), 128)


@parallel
def _membership(indptr, hashes, probes):
    """Bool (n, P): whether row t of the CSR (indptr, hashes) holds ``probes[j]`` (distinct)."""
    n = indptr.shape[0] - 1
    out = np.zeros((n, probes.shape[0]), dtype=np.bool_)
    table_keys, table_index = _key_table(probes, 32)
    size = table_keys.shape[0]
    chunks = min(n, _CHUNKS)
    for c in prange(chunks):
        for t in range(c * n // chunks, (c + 1) * n // chunks):
            for k in range(indptr[t], indptr[t + 1]):
                slot = np.int64(hashes[k] & uint64(size - 1))
                while table_index[slot] >= 0:
                    if table_keys[slot] == hashes[k]:
                        out[t, table_index[slot]] = True
                        break
                    slot = (slot + 1) & (size - 1)
    return out


@serial
def _weighted_rows(member, weights):
    """Row sums of ``weights`` over the true entries of ``member`` (n, P), left to right, no BLAS."""
    n, size = member.shape
    out = np.zeros(n, dtype=np.float64)
    for t in range(n):
        total = 0.0
        for j in range(size):
            if member[t, j]:
                total += weights[j]
        out[t] = total
    return out


# Serial twins for small inputs (a parallel launch costs more than a few dozen texts' work).
_membership_serial = serial_twin(_membership, "_membership_serial")


"""Where the claim keys kernel reads each text (ctxselect/kernels/scan_bounds.py) against its byte-by-byte
twin (tests/naive/claims.py ``naive_scan_bounds``): fixed, random and edge texts, every alignment of the
texts and of the buffer's address. Called directly, so it also runs interpreted (``NUMBA_DISABLE_JIT=1``)."""

import random

import numpy as np
import pytest

from ctxselect.kernels.scan_bounds import _digits8, _scan_bounds
from ctxselect.packing import text_buffer
from ctxselect.text.claim_keys import byte_words
from tests.naive.claims import naive_scan_bounds

TEXTS = ["", "7", "a", "abc", "no digits here at all", "alpha 7 beta", "7 alpha", "alpha 7", "naïve café",
         "alpha beta March.,  5 units", "x_March 3", "jan\t\n 7", "élan 5 ab", "ab 😀 cd", "ab\u00a05 cd", "ab\u0085 5",
         "12345678901234567890", "a" * 40 + "9" + "b" * 40, "a" * 17 + "é" + "b" * 23, "Mar. 3", "mar,. 3", " , . 3"]


def _bounds(buf, offsets):
    first, stop = _scan_bounds(buf, *byte_words(buf), offsets[:-1], offsets[1:])
    return [first.tolist(), stop.tolist()]


def _at_address(data: np.ndarray, shift: int) -> np.ndarray:
    """``data`` copied to a buffer whose first byte's address is ``shift`` mod 8."""
    raw = np.zeros(len(data) + 16, dtype=np.uint8)
    at = shift + (-raw.ctypes.data) % 8
    out = raw[at:at + len(data)]
    out[:] = data
    return out


def test_digits8_on_every_byte_in_every_lane():
    rng = np.random.default_rng(3)
    for b in range(256):
        for lane in range(8):
            row = rng.choice([c for c in range(256) if not 48 <= c <= 57], size=8).astype(np.uint8)
            row[lane] = b
            found = int(_digits8(np.frombuffer(row.tobytes(), dtype="<u8")[0]))
            assert found == ((0x80 << (8 * lane)) if 48 <= b <= 57 else 0), (b, lane)


@pytest.mark.parametrize("shift", range(8))
def test_fixed_texts_at_every_address_and_shift_match_twin(shift):
    texts = [" " * k + t for k in range(10) for t in TEXTS]
    data, offsets = text_buffer(texts)
    buf = _at_address(data, shift)
    assert _bounds(buf, offsets) == naive_scan_bounds(buf.tobytes(), offsets)


def test_random_bytes_match_twin():
    rng = random.Random(7)
    alphabet = b"abcdejfmnosAJFMz_ ,.\t\n\r0123456789" + bytes([0x80, 0x85, 0xA0, 0xC2, 0xC3, 0xE2, 0xF0, 0xFF])
    for shift in range(8):
        pieces = [bytes(rng.choice(alphabet) for _ in range(rng.randint(0, 40))) for _ in range(60)]
        offsets = np.zeros(len(pieces) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in pieces], out=offsets[1:])
        buf = _at_address(np.frombuffer(b"".join(pieces) or b"\0", dtype=np.uint8), shift)
        assert _bounds(buf, offsets) == naive_scan_bounds(buf.tobytes(), offsets)


def test_edges():
    empty = np.zeros(1, dtype=np.uint8)  # no text at all, and a buffer of one byte (no whole word)
    assert _bounds(empty, np.zeros(1, dtype=np.int64)) == [[], []]
    assert _bounds(empty, np.array([0, 0, 1])) == [[0, 0], [0, 0]]
    nine = np.frombuffer(b"9", dtype=np.uint8)
    assert _bounds(nine, np.array([0, 1])) == [[0], [1]]
    data, offsets = text_buffer(["alpha beta March 3 units"])
    assert _bounds(data, offsets) == [[11], [18]]  # from "march", to after "3"

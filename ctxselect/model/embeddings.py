"""Embeddings, validated as arrays: one candidate's vector, the candidates' vectors stacked into
one matrix, or one (n, d) matrix given for all of them.

No Python step runs per component when the input is good: a list is scanned for its element types
by C code (so booleans and text are still refused) and copied into its row of the matrix by NumPy;
the checks (finite, at most :data:`MAX_EMBEDDING_ABS` in size) are two reductions over the stacked
matrix. Only when a check fails does a Python loop walk the first offending row, to name the
component in the error, as the per-number validation did before.
"""

from __future__ import annotations

from itertools import repeat
from operator import attrgetter, is_not
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ctxselect.errors import InputError

__all__ = ["MAX_EMBEDDING_ABS", "vector", "stack", "matrix", "HeldRows", "held_rows", "stack_rows", "check_rows"]

#: Embedding components beyond this size are an error: their squares would overflow the cosine.
MAX_EMBEDDING_ABS = 1e100
_IN_RANGE = f"a number in [{-MAX_EMBEDDING_ABS:g}, {MAX_EMBEDDING_ABS:g}]"
_REAL_DTYPE = "real numbers (a float or integer dtype)"
#: Element types a list or tuple may hold, decided once per type (bool is an int, and refused).
_ACCEPTED: dict[type, bool] = {float: True, int: True, bool: False}
_KNOWN_GOOD = {float, int}


def _accepts(kind: type) -> bool:
    ok = _ACCEPTED.get(kind)
    if ok is None:
        ok = _ACCEPTED[kind] = (issubclass(kind, (int, float, np.integer, np.floating))
                                and not issubclass(kind, (bool, np.bool_)))
        if ok:
            _KNOWN_GOOD.add(kind)
    return ok


def _bad_component(values: Sequence[Any], field: str) -> InputError | None:
    """The error of the first component of ``values`` that is not an accepted, finite number within
    :data:`MAX_EMBEDDING_ABS`, or None (the slow path: it runs only on a row that failed a check)."""
    for j, value in enumerate(values):
        if not _accepts(type(value)):
            return InputError(field=f"{field}[{j}]", expected=_IN_RANGE, found=value, has_found=True)
        try:
            number = float(value)
        except OverflowError:  # an integer beyond any float
            return InputError(field=f"{field}[{j}]", expected=_IN_RANGE, found=value, has_found=True)
        if not -MAX_EMBEDDING_ABS <= number <= MAX_EMBEDDING_ABS:  # NaN fails too
            return InputError(field=f"{field}[{j}]", expected=_IN_RANGE, found=number)
    return None


def _row(value: Any, field: str) -> Sequence[Any]:
    """``value`` as a row to copy into the matrix: a 1-d array of a real dtype, or a list (tuple,
    sequence) whose elements are all accepted numbers; anything else is an :class:`InputError`."""
    kind = type(value)
    if kind is not list and kind is not tuple:
        if isinstance(value, np.ndarray):
            if value.ndim != 1:
                raise InputError(field=field, expected="a 1-d array of numbers",
                                 found=f"an array of shape {value.shape}")
            if value.dtype.kind not in "fiu":
                raise InputError(field=field, expected=_REAL_DTYPE, found=f"an array of dtype {value.dtype}")
            if len(value) == 0:
                raise InputError(field=field, expected="a non-empty list of numbers", found="an empty array")
            return value
        if isinstance(value, (str, bytes, Mapping)) or not hasattr(value, "__len__"):
            raise InputError(field=field, expected="a non-empty list of numbers", found=value, has_found=True)
        value = list(value)  # another sequence (a set, an array.array ...): its items, in its order
    if not value:
        raise InputError(field=field, expected="a non-empty list of numbers", found=value, has_found=True)
    types = set(map(type, value))  # one C-level pass over the row
    if not types <= _KNOWN_GOOD and not all(_accepts(t) for t in types):
        raise _bad_component(value, field)
    return value


def _rows_out_of_range(mat: np.ndarray) -> np.ndarray:
    """Indices of the rows of ``mat`` holding a NaN, an infinity or a component beyond
    :data:`MAX_EMBEDDING_ABS` (integer dtypes hold none)."""
    if mat.dtype.kind != "f" or mat.size == 0:
        return np.empty(0, dtype=np.int64)
    if float(mat.max()) <= MAX_EMBEDDING_ABS and float(mat.min()) >= -MAX_EMBEDDING_ABS:  # NaN fails both
        return np.empty(0, dtype=np.int64)  # (two whole-matrix reductions: 0.2 against 0.65 ms by rows at 2,000 x 384)
    high = mat.max(axis=1).astype(np.float64)  # compared as float64: 1e100 is no float32
    low = mat.min(axis=1).astype(np.float64)
    ok = (high <= MAX_EMBEDDING_ABS) & (low >= -MAX_EMBEDDING_ABS)
    return np.flatnonzero(~ok)


def _readonly(mat: np.ndarray) -> np.ndarray:
    view = mat.view()
    view.flags.writeable = False
    return view


def vector(value: Any, field: str = "embedding") -> np.ndarray:
    """One embedding (a list, tuple or 1-d array of real numbers) as a read-only float64 copy.

    Parameters
    ----------
    value : list, tuple or 1-d array
    field : str
        The field to name in an error.

    Returns
    -------
    read-only float64 array (d,)

    Raises
    ------
    InputError
        Naming ``field`` (``embedding[j]`` for a bad component), as :func:`stack` does.
    """
    row = _row(value, field)
    try:
        out = np.array(row, dtype=np.float64)
    except OverflowError:
        raise _bad_component(row, field) from None
    if len(_rows_out_of_range(out[None, :])):
        raise _bad_component(out.tolist(), field)
    out.flags.writeable = False
    return out


def first_given(values: Sequence[Any]) -> int | None:
    """The index of the first value that is not None (one C-level pass, no Python step per value).

    Parameters
    ----------
    values : sequence
        Each candidate's embedding, or None.

    Returns
    -------
    int or None
        None when every value is None.
    """
    given = list(map(is_not, values, repeat(None)))
    return given.index(True) if True in given else None


def stack(
    values: Sequence[Any],
    ids: Sequence[str | None],
    field_of: Callable[[int], str] = lambda i: "embedding",
) -> np.ndarray | None:
    """The candidates' embeddings (each ``None``, a list, tuple or 1-d array) as one read-only
    (n, d) float64 matrix, or ``None`` when no candidate has one.

    Embeddings are all or none, of one dimension, real numbers (booleans and text are refused),
    finite and at most :data:`MAX_EMBEDDING_ABS` in size. Each row is copied in by one NumPy
    call; the value checks are reductions over the whole matrix.

    Parameters
    ----------
    values : sequence
        Each candidate's embedding as given, or None.
    ids : sequence of str
        The candidates' ids, to name in an error.
    field_of : callable, optional
        The field of row ``i`` to name in an error (default ``embedding``).

    Returns
    -------
    read-only float64 array (n, d), or None

    Raises
    ------
    InputError
        Naming the first offending candidate (``ids[i]``) and its field (``field_of(i)``, with
        ``[j]`` appended for a bad component).
    """
    first = first_given(values)
    if first is None:
        return None
    try:
        dim = len(_row(values[first], field_of(first)))
    except InputError as err:
        raise err.located(candidate_id=ids[first], candidate_index=first) from None
    expected = f"a {dim}-dimensional vector, as candidate {ids[first]!r} has"
    out = np.empty((len(values), dim), dtype=np.float64)
    if _stacked_arrays(values, dim, out):
        _raise_out_of_range(out, ids, field_of)
        return _readonly(out)
    for i, value in enumerate(values):
        try:
            if value is None:
                raise InputError(field=field_of(i), message="missing embedding", expected=expected)
            row = _row(value, field_of(i))
            if len(row) != dim:
                raise InputError(field=field_of(i), expected=expected, found=f"{len(row)} dimensions")
            try:
                out[i] = row
            except OverflowError:  # an integer beyond any float
                raise _bad_component(row, field_of(i)) from None
        except InputError as err:
            failed = err.located(candidate_id=ids[i], candidate_index=i)
        else:
            continue
        _raise_out_of_range(out[:i], ids, field_of)  # a bad value in an earlier row comes first
        raise failed
    _raise_out_of_range(out, ids, field_of)
    return _readonly(out)


def _stacked_arrays(values: Sequence[Any], dim: int, out: np.ndarray) -> bool:
    """Whether ``values`` are all 1-d arrays of ``dim`` real numbers, copied into ``out`` by one NumPy
    call (their types, shapes and dtypes read in C-level passes); else False, ``out`` untouched, and
    the row-by-row loop finds the first bad value. A Candidate's own embedding is such an array: at
    n = 2,000, d = 384 this took 1.3 ms, the loop 1.6 ms (3.9 ms with a range check by rows)."""
    if set(map(type, values)) != {np.ndarray} or set(map(_SHAPE, values)) != {(dim,)}:
        return False
    if not all(dtype.kind in "fiu" for dtype in set(map(_DTYPE, values))):
        return False
    np.concatenate(values, out=out.reshape(-1))  # (np.stack: 0.9 against 0.5 ms at 2,000 x 384)
    return True


_SHAPE, _DTYPE, _HELD = attrgetter("shape"), attrgetter("dtype"), attrgetter("shape", "dtype", "base")
_WRITEABLE = attrgetter("flags.writeable")


class HeldRows(tuple):
    """Validated candidates' own embeddings, one read-only float64 row each (:func:`held_rows`)."""

    __slots__ = ()


def held_rows(values: Sequence[Any]) -> HeldRows | None:
    """``values`` as they are when they are validated candidates' own embeddings (each a read-only
    1-d float64 array that owns its data, as :func:`vector` makes them, all of one length), else
    None. Their values are checked again where they are read (:func:`stack_rows`; the cosine's unit
    rows kernel, then :func:`check_rows`), as a row's owner can make it writeable, change it and make
    it read-only again.

    A query's validated :class:`~ctxselect.model.candidate.Candidate` objects then need no
    matrix of their own: the rows are normalised a block at a time (:func:`stack_rows`), and the
    (n, d) float64 matrix is made only when something asks for it. Stacking them on every call cost
    a fresh n x d x 8 bytes (61 MB at 20,000 x 384): on a VM that hands freed memory back to its
    host, 0.2-0.25 s of CPU at 20,000 (latency.py, per-candidate against one array: 635 against
    385 ms CPU p50)."""
    if not values or set(map(type, values)) != {np.ndarray}:
        return None
    try:  # one pass reads the three (at 20,000 x 384: 6.3 against 9.2 ms in three passes and a flags pass)
        kinds = set(map(_HELD, values))
    except TypeError:  # an unhashable base: a view of an array
        return None
    if len(kinds) != 1:
        return None
    (shape, dtype, base), = kinds
    if len(shape) != 1 or shape[0] == 0 or dtype != np.dtype(np.float64) or base is not None:
        return None  # a view (a base): its base may change (a dict's matrix row)
    if any(map(_WRITEABLE, values)):
        return None
    return HeldRows(values)


def stack_rows(rows: HeldRows, ids: Sequence[str], lo: int = 0, hi: int | None = None,
               out: np.ndarray | None = None, *, check: bool = True) -> np.ndarray:
    """Rows ``lo .. hi`` of :func:`held_rows` as one read-only (hi - lo, d) float64 matrix (into
    ``out``, a C-contiguous float64 array of that shape, when given), their values checked as
    :func:`stack` checks them: a NaN, an infinity or a value beyond :data:`MAX_EMBEDDING_ABS` is
    the same :class:`InputError`, naming ``ids[i]``. ``check=False``: not checked; the caller
    checks them (the cosine's unit rows kernel) and calls :func:`check_rows` on a bad one."""
    hi = len(rows) if hi is None else hi
    if out is None:
        out = np.empty((hi - lo, len(rows[0])), dtype=np.float64)
    np.concatenate(rows[lo:hi], out=out.reshape(-1))
    if check:
        check_rows(out, ids, lo)
    return _readonly(out)


def check_rows(mat: np.ndarray, ids: Sequence[str], offset: int = 0) -> None:
    """The :class:`InputError` of :func:`stack_rows` for the first row of ``mat`` (candidate
    ``offset + i``, named ``ids[offset + i]``) that holds a NaN, an infinity or a value beyond
    :data:`MAX_EMBEDDING_ABS`, if any."""
    _raise_out_of_range(mat, ids, lambda i: "embedding", offset=offset)


def _raise_out_of_range(mat: np.ndarray, ids: Sequence[str | None], field_of: Callable[[int], str],
                        offset: int = 0) -> None:
    """The InputError of the first row of ``mat`` out of range (:func:`_rows_out_of_range`), if any;
    row ``i`` of ``mat`` is candidate ``offset + i``."""
    bad = _rows_out_of_range(mat)
    if len(bad):
        i = offset + int(bad[0])
        err = _bad_component(mat[i - offset].tolist(), field_of(i))
        raise err.located(candidate_id=ids[i], candidate_index=i)


def matrix(value: Any, ids: Sequence[str]) -> np.ndarray:
    """The ``embeddings`` argument: one row per candidate (in the order of ``ids``), as a read-only
    (n, d) float64 array. A float64 array is not copied (the result is a read-only view of it:
    do not change it while the result is in use); any other real dtype is converted. A list of
    rows is checked row by row like the candidates' own embeddings.

    Parameters
    ----------
    value : array_like
        (n, d), of a float or integer dtype.
    ids : sequence of str
        The candidates' ids, in order.

    Returns
    -------
    read-only float64 array (n, d)

    Raises
    ------
    InputError
        Naming the field ``embeddings`` (``embeddings[i][j]`` and the candidate for a bad value).
    """
    n = len(ids)

    def field_of(i: int) -> str:
        return f"embeddings[{i}]"

    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise InputError(field="embeddings", expected=f"{n:,} rows, one per candidate",
                             found=f"{len(value):,} rows")
        if n == 0:
            return _readonly(np.empty((0, 0)))
        for i, row in enumerate(value):
            if row is None:
                raise InputError(candidate_id=ids[i], field=field_of(i), expected="a row of numbers",
                                 found=None, has_found=True)
        return stack(value, ids, field_of)
    if isinstance(value, (str, bytes, Mapping)) or value is None:
        raise InputError(field="embeddings", expected="an (n, d) array of numbers", found=value,
                         has_found=True)
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as err:
        raise InputError(field="embeddings", expected="an (n, d) array of numbers",
                         found=str(err)) from None
    if array.ndim != 2:
        raise InputError(field="embeddings", expected="a 2-d array, one row per candidate",
                         found=f"an array of shape {array.shape}")
    if array.dtype.kind not in "fiu":
        raise InputError(field="embeddings", expected=_REAL_DTYPE, found=f"dtype {array.dtype}")
    if array.shape[0] != n:
        raise InputError(field="embeddings", expected=f"{n:,} rows, one per candidate",
                         found=f"{array.shape[0]:,} rows")
    if array.shape[1] == 0 and n:
        raise InputError(field="embeddings", expected="at least one column", found="0 columns")
    _raise_out_of_range(array, ids, field_of)
    return _readonly(np.asarray(array, dtype=np.float64, order="C"))

"""Packing: candidates and requirements become a struct of NumPy arrays.

Everything downstream (metrics, kernels, selectors) reads these arrays; strings are interned into
integer codes here, once, so no Python object reaches a kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import chain, repeat
from operator import contains
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from ctxselect.errors import InputError
from ctxselect.model.candidate import DEFAULT_SOURCE, Candidate, coerce_columns
from ctxselect.model.embeddings import HeldRows, stack_rows
from ctxselect.model.requirements import Requirements
from ctxselect.model.times import SECONDS_PER_DAY
from ctxselect.model.tokens import TokenCounter

__all__ = ["PackedCandidates", "pack", "text_buffer"]

NO_CODE = -1
UNLIMITED = np.iinfo(np.int64).max // 4


#: A claim value's kind: values of different kinds never intern alike ("1", 1 and true are three
#: values; 1 and 1.0 are one number). Text 0, booleans 1, numbers 2, -1 for None (absent);
#: a type not listed (a subclass) by isinstance.
_KINDS: dict[type, int] = {str: 0, bool: 1, int: 2, float: 2, type(None): -1}
_MISSING = (-1, None)  # an absent claim's key


def _kind(value: Any) -> int:
    """0 for text, 1 for booleans, 2 for numbers."""
    return 0 if isinstance(value, str) else (1 if isinstance(value, bool) else 2)


def _intern(values: Sequence[Any], initial: Iterable[Any] = (), missing: Any = None,
            ) -> tuple[np.ndarray, dict[Any, int]]:
    """Codes of ``values`` numbered in first-seen order, after ``initial``'s (``missing``:
    :data:`NO_CODE`), and the table value -> code (in code order: its keys are the names).
    Equal values get one code, so the values must be of one kind (labels: all text)."""
    if not initial and values.count(missing) == len(values):  # nothing to intern (no doc ids, say)
        return np.full(len(values), NO_CODE, dtype=np.int32), {}
    order = dict.fromkeys(initial)
    order.update(dict.fromkeys(values))
    order.pop(missing, None)
    table = dict(zip(order, range(len(order))))
    table[missing] = NO_CODE
    codes = np.fromiter(map(table.__getitem__, values), dtype=np.int32, count=len(values))
    del table[missing]
    return codes, table


def _claim_codes(values: list[Any]) -> tuple[np.ndarray, tuple[Any, ...]]:
    """Claim values (None: absent) interned by kind and value: their codes, and the first-seen
    value of each code."""
    kinds = {_KINDS.get(kind) for kind in set(map(type, values))} - {-1}
    if None not in kinds and len(kinds) <= 1:  # one kind (all numbers, say): the values intern as they are
        codes, table = _intern(values)
        return codes, tuple(table)
    codes, table = _intern([_MISSING if v is None else (_kind(v), v) for v in values], missing=_MISSING)
    return codes, tuple(value for _, value in table)


#: The fields pack() reads off every candidate's ``__dict__`` (a dataclass keeps its fields
#: there), all in one C-level pass of :func:`operator.itemgetter` (with the ids and embeddings
#: that validation reads: ``coerce_columns``).
_COLUMNS = ("id", "text", "source", "relevance", "tokens", "rank", "timestamp", "valid_from", "valid_to",
            "doc_id", "version", "scope", "aspects", "fields", "extra")


@dataclass(frozen=True, eq=False)
class PackedCandidates:
    """Candidates of one query as arrays (length ``n`` unless stated), plus the query's
    requirements in array form.

    Attributes
    ----------
    ids : tuple of str
    tokens : int64 array
    relevance : float64 array
    rank : int64 array, -1 when unknown
    has_timestamp : bool array; timestamp : float64 array of epoch seconds (0 where missing)
    valid_from, valid_to : float64 arrays, -inf / +inf for an open window
    source : int32 codes into ``source_names``
    scope : int32 codes into ``scope_names`` (-1: none); admissible : bool array
    doc, version : int32 codes into ``doc_names`` / ``version_names`` (-1: none)
    aspects : bool array (n, A), columns ``aspect_names``; aspect_weights : float64 (A,), zero for
        aspects the query does not require (required aspects come first)
    field_values : int32 array (n, F), interned claim values per conflict field (-1: absent);
        field_names, field_severity (F,)
    embeddings : read-only float64 array (n, d), or None (a property: see ``embedding_data``)
    embedding_data : what ``embeddings`` is made of: that matrix, or the validated candidates' own
        read-only float64 rows (a tuple), stacked into the matrix on first use of ``embeddings``;
        the cosine normalises the rows without it (:func:`ctxselect.features.similarity.normalised_rows`)
    decay : float64 array, freshness decay per day of each chunk's source
    age_days : float64 array, age at ``now`` (0 for future timestamps and missing ones)
    valid_now : bool array, inside the validity window at ``now``
    source_min, source_max : int64 arrays per source code (0 / unlimited when not constrained)
    budget : int; now : float; requirements : Requirements; candidates : tuple of Candidate
    texts : tuple of str, each candidate's text (read with the other columns)
    """

    ids: tuple[str, ...]
    tokens: np.ndarray
    relevance: np.ndarray
    rank: np.ndarray
    has_timestamp: np.ndarray
    timestamp: np.ndarray
    valid_from: np.ndarray
    valid_to: np.ndarray
    source: np.ndarray
    source_names: tuple[str, ...]
    scope: np.ndarray
    scope_names: tuple[str, ...]
    admissible: np.ndarray
    doc: np.ndarray
    doc_names: tuple[str, ...]
    version: np.ndarray
    version_names: tuple[str, ...]
    aspects: np.ndarray
    aspect_names: tuple[str, ...]
    aspect_weights: np.ndarray
    field_values: np.ndarray
    field_names: tuple[str, ...]
    field_severity: np.ndarray
    field_value_names: tuple[tuple[Any, ...], ...]
    embedding_data: np.ndarray | tuple[np.ndarray, ...] | None
    decay: np.ndarray
    age_days: np.ndarray
    valid_now: np.ndarray
    source_min: np.ndarray
    source_max: np.ndarray
    budget: int
    now: float
    requirements: Requirements
    candidates: tuple[Candidate, ...]
    texts: tuple[str, ...]

    @property
    def embeddings(self) -> np.ndarray | None:
        """The candidates' embeddings as one read-only float64 (n, d) matrix, or None; kept rows
        (``embedding_data``) are stacked on first use."""
        data = self.embedding_data
        if isinstance(data, HeldRows):
            data = stack_rows(data, self.ids)  # checked as pack checks a matrix
            object.__setattr__(self, "embedding_data", data)  # (frozen: set once, the same values)
        return data

    @property
    def embedding_dim(self) -> int | None:
        """d, the embeddings' dimension, or None without embeddings (the rows are not stacked)."""
        data = self.embedding_data
        return None if data is None else len(data[0]) if isinstance(data, HeldRows) else data.shape[1]

    @property
    def n(self) -> int:
        """Number of candidates."""
        return len(self.ids)

    @property
    def required_aspect_count(self) -> int:
        return len(self.requirements.required_aspects)

    @cached_property
    def text_buffer(self) -> tuple[np.ndarray, np.ndarray]:
        """The candidates' texts as one lower-cased UTF-8 buffer and offsets (:func:`text_buffer`),
        built once per packed query, on first use."""
        return text_buffer(self.texts)

    def index_of(self, ids: Iterable[str]) -> np.ndarray:
        """Positions of ``ids``; an unknown id is an :class:`InputError`."""
        where = {cid: i for i, cid in enumerate(self.ids)}
        out = []
        for cid in ids:
            if cid not in where:
                raise InputError(candidate_id=cid, message="unknown candidate id",
                                 expected="an id among the query's candidates")
            out.append(where[cid])
        return np.asarray(out, dtype=np.int64)

    def mask_of(self, ids: Iterable[str]) -> np.ndarray:
        """Boolean selection mask of ``ids``."""
        mask = np.zeros(self.n, dtype=bool)
        mask[self.index_of(ids)] = True
        return mask


#: ASCII texts of more than _WHOLE_BYTES characters in all are joined, encoded and lowered this many at a time
#: (~250 KB at 500 bytes a text), each group written into the one output array: no step makes a second and
#: third copy of all the texts. Whole (join, encode, lower: three fresh 10 MB blocks at 20,000 texts) it took
#: 22-23 ms at 20,000 texts in select(), 7,100 page faults of it; by groups 10-11 ms and almost none
#: (2026-12-06).
_GROUP_TEXTS = 512
#: Up to this many characters in all, ASCII texts are done whole (by groups: 49 -> 56 us at 200 texts);
#: chosen between the sizes measured (~100 KB and ~10 MB of text), not measured itself.
_WHOLE_BYTES = 1 << 20


def text_buffer(texts: Iterable[str], *, lower: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes of all ``texts`` (lower-cased unless ``lower=False``) as one read-only uint8 array,
    and each text's byte offsets (length n + 1): the array form every per-text kernel reads (MinHash,
    query terms, claims). Lone surrogates (possible in a question or a title, never in a validated
    text) keep their three-byte form; no bytes at all give one zero byte, so a kernel always gets
    a non-empty array (the offsets still say: no bytes).

    When every text is ASCII, the texts (groups of them, when they are more than ``_WHOLE_BYTES``
    characters in all) are joined, encoded and lowered in one call each (ASCII lowers byte by byte);
    else each text on its own (Greek capital sigma lowers by its neighbours: a final sigma stays final
    in its own text)."""
    texts = texts if isinstance(texts, (list, tuple)) else list(texts)
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)  # of characters: of bytes too when all are ASCII
    np.array(list(map(len, texts)), dtype=np.int64).cumsum(out=offsets[1:])  # fromiter: 2.5x as long
    # read-only either way (one compiled version of each kernel: a writable zero byte made text-less calls
    # load four more inside their time limit)
    if offsets[-1] <= _WHOLE_BYTES:
        joined = "".join(texts)
        if joined.isascii():
            data = joined.encode("ascii")  # bytes.lower: 18 vs 32 ms for str.lower at 24 MB
            return np.frombuffer((data.lower() if lower else data) or b"\0", dtype=np.uint8), offsets
    elif all(map(str.isascii, texts)):
        # more than _WHOLE_BYTES >= 0 bytes: never empty; np.empty, as zeros' fresh pages (calloc) fault each
        buf = np.empty(int(offsets[-1]), dtype=np.uint8)
        out = memoryview(buf)
        for lo in range(0, len(texts), _GROUP_TEXTS):
            hi = min(lo + _GROUP_TEXTS, len(texts))
            data = "".join(texts[lo:hi]).encode("ascii")
            out[offsets[lo]:offsets[hi]] = data.lower() if lower else data
        out.release()
        buf.flags.writeable = False
        return buf, offsets
    parts = [(t.lower() if lower else t).encode("utf-8", "surrogatepass") for t in texts]
    np.cumsum(np.array(list(map(len, parts)), dtype=np.int64), out=offsets[1:])
    return np.frombuffer(b"".join(parts) or b"\0", dtype=np.uint8), offsets


def _check_sources(ids: Sequence[str], sources: Sequence[str], reqs: Requirements) -> None:
    """A source rule needs every candidate's source: refuse one that names none (``DEFAULT_SOURCE``)."""
    rules = [name for name, value in (("required_sources", reqs.required_sources),
                                      ("max_per_source", reqs.max_per_source not in (None, {})),
                                      ("source_decay", reqs.source_decay),
                                      ("source_precedence", reqs.source_precedence)) if value]
    if rules and DEFAULT_SOURCE in sources:
        raise InputError(candidate_id=ids[list(sources).index(DEFAULT_SOURCE)], field="source",
                         message="missing required field",
                         expected=f"a source name, since the requirements set {rules[0]}")


def _times(values: Sequence[float | None], missing: float) -> np.ndarray:
    """Epoch seconds as float64, ``missing`` where None (a validated time is never NaN)."""
    if values and values[0] is None and values.count(None) == len(values):  # none given: 1.2 ms at 20,000 Nones
        return np.full(len(values), missing, dtype=np.float64)
    out = np.array(values, dtype=np.float64)  # None reads as NaN
    out[np.isnan(out)] = missing
    return out


def pack(
    candidates: Iterable[Candidate | Mapping[str, Any]],
    requirements: Requirements | Mapping[str, Any],
    *,
    embeddings: Any = None,
    token_counter: TokenCounter | None = None,
    default_relevance: float | None = None,
) -> PackedCandidates:
    """Validate candidates and requirements and pack them into NumPy arrays.

    Parameters
    ----------
    candidates : iterable of Candidate or dict
        The query's candidates (dicts use the dump's field names).
    requirements : Requirements or dict
        The query's requirements (a dump's ``requirements`` object or article 000's config).
    embeddings : array_like, optional
        One (n, d) array of real numbers (float32, float64, integers), row ``i`` for candidate
        ``i``: the cheap way to give embeddings (no per-candidate lists). Finite, at most ``1e100``
        in size; the candidates must then carry none. A float64 array is not copied (the result
        holds a read-only view of it: leave it unchanged while the result is in use).
    token_counter : callable, str or tokenizer, optional
        Counts tokens for candidates without ``tokens`` (default: :func:`ctxselect.get_token_counter`):
        a callable, ``"tiktoken:<encoding>"``, ``"bpe-openai:<encoding>"`` or a tokenizer object
        (:func:`ctxselect.model.tokens.resolve_token_counter`); one with ``count_batch`` counts
        every text of the call in one batch.
    default_relevance : float, optional
        Relevance for candidates that carry none; by default relevance is required.

    Returns
    -------
    PackedCandidates

    Raises
    ------
    InputError
        Naming the candidate and field of the first problem found.
    """
    reqs = Requirements.from_dict(requirements)
    cands, embedding_matrix, columns = coerce_columns(candidates, _COLUMNS, embeddings=embeddings,
                                                      token_counter=token_counter, default_relevance=default_relevance,
                                                      keep_rows=True)
    n = len(cands)
    (ids, texts, source_of, relevance, tokens, rank, timestamps, valid_from, valid_to, doc_of, version_of, scope_of,
     aspects_of, fields_of, extra_of) = columns
    _check_sources(ids, source_of, reqs)
    now = reqs.reference_time()

    # labels are text (validated), so plain values intern: no kind needed
    source, sources = _intern(source_of, reqs.required_sources)
    scope, scopes = _intern(scope_of, reqs.allowed_scopes or ())
    n_allowed = len(dict.fromkeys(reqs.allowed_scopes or ()))
    doc, docs = _intern(doc_of)
    version, versions = _intern(version_of)
    flat = list(chain.from_iterable(aspects_of))
    aspect_codes, aspects = _intern(flat, reqs.required_aspects)
    aspect_matrix = np.zeros((n, len(aspects)), dtype=bool)
    aspect_matrix[np.repeat(np.arange(n), np.fromiter(map(len, aspects_of), dtype=np.int64, count=n)),
                  aspect_codes] = True
    aspect_weights = np.zeros(len(aspects), dtype=np.float64)
    aspect_weights[: len(reqs.required_aspects)] = list(reqs.required_aspects.values())

    field_names = tuple(reqs.conflict_fields)
    field_values = np.full((n, len(field_names)), NO_CODE, dtype=np.int32)
    value_names = []
    for f, name in enumerate(field_names):
        if any(map(contains, extra_of, repeat(name))):  # a top-level key (article 000's shape): checked
            values = [cand.claim(name) for cand in cands]
        else:
            values = [claims.get(name) for claims in fields_of]
        field_values[:, f], names = _claim_codes(values)
        value_names.append(names)

    # admissible: a scope among the interned allowed ones — codes 0 .. (distinct allowed scopes - 1),
    # counted from the interner, never from the list's length (a repeated scope once admitted more)
    admissible = np.ones(n, dtype=bool) if reqs.allowed_scopes is None else (scope >= 0) & (scope < n_allowed)

    timestamp = _times(timestamps, np.nan)
    has_ts = ~np.isnan(timestamp)
    timestamp[~has_ts] = 0.0
    timestamp += 0.0  # -0.0 reads as 0.0 (as `timestamp or 0.0` did)
    valid_from = _times(valid_from, -np.inf)
    valid_to = _times(valid_to, np.inf)
    age_days = np.where(has_ts, np.maximum((now - timestamp) / SECONDS_PER_DAY, 0.0), 0.0)

    source_names = tuple(sources)
    n_sources = len(source_names)
    source_min = np.zeros(n_sources, dtype=np.int64)
    source_min[: len(reqs.required_sources)] = list(reqs.required_sources.values())
    source_max = np.full(n_sources, UNLIMITED, dtype=np.int64)
    if isinstance(reqs.max_per_source, int):
        source_max[:] = reqs.max_per_source
    elif reqs.max_per_source:
        for name, cap in reqs.max_per_source.items():
            code = sources.get(name)
            if code is not None:  # a cap on a source with no candidate constrains nothing
                source_max[code] = cap
    decay_of_source = np.array([reqs.decay_for(name) for name in source_names], dtype=np.float64)

    return PackedCandidates(
        ids=ids,
        tokens=np.array(tokens, dtype=np.int64),
        relevance=np.array(relevance, dtype=np.float64),
        rank=np.array([NO_CODE if r is None else r for r in rank] if None in rank else rank, dtype=np.int64),
        has_timestamp=has_ts,
        timestamp=timestamp,
        valid_from=valid_from,
        valid_to=valid_to,
        source=source,
        source_names=source_names,
        scope=scope,
        scope_names=tuple(scopes),
        admissible=admissible,
        doc=doc,
        doc_names=tuple(docs),
        version=version,
        version_names=tuple(versions),
        aspects=aspect_matrix,
        aspect_names=tuple(aspects),
        aspect_weights=aspect_weights,
        field_values=field_values,
        field_names=field_names,
        field_severity=np.array(list(reqs.conflict_fields.values()), dtype=np.float64),
        field_value_names=tuple(value_names),
        embedding_data=embedding_matrix,
        decay=decay_of_source[source],
        age_days=age_days,
        valid_now=(valid_from <= now) & (now <= valid_to),
        source_min=source_min,
        source_max=source_max,
        budget=reqs.token_budget,
        now=now,
        requirements=reqs,
        candidates=tuple(cands),
        texts=texts,
    )

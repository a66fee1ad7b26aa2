"""Packing: candidates and requirements become a struct of NumPy arrays.

Everything downstream (metrics, kernels, selectors) reads these arrays; strings are interned into
integer codes here, once, so no Python object reaches a kernel.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable, Mapping

import numpy as np

from ctxselect.errors import InputError
from ctxselect.model.candidate import DEFAULT_SOURCE, Candidate, coerce_with_embeddings
from ctxselect.model.requirements import Requirements
from ctxselect.model.times import SECONDS_PER_DAY
from ctxselect.model.tokens import TokenCounter

__all__ = ["PackedCandidates", "pack", "text_buffer"]

NO_CODE = -1
UNLIMITED = np.iinfo(np.int64).max // 4


def _kind(value: Any) -> int:
    """0 for text, 1 for booleans, 2 for numbers: values of different kinds never intern alike."""
    return 0 if isinstance(value, str) else (1 if isinstance(value, bool) else 2)


class _Interner:
    """Assigns consecutive integer codes to values in first-seen order."""

    def __init__(self, initial: Iterable[Any] = ()) -> None:
        self.codes: dict[Any, int] = {}
        self.values: list[Any] = []
        for value in initial:
            self.code(value)

    def code(self, value: Any) -> int:
        if value is None:
            return NO_CODE
        key = (_kind(value), value)  # keep "1", 1 and true apart (1 and 1.0 are one number)
        found = self.codes.get(key)
        if found is None:
            found = self.codes[key] = len(self.values)
            self.values.append(value)
        return found


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
    embeddings : read-only float64 array (n, d), or None
    decay : float64 array, freshness decay per day of each chunk's source
    age_days : float64 array, age at ``now`` (0 for future timestamps and missing ones)
    valid_now : bool array, inside the validity window at ``now``
    source_min, source_max : int64 arrays per source code (0 / unlimited when not constrained)
    budget : int; now : float; requirements : Requirements; candidates : tuple of Candidate
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
    embeddings: np.ndarray | None
    decay: np.ndarray
    age_days: np.ndarray
    valid_now: np.ndarray
    source_min: np.ndarray
    source_max: np.ndarray
    budget: int
    now: float
    requirements: Requirements
    candidates: tuple[Candidate, ...]

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
        return text_buffer(c.text for c in self.candidates)

    def index_of(self, ids: Iterable[str]) -> np.ndarray:
        """Positions of ``ids``; an unknown id is an :class:`InputError`."""
        where = {cid: i for i, cid in enumerate(self.ids)}
        out = []
        for cid in ids:
            if cid not in where:
                raise InputError(candidate_id=str(cid), message="unknown candidate id",
                                 expected="an id among the query's candidates")
            out.append(where[cid])
        return np.asarray(out, dtype=np.int64)

    def mask_of(self, ids: Iterable[str]) -> np.ndarray:
        """Boolean selection mask of ``ids``."""
        mask = np.zeros(self.n, dtype=bool)
        mask[self.index_of(ids)] = True
        return mask


def text_buffer(texts: Iterable[str], *, lower: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes of all ``texts`` (lower-cased unless ``lower=False``) as one uint8 array, and
    each text's byte offsets (length n + 1): the array form every per-text kernel reads (MinHash,
    query terms, claims). Lone surrogates (possible in a question or a title, never in a validated
    text) keep their three-byte form; no bytes at all give one zero byte, so a kernel always gets
    a non-empty array (the offsets still say: no bytes)."""
    encoded = [(t.lower() if lower else t).encode("utf-8", "surrogatepass") for t in texts]
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([len(e) for e in encoded], out=offsets[1:])
    buf = np.frombuffer(b"".join(encoded), dtype=np.uint8)
    return (buf if len(buf) else np.zeros(1, dtype=np.uint8)), offsets


def _check_sources(cands: list[Candidate], reqs: Requirements) -> None:
    """A source rule needs every candidate's source: refuse one that names none (``DEFAULT_SOURCE``)."""
    rules = [name for name, value in (("required_sources", reqs.required_sources),
                                      ("max_per_source", reqs.max_per_source not in (None, {})),
                                      ("source_decay", reqs.source_decay),
                                      ("source_precedence", reqs.source_precedence)) if value]
    if rules:
        for cand in cands:
            if cand.source == DEFAULT_SOURCE:
                raise InputError(candidate_id=cand.id, field="source", message="missing required field",
                                 expected=f"a source name, since the requirements set {rules[0]}")

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
    cands, embedding_matrix = coerce_with_embeddings(candidates, embeddings=embeddings, token_counter=token_counter,
                                                     default_relevance=default_relevance)
    _check_sources(cands, reqs)
    n = len(cands)
    now = reqs.reference_time()

    sources = _Interner(reqs.required_sources)
    scopes = _Interner(reqs.allowed_scopes or ())
    n_allowed = len(scopes.values)
    docs, versions = _Interner(), _Interner()
    aspects = _Interner(reqs.required_aspects)
    source = np.array([sources.code(c.source) for c in cands], dtype=np.int32)
    scope = np.array([scopes.code(c.scope) for c in cands], dtype=np.int32)
    doc = np.array([docs.code(c.doc_id) for c in cands], dtype=np.int32)
    version = np.array([versions.code(c.version) for c in cands], dtype=np.int32)
    aspect_codes = [[aspects.code(a) for a in c.aspects] for c in cands]

    aspect_matrix = np.zeros((n, len(aspects.values)), dtype=bool)
    for i, codes in enumerate(aspect_codes):
        aspect_matrix[i, codes] = True
    aspect_weights = np.zeros(len(aspects.values), dtype=np.float64)
    aspect_weights[: len(reqs.required_aspects)] = list(reqs.required_aspects.values())

    field_names = tuple(reqs.conflict_fields)
    field_values = np.full((n, len(field_names)), NO_CODE, dtype=np.int32)
    value_names = []
    for f, name in enumerate(field_names):
        interner = _Interner()
        for i, c in enumerate(cands):
            field_values[i, f] = interner.code(c.claim(name))
        value_names.append(tuple(interner.values))

    # admissible: a scope among the interned allowed ones — codes 0 .. (distinct allowed scopes - 1),
    # counted from the interner, never from the list's length (a repeated scope once admitted more)
    admissible = np.ones(n, dtype=bool) if reqs.allowed_scopes is None else (scope >= 0) & (scope < n_allowed)

    has_ts = np.array([c.timestamp is not None for c in cands], dtype=bool)
    timestamp = np.array([c.timestamp or 0.0 for c in cands], dtype=np.float64)
    valid_from = np.array([-np.inf if c.valid_from is None else c.valid_from for c in cands], dtype=np.float64)
    valid_to = np.array([np.inf if c.valid_to is None else c.valid_to for c in cands], dtype=np.float64)
    age_days = np.where(has_ts, np.maximum((now - timestamp) / SECONDS_PER_DAY, 0.0), 0.0)

    n_sources = len(sources.values)
    source_min = np.zeros(n_sources, dtype=np.int64)
    source_min[: len(reqs.required_sources)] = list(reqs.required_sources.values())
    source_max = np.full(n_sources, UNLIMITED, dtype=np.int64)
    if isinstance(reqs.max_per_source, int):
        source_max[:] = reqs.max_per_source
    elif reqs.max_per_source:
        for name, cap in reqs.max_per_source.items():
            code = sources.codes.get((_kind(name), name))
            if code is not None:  # a cap on a source with no candidate constrains nothing
                source_max[code] = cap

    return PackedCandidates(
        ids=tuple(c.id for c in cands),
        tokens=np.array([c.tokens for c in cands], dtype=np.int64),
        relevance=np.array([c.relevance for c in cands], dtype=np.float64),
        rank=np.array([NO_CODE if c.rank is None else c.rank for c in cands], dtype=np.int64),
        has_timestamp=has_ts,
        timestamp=timestamp,
        valid_from=valid_from,
        valid_to=valid_to,
        source=source,
        source_names=tuple(sources.values),
        scope=scope,
        scope_names=tuple(scopes.values),
        admissible=admissible,
        doc=doc,
        doc_names=tuple(docs.values),
        version=version,
        version_names=tuple(versions.values),
        aspects=aspect_matrix,
        aspect_names=tuple(aspects.values),
        aspect_weights=aspect_weights,
        field_values=field_values,
        field_names=field_names,
        field_severity=np.array(list(reqs.conflict_fields.values()), dtype=np.float64),
        field_value_names=tuple(value_names),
        embeddings=embedding_matrix,
        decay=np.array([reqs.decay_for(c.source) for c in cands], dtype=np.float64),
        age_days=age_days,
        valid_now=(valid_from <= now) & (now <= valid_to),
        source_min=source_min,
        source_max=source_max,
        budget=reqs.token_budget,
        now=now,
        requirements=reqs,
        candidates=tuple(cands),
    )

"""``signals``: freshness, sparse redundancy and contradiction pairs, near-duplicate clusters.

The public function validates and prepares arrays from a :class:`PackedCandidates`, then calls
the jitted kernels of :mod:`ctxselect.kernels`; the kernels never see a Python object.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable, Mapping

import numpy as np
from rapidfuzz import fuzz, process

from ctxselect.errors import InputError
from ctxselect.features.contradictions.detect import detect_contradictions
from ctxselect.features.pairs import PairList, Signals
from ctxselect.features.providers import best_providers
from ctxselect.features.query_terms import QueryProbes, query_probes, scan_words
from ctxselect.features.similarity import (PAIR_FLOOR, PAIRS_PER_ROW, _priority_array, cosine_may_cut,
                                           cosine_pairs_until, minhash_pairs, text_signatures)
from ctxselect.kernels.pairs import _components, _freshness
from ctxselect.model import validation as checks
from ctxselect.packing import PackedCandidates

__all__ = ["signals", "chunk_freshness", "signal_options_of", "CONFIRM_CHARS"]

#: A near-duplicate is confirmed on this many leading characters of each text: the edit distance
#: costs O(length² / 64) — 3 s for two 400 KB texts, about 5 ms at this length.
CONFIRM_CHARS = 20_000


def chunk_freshness(packed: PackedCandidates, *, zero_outside_window: bool = False) -> np.ndarray:
    """Per-chunk freshness e^(−λ_s·age) (kernel); ``missing_timestamp`` decides undated chunks;
    with ``zero_outside_window`` a chunk outside its validity window at ``now`` gets 0."""
    missing = 1.0 if packed.requirements.missing_timestamp == "fresh" else 0.0
    return _freshness(packed.decay, packed.age_days, packed.has_timestamp, packed.valid_now,
                      missing, zero_outside_window)


#: A cut cosine compares first this many of the most promising providers of each required aspect
#: and each source with a minimum (plus its minimum), so the gate and the source minimums stay in reach.
PROVIDERS_FIRST = 8


def _priority(packed: PackedCandidates, freshness: np.ndarray) -> np.ndarray:
    """The order in which a cut cosine compares chunks (highest first): among the admissible chunks
    within the budget, the :data:`PROVIDERS_FIRST` best providers of each required aspect and
    required source, then the others, each by relevance x freshness (the leading term of their
    value); -1 for the rest."""
    fits = packed.admissible & (packed.tokens <= packed.budget)
    key = np.where(fits, packed.relevance * freshness, -1.0)
    first = best_providers(packed, packed.aspects[:, :packed.required_aspect_count], key, fits, PROVIDERS_FIRST)
    return np.where(first, key + 2.0, key)  # relevance x freshness lies in [0, 1]


def _reached(got, n: int) -> tuple[np.ndarray, int]:
    """A reach's ``(priority, count)``, checked: n finite numbers and a count of at least 1."""
    if not isinstance(got, tuple) or len(got) != 2:
        raise InputError(field="reach", expected="a (priority, count) pair from the reach",
                         found=type(got).__name__)
    return _priority_array(got[0], n, "reach.priority"), checks.integer(got[1], "reach.count", low=1)


# similarity kind -> (redundancy threshold, duplicate threshold)
DEFAULT_THRESHOLDS = {"cosine": (0.80, 0.95), "minhash": (0.50, 0.80)}
SIMILARITY_CHOICES = ("auto", "cosine", "minhash", "none")


def signals(
    packed: PackedCandidates,
    query: str | None = None,
    *,
    similarity: str = "auto",
    redundancy_threshold: float | None = None,
    duplicate_threshold: float | None = None,
    confirm_ratio: float = 85.0,
    shingle_size: int = 3,
    signature_bins: int = 128,
    drift_severity: float = 0.5,
    drift_threshold: float = 0.6,
    claims: bool = True,
    claim_severity: float = 1.0,
    zero_outside_window: bool = False,
    block_size: int = 512,
    deadline: float | None = None,
    reach: Callable[[np.ndarray, QueryProbes | None], tuple[np.ndarray, int]] | None = None,
) -> Signals:
    """Compute the pairwise signals of one query's candidates.

    Parameters
    ----------
    packed : PackedCandidates
        From :func:`ctxselect.pack`.
    query : str, optional
        The question. Its terms and the most relevant candidate's are looked for in each text in
        the same pass over the words as the MinHash signatures (``Signals.query_probes``, which
        :func:`ctxselect.selection.problem.build_problem` reads instead of scanning again).
    similarity : {"auto", "cosine", "minhash", "none"}
        ``auto`` uses the cosine of embeddings when the candidates have them, else MinHash of word
        shingles when they have text, else none.
    redundancy_threshold, duplicate_threshold : float, optional
        Pairs at or above the first are redundant; at or above the second, near-duplicates.
        Defaults: cosine 0.80 / 0.95, MinHash (estimated Jaccard) 0.50 / 0.80.
    confirm_ratio : float
        A MinHash near-duplicate is confirmed when rapidfuzz's ``fuzz.ratio`` of the two texts
        (their first :data:`CONFIRM_CHARS` characters) reaches this (0–100).
    shingle_size : int
        Words per shingle (texts with fewer words are one shingle).
    signature_bins : int
        MinHash signature length.
    drift_severity : float
        Severity of a version-drift contradiction (near-duplicates whose numbers differ).
    drift_threshold : float
        Text similarity (estimated Jaccard of word 3-shingles) from which two chunks whose numbers
        differ count as drift; lower than the duplicate threshold because one edited number in a
        short chunk changes three shingles (a 25-word chunk falls to ~0.78).
    claims : bool
        Detect free-text claims that disagree (numbers and dates about the same thing), among
        pairs whose claims share a unit and context words (:mod:`ctxselect.text.claims`); above
        5,000 candidates, only among chunks that are in a redundancy pair.
    claim_severity : float
        Severity of a claim contradiction, in [0, 1] (1.0: never both selected).
    zero_outside_window : bool
        Freshness 0 for chunks outside their validity window at ``now``.
    block_size : int
        Rows per similarity tile (a tile holds at most block_size x
        :data:`~ctxselect.features.similarity.TILE_COLUMNS` similarities).
    deadline : float, optional
        A ``time.perf_counter()`` instant by which the cosine tiles should be done
        (:func:`~ctxselect.features.similarity.cosine_pairs_until`): when all of them would not
        fit, the rest are compared most promising first (:func:`_priority`: admissible chunks within
        the budget, the best providers of required aspects and sources first, by relevance x
        freshness; then the others) while a tile fits, and ``Signals.compared`` holds the chunks
        compared with every other. :func:`ctxselect.select` sets it from its ``time_limit``;
        MinHash is not cut.
    reach : callable, optional
        ``reach(freshness, query_probes) -> (priority, count)``: the cosine compares only the
        ``count`` chunks of highest ``priority`` (one finite number per chunk) with every other
        chunk, and the order it takes under a ``deadline``
        (:func:`~ctxselect.features.similarity.cosine_pairs_until`'s ``most``); ``Signals.reach``
        holds the count. :func:`ctxselect.select` passes the optimizer's (the chunks its core may
        hold: :func:`ctxselect.selection.solvers.core.reach`). A cosine of at most
        :data:`~ctxselect.features.similarity.UNCUT_WORK` multiply-adds compares every pair, and
        neither the reach nor the deadline's priority is then computed.

    Returns
    -------
    Signals
    """
    if not isinstance(packed, PackedCandidates):
        raise InputError(field="packed", expected="PackedCandidates from ctxselect.pack", found=type(packed).__name__)
    if similarity not in SIMILARITY_CHOICES:
        raise InputError(field="similarity", expected="one of " + ", ".join(SIMILARITY_CHOICES),
                         found=similarity)
    for name, value in (("redundancy_threshold", redundancy_threshold),
                        ("duplicate_threshold", duplicate_threshold)):
        if value is not None:
            checks.number(value, name, low=0.0, high=1.0, low_open=True)
    checks.integer(shingle_size, "shingle_size", low=1)
    checks.integer(signature_bins, "signature_bins", low=8)
    checks.integer(block_size, "block_size", low=1)
    checks.number(drift_severity, "drift_severity", low=0.0, high=1.0)
    checks.number(drift_threshold, "drift_threshold", low=0.0, high=1.0, low_open=True)
    claim_severity = checks.number(claim_severity, "claim_severity", low=0.0, high=1.0)
    confirm_ratio = checks.number(confirm_ratio, "confirm_ratio", low=0.0, high=100.0)
    checks.boolean(claims, "claims")
    checks.boolean(zero_outside_window, "zero_outside_window")
    if deadline is not None:
        checks.number(deadline, "deadline")
    if reach is not None and not callable(reach):
        raise InputError(field="reach", expected="a callable (freshness, query_probes) -> (priority, count)",
                         found=type(reach).__name__)

    n = packed.n
    texts = list(packed.texts)
    probes = query_probes(packed, checks.optional_text(query, "query"))
    if similarity == "auto":
        similarity = ("cosine" if packed.embedding_data is not None
                      else "minhash" if any(t.strip() for t in texts) else "none")
    if similarity == "cosine" and packed.embedding_data is None:
        raise InputError(field="similarity", expected="embeddings on the candidates for cosine",
                         found="candidates without embeddings")

    if probes is not None and (similarity != "minhash" or n < 2):  # no signatures to make: the terms alone
        probes = dataclasses.replace(probes, hits=scan_words(packed.text_buffer, texts, probes.probes)[1])
    freshness = chunk_freshness(packed, zero_outside_window=zero_outside_window)
    compared = most = None  # every chunk compared with every other
    cosine: dict = {}  # whether the deadline stopped the cosine
    empty = np.empty(0, np.int64)
    dup_t = None  # the near-duplicate threshold, when pairs are computed
    if similarity == "none" or n < 2:
        ri, rj, rw, dup = empty, empty.copy(), np.empty(0), np.zeros(0, bool)
        near_i, near_j = empty, empty
    else:
        red_t, dup_t = DEFAULT_THRESHOLDS[similarity]
        red_t = red_t if redundancy_threshold is None else redundancy_threshold
        dup_t = dup_t if duplicate_threshold is None else duplicate_threshold
        low = min(red_t, dup_t)
        if similarity == "cosine":
            priority = None  # the order a cut takes: the caller's reach, else relevance x freshness under a deadline
            if cosine_may_cut(n, packed.embedding_dim):  # else no order is ever read
                if reach is not None:
                    priority, most = _reached(reach(freshness, probes), n)
                elif deadline is not None:
                    priority = _priority(packed, freshness)
            ri, rj, rw, compared = cosine_pairs_until(packed.embedding_data, low, deadline=deadline, priority=priority,
                                                      chain=dup_t, block=block_size, ids=packed.ids, most=most,
                                                      info=cosine, max_pairs=max(PAIR_FLOOR, PAIRS_PER_ROW * n))
            near = rw >= dup_t
            dup = near.copy()
        else:
            if probes is None:
                sig, _words = text_signatures(texts, shingle_size=shingle_size, bins=signature_bins,
                                              buffer=packed.text_buffer, kept=True)  # (sig stays in the call)
            else:  # the question's terms found in the same pass over the words
                sig, hits = scan_words(packed.text_buffer, texts, probes.probes, shingle_size=shingle_size,
                                       bins=signature_bins, kept=True)
                probes = dataclasses.replace(probes, hits=hits)
            ri, rj, rw = minhash_pairs(sig, low)
            near = rw >= dup_t
            dup = near.copy()
            if near.any():
                a = [texts[k][:CONFIRM_CHARS] for k in ri[near]]
                b = [texts[k][:CONFIRM_CHARS] for k in rj[near]]
                ratio = process.cpdist(a, b, scorer=fuzz.ratio, workers=1)
                dup[near] = np.asarray(ratio) >= confirm_ratio
        drifting = rw >= min(dup_t, drift_threshold) if similarity == "minhash" else near
        near_i, near_j = ri[drifting], rj[drifting]
        keep = rw >= red_t
        ri, rj, rw, dup = ri[keep], rj[keep], rw[keep], dup[keep]

    capped: list[str] = []
    contradictions, claim_conflicts, claim_agreements, claim_readable = detect_contradictions(
        packed, texts, near_i, near_j, ri, rj, drift_severity=drift_severity, claims=claims,
        claim_severity=claim_severity, capped=capped)

    clusters = _components(n, ri[dup], rj[dup])
    return Signals(
        freshness=freshness,
        redundancy=PairList(ri, rj, rw),
        duplicate=dup,
        contradictions=contradictions,
        clusters=clusters,
        similarity=similarity,
        claim_conflicts=claim_conflicts,
        claim_agreements=claim_agreements,
        query_probes=probes,
        claim_readable=claim_readable,
        compared=compared,
        reach=None if compared is None else most,
        cut_by_time=compared is not None and cosine.get("timed_out", False),
        cut_by_pairs=compared is not None and cosine.get("pair_cut", False),
        capped=tuple(capped),
        duplicate_threshold=None if dup_t is None else float(dup_t),
    )


#: The keyword options of :func:`signals` a caller passes through (``select(signal_options=...)``),
#: read once from its signature.
SIGNAL_OPTIONS = tuple(name for name in inspect.signature(signals).parameters
                       if name not in ("packed", "query", "deadline", "reach"))  # select()'s own arguments


def signal_options_of(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """``select()``'s ``signal_options`` as keyword arguments of :func:`signals`; a key it does not
    take is an :class:`InputError` listing the valid ones (the values are checked by :func:`signals`)."""
    if options is None:
        return {}
    checks.mapping(options, "signal_options", "an object of signals() options")
    for key in options:
        if key not in SIGNAL_OPTIONS:
            raise InputError(field=f"signal_options.{key}", message="unknown signals option",
                             expected="one of " + ", ".join(SIGNAL_OPTIONS))
    return dict(options)

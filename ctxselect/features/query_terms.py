"""Query-aware signals: what a candidate contributes to answering *this* question.

None of these reads labels; each uses only the question's text and the candidates:

- **query terms**: the question's content words found among the candidates, weighted by IDF over
  the candidates; covering them is a coverage term of the objective (several chunks that each
  cover a different part of the question beat several that repeat the same part);
- **expansion** (pseudo-relevance feedback): the most relevant candidate's discriminative words
  that the question does not contain — the bridge entities of multi-hop questions — and how much of
  that vocabulary each other candidate shares;
- **title links**: a candidate whose title is named in the question or in the most relevant
  candidate;
- **time match**: when the question names years, whether a candidate mentions a year inside the
  asked span (1), near it (decaying with the distance), or none (0);
- **source match**: the candidate's source is named in the question.

The words are those of :func:`ctxselect.text.words.content_terms` and the years those of
:func:`~ctxselect.text.words.years_in`, but the candidates' texts are read by the jitted kernels of
:mod:`ctxselect.kernels.words` and :mod:`ctxselect.kernels.years` (terms as 64-bit hashes; see
:mod:`ctxselect.kernels.terms` for the rare collisions): the most relevant candidates' terms are
listed (:func:`query_probes`), then one pass finds which of those and of the question's terms each
text holds (none of the other terms is listed): the same pass as the MinHash signatures' when
:func:`ctxselect.signals` is given the question (:func:`scan_words`). The rest is NumPy over that
matrix. Python reads only the question, each candidate's ``extra["title"]`` when any candidate
has extra fields (titles live in per-candidate dicts; when any is set they form a second, small
buffer), the source names once per distinct source, and the rare texts with a capital sigma Σ
(the one letter whose lower case depends on its neighbours), whose terms come from
``content_terms`` itself.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from operator import attrgetter

import numpy as np

from ctxselect._config import SERIAL_BYTES
from ctxselect.features.similarity import signature_rows
from ctxselect.kernels.terms import (
    _key_table,
    _membership,
    _membership_serial,
    _probe_table,
    _stop_bits,
    _weighted_rows,
)
from ctxselect.kernels.words import _hash_each, _scan_words, _scan_words_serial, _text_terms, _text_terms_serial
from ctxselect.kernels.years import _time_match, _time_match_serial
from ctxselect.packing import PackedCandidates, text_buffer
from ctxselect.text.words import STOPWORDS, content_terms, years_in

__all__ = ["QueryFeatures", "QueryProbes", "query_features", "query_probes", "scan_words"]

_CAPITAL_SIGMA = "\u03a3"


@dataclass(frozen=True, eq=False)
class QueryFeatures:
    """Per-candidate query signals (arrays of length n, values in [0, 1])."""

    terms: tuple[str, ...]
    term_weight: np.ndarray      # (Q,), sums to 1
    covers: np.ndarray           # bool (n, Q)
    expansion: np.ndarray
    title_link: np.ndarray
    time_match: np.ndarray
    source_match: np.ndarray

    @classmethod
    def empty(cls, n: int) -> QueryFeatures:
        zeros = np.zeros(n)
        return cls((), np.zeros(0), np.zeros((n, 0), dtype=bool), zeros, zeros.copy(), zeros.copy(), zeros.copy())


def _normalised(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "", text.lower())


@lru_cache(maxsize=1)
def _stopword_table() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """The terms kernel's stopword arguments: a bitmap and a table of their hashes (keys and
    positions), their bytes and offsets, and the longest stopword in bytes."""
    buf, offsets = text_buffer(sorted(STOPWORDS), lower=False)
    hashes = _hash_each(buf, offsets)
    if len(np.unique(hashes)) != len(hashes):  # the kernel compares the bytes of one stopword per hash
        raise RuntimeError("two stopwords share a 64-bit hash")
    return _stop_bits(hashes), *_key_table(hashes, 4), buf, offsets, int(np.diff(offsets).max(initial=0))


@lru_cache(maxsize=1)
def _digit_values() -> np.ndarray:
    """int8 per code point: its decimal value where ``re``'s ``\\d`` matches it (category Nd),
    else -1 (built once per process, from ``re`` itself: about 15 ms)."""
    points = np.arange(0x110000, dtype=np.uint32)
    points = points[(points < 0xD800) | (points > 0xDFFF)]
    digits = re.sub(r"\D+", "", points.astype("<u4").tobytes().decode("utf-32-le"))
    table = np.full(0x110000, -1, dtype=np.int8)
    table[[ord(d) for d in digits]] = [int(d) for d in digits]
    return table


def _replace_rows(indptr: np.ndarray, hashes: np.ndarray, rows: list[int], terms: list[list[str]]):
    """The CSR (indptr, hashes) with the rows ``rows`` (ascending) replaced by the hashes of the
    term strings ``terms`` (one list per row, hashed in one kernel call)."""
    n = len(indptr) - 1
    new = _hash_each(*text_buffer([t for row in terms for t in row], lower=False))
    lengths = np.diff(indptr)
    replaced = np.zeros(n, dtype=bool)
    replaced[rows] = True
    old_rows = np.repeat(replaced, lengths)
    lengths[rows] = [len(row) for row in terms]
    out_indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=out_indptr[1:])
    out = np.empty(out_indptr[n], dtype=np.uint64)
    new_rows = np.repeat(replaced, lengths)
    out[~new_rows] = hashes[~old_rows]  # kept rows, in order
    out[new_rows] = new  # replaced rows, in order
    return out_indptr, out


def _term_rows(buffer: tuple[np.ndarray, np.ndarray], texts, serial: bool | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Each text's distinct term hashes (CSR: indptr, hashes; a row in order of first appearance)
    from its lower-cased ``buffer``. ``texts[i]`` is read only for the texts whose lower case holds
    σ or ς; those with a capital Σ take the Python path (``content_terms``). ``serial``: the serial
    kernel (default: below :data:`SERIAL_BYTES`)."""
    buf, offsets = buffer
    serial = len(buf) < SERIAL_BYTES if serial is None else serial
    indptr, hashes, sigma = (_text_terms_serial if serial else _text_terms)(buf, offsets, *_stopword_table())
    if sigma.any():
        rows = [i for i in np.flatnonzero(sigma).tolist() if _CAPITAL_SIGMA in texts[i]]
        if rows:
            indptr, hashes = _replace_rows(indptr, hashes, rows, [list(content_terms(texts[i])) for i in rows])
    return indptr, hashes


def _top_terms(buffer: tuple[np.ndarray, np.ndarray], texts, top: list[int]) -> np.ndarray:
    """The term hashes of the texts ``top`` (each text's distinct terms, one text after the other)."""
    buf, offsets = buffer
    rows = [_term_rows((buf, offsets[k:k + 2]), [texts[k]], serial=True)[1] for k in top]
    return np.concatenate(rows + [np.zeros(0, np.uint64)])


def scan_words(buffer: tuple[np.ndarray, np.ndarray], texts, probes: np.ndarray, *, shingle_size: int = 3,
               bins: int = 0, kept: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """One pass over the words of each text of ``buffer`` (a lower-cased
    :func:`~ctxselect.packing.text_buffer`): MinHash signatures (n x ``bins``; none when ``bins``
    is 0; ``kept``: in the thread's buffer, :func:`~ctxselect.features.similarity.signature_rows`) and
    bool (n, P): whether each text holds the term ``probes[j]`` (what :func:`_term_rows` lists, found
    without listing it; the texts with a capital Σ through ``content_terms``)."""
    buf, offsets = buffer
    kernel = _scan_words_serial if len(buf) < SERIAL_BYTES else _scan_words
    sig, _words, member, sigma = kernel(buf, offsets, shingle_size, signature_rows(offsets, bins, kept),
                                        *_stopword_table(), *_probe_table(probes), len(probes))
    if sigma.any():
        for i in np.flatnonzero(sigma).tolist():
            if _CAPITAL_SIGMA in texts[i]:
                terms = list(content_terms(texts[i]))
                member[i] = np.isin(probes, _hash_each(*text_buffer(terms, lower=False)) if terms else [])
    return sig, member


def _titles(cands) -> list[str] | None:
    """Each candidate's ``extra["title"]`` when it is a string, else ""; None when no candidate
    has any ``extra`` (the common case, read without a Python loop)."""
    if not any(map(attrgetter("extra"), cands)):
        return None
    return [t if isinstance(t := c.extra.get("title"), str) else "" for c in cands]


def _row_values(rows: tuple[np.ndarray, np.ndarray], which) -> np.ndarray:
    indptr, hashes = rows
    return np.concatenate([hashes[indptr[k]:indptr[k + 1]] for k in which] + [np.zeros(0, np.uint64)])


def _source_match(packed: PackedCandidates, query: str) -> np.ndarray:
    """1 where the candidate's source, normalised and of 4+ characters, is named in the question
    (decided once per distinct source)."""
    q_norm = _normalised(query)
    per_source = np.zeros(len(packed.source_names))
    for code in np.unique(packed.source).tolist():
        name = _normalised(packed.source_names[code])
        per_source[code] = float(len(name) >= 4 and name in q_norm)
    return per_source[packed.source]


@dataclass(frozen=True, eq=False)
class QueryProbes:
    """The terms one pass over the candidates' words looks for: the question's and the most relevant
    candidates' (:func:`query_probes`), and once found (``hits``) which texts hold each."""

    texts: tuple[str, ...]        # the candidates' texts (PackedCandidates.texts) they were made for
    query: str
    feedback: int
    q_strings: list[str]          # the question's terms, sorted
    q_hashes: np.ndarray          # their hashes
    order: np.ndarray             # the most relevant candidates
    top_text: np.ndarray          # the term hashes of their texts
    top_terms: np.ndarray         # ... and of their titles, sorted, distinct
    title_rows: tuple | None      # each candidate's title terms (CSR), when any has a title
    probes: np.ndarray            # the sorted union of q_hashes and top_terms
    hits: np.ndarray | None = None  # bool (n, P): the texts that hold each probe (titles not included)


def query_probes(packed: PackedCandidates, query: str | None, *, feedback: int = 1) -> QueryProbes | None:
    """The :class:`QueryProbes` of the question ``query`` over the candidates of ``packed`` (their
    texts not yet scanned); None without a question or candidates."""
    n = packed.n
    if not query or not query.strip() or n == 0:
        return None
    cands = packed.candidates
    titles = _titles(cands)
    title_rows = _term_rows(text_buffer(titles), titles) if titles and any(titles) else None
    # the question's terms (all of them, found or not), sorted, with their hashes
    q_strings = sorted(content_terms(query))
    q_hashes = _hash_each(*text_buffer(q_strings, lower=False))
    # the most relevant candidates, first-listed first among equals (argmax: no sort for one)
    order = (np.argmax(packed.relevance)[None] if feedback == 1
             else np.argsort(-packed.relevance, kind="stable")[:feedback])
    top = order.tolist()
    top_text = _top_terms(packed.text_buffer, packed.texts, top)
    top_terms = np.union1d(top_text, _row_values(title_rows, top)) if title_rows else np.unique(top_text)
    return QueryProbes(packed.texts, query, feedback, q_strings, q_hashes, order, top_text, top_terms, title_rows,
                       np.union1d(q_hashes, top_terms))


def query_features(packed: PackedCandidates, query: str | None, *, feedback: int = 1,
                   probes: QueryProbes | None = None) -> QueryFeatures:
    """Compute :class:`QueryFeatures` for the candidates of ``packed`` and the question ``query``.

    Parameters
    ----------
    feedback : int
        How many of the most relevant candidates feed the expansion vocabulary.
    probes : QueryProbes, optional
        This question's probes, with the texts' hits found already (as :func:`ctxselect.signals`
        finds them in its pass for the MinHash signatures); used only when they were made for
        these candidates (the same ``packed``), this question and ``feedback``: otherwise the
        texts are scanned here.
    """
    n = packed.n
    if probes is None or probes.texts is not packed.texts or probes.query != query or probes.feedback != feedback:
        probes = query_probes(packed, query, feedback=feedback)
        if probes is None:
            return QueryFeatures.empty(n)
    buffer = packed.text_buffer
    big = len(buffer[0]) >= SERIAL_BYTES
    q_strings, q_hashes, order, top_text, top_terms, title_rows = (
        probes.q_strings, probes.q_hashes, probes.order, probes.top_text, probes.top_terms, probes.title_rows)

    # which candidates hold each probe term (a candidate's terms: its text's and its title's)
    member = probes.hits
    if member is None:
        member = scan_words(buffer, packed.texts, probes.probes)[1]
    probes = probes.probes
    if title_rows:
        member = member | (_membership if big else _membership_serial)(*title_rows, probes)
    df = member.sum(axis=0)

    q_cols = np.searchsorted(probes, q_hashes)  # the probes are sorted and hold every one
    vocab = np.zeros(len(probes), dtype=bool)  # the top candidates' terms the question lacks
    vocab[np.searchsorted(probes, top_terms)] = True
    vocab[q_cols] = False
    found = df[q_cols] > 0
    q_terms = tuple(s for s, f in zip(q_strings, found.tolist()) if f)
    q_cols = q_cols[found]
    covers = member[:, q_cols]
    weights = np.array([math.log(1.0 + n / d) for d in df[q_cols].tolist()])
    weights = weights / weights.sum() if weights.size else weights

    vocab &= df <= max(1, n // 2)
    idf = np.zeros(len(probes))
    idf[vocab] = np.log(1.0 + n / df[vocab])
    total = idf.sum()
    expansion = np.zeros(n)
    if total > 0:
        expansion = _weighted_rows(member, idf) / total
        expansion[order] = 0.0
        if expansion.max() > 0:
            expansion /= expansion.max()

    title_link = np.zeros(n)
    if title_rows:
        known = np.union1d(q_hashes, top_text)
        hits = _membership_serial(*title_rows, known).sum(axis=1)
        words = np.diff(title_rows[0])
        title_link = np.divide(hits, words, out=title_link, where=words > 0)

    query_years = years_in(query)
    time_match = np.zeros(n)
    if query_years:
        kernel = _time_match if big else _time_match_serial
        time_match = kernel(buffer[0], buffer[1], _digit_values(), min(query_years), max(query_years))

    return QueryFeatures(q_terms, weights, covers, expansion, title_link, time_match, _source_match(packed, query))


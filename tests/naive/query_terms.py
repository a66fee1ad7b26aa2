"""Plain-Python reference twin of the query-aware signals (ctxselect/features/query_terms.py) and of
the term and year kernels (ctxselect/kernels/terms.py).

This is the implementation the compiled one replaced, kept as it was: regex words of the original
text, each lower-cased, stopwords and one-character words dropped, a light stem, Python sets of
strings; years by regex. Only the stopword list is shared with the library (it is data, not an
algorithm). The kernels' term hashes are computed here from the strings, in Python integers.
"""

import math
import re

from ctxselect.text.words import STOPWORDS
from tests.naive.signals import FNV_OFFSET, FNV_PRIME, MASK, mix64

WORD = re.compile(r"[A-Za-z0-9\u00C0-\uFFFF]+")
YEAR = re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")


def naive_stem(word):
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: len(word) - len(suffix)] + keep
    return word


def naive_content_terms(text):
    """Lower-cased, lightly stemmed words of ``text`` without stopwords and one-letter words."""
    return {naive_stem(w) for w in (m.lower() for m in WORD.findall(text)) if len(w) > 1 and w not in STOPWORDS}


def naive_years(text):
    return [int(y) for y in YEAR.findall(text)]


def naive_term_hash(term):
    """FNV-1a of the term's UTF-8 bytes, then the splitmix64 finaliser."""
    h = FNV_OFFSET
    for b in term.encode("utf-8"):
        h = ((h ^ b) * FNV_PRIME) & MASK
    return mix64(h)


def naive_text_terms(text):
    """The sorted distinct term hashes of ``text``, as the terms kernel lists them."""
    return sorted({naive_term_hash(t) for t in naive_content_terms(text)})


def naive_time_match(query_years, chunk_years):
    if not chunk_years:
        return 0.0
    lo, hi = min(query_years), max(query_years)
    if any(lo <= y <= hi for y in chunk_years):
        return 1.0
    if min(chunk_years) < lo and max(chunk_years) > hi:
        return 0.8
    distance = min(min(abs(y - lo), abs(y - hi)) for y in chunk_years)
    return math.exp(-distance / 3.0)


def _normalised(text):
    return re.sub(r"[^a-z0-9]+", "", text.lower())


def naive_query_features(packed, query, feedback=1):
    """The query features of ``packed`` as a dict of the fields of ``QueryFeatures`` (plain lists)."""
    n = packed.n
    cands = packed.candidates
    if not query or not query.strip() or n == 0:
        return {"terms": (), "term_weight": [], "covers": [[] for _ in range(n)], "expansion": [0.0] * n,
                "title_link": [0.0] * n, "time_match": [0.0] * n, "source_match": [0.0] * n}
    titles = [c.extra.get("title") if isinstance(c.extra.get("title"), str) else "" for c in cands]
    chunk_terms = [naive_content_terms(f"{t} {c.text}") for t, c in zip(titles, cands)]
    df = {}
    for terms in chunk_terms:
        for t in terms:
            df[t] = df.get(t, 0) + 1
    idf = {t: math.log(1.0 + n / d) for t, d in df.items()}

    q_terms = sorted(t for t in naive_content_terms(query) if t in df)
    covers = [[t in terms for t in q_terms] for terms in chunk_terms]
    weights = [idf[t] for t in q_terms]
    weights = [w / sum(weights) for w in weights]

    order = sorted(range(n), key=lambda i: -packed.relevance[i])[:feedback]  # stable, as argsort
    vocab = {t for k in order for t in chunk_terms[k]} - set(q_terms)
    vocab = {t for t in vocab if df[t] <= max(1, n // 2)}
    total = sum(idf[t] for t in vocab)
    expansion = [0.0] * n
    if total > 0:
        for i, terms in enumerate(chunk_terms):
            if i not in order:
                expansion[i] = sum(idf[t] for t in terms & vocab) / total
        top = max(expansion)
        if top > 0:
            expansion = [e / top for e in expansion]

    known = naive_content_terms(query) | {t for k in order for t in naive_content_terms(cands[k].text)}
    title_link = [0.0] * n
    for i, title in enumerate(titles):
        words = naive_content_terms(title)
        if words:
            title_link[i] = len(words & known) / len(words)

    query_years = naive_years(query)
    time_match = [naive_time_match(query_years, naive_years(c.text)) if query_years else 0.0 for c in cands]
    q_norm = _normalised(query)
    source_match = [float(len(_normalised(c.source)) >= 4 and _normalised(c.source) in q_norm) for c in cands]
    return {"terms": tuple(q_terms), "term_weight": weights, "covers": covers, "expansion": expansion,
            "title_link": title_link, "time_match": time_match, "source_match": source_match}

"""Near-duplicate drift (``drift_pairs``): read in the prefix claims read, bounded work, and the same
pairs as a plain per-pair reading (the definition) whenever the cap does not bind."""

import random
from collections import Counter

import numpy as np
import pytest

import ctxselect
from ctxselect.features.compute import signals
from ctxselect.features.contradictions import detect
from ctxselect.features.contradictions.detect import drift_pairs
from ctxselect.features.pairs import ConflictKind
from ctxselect.text.claims import MAX_CLAIM_CHARS
from ctxselect.text.words import numbers_in
from tests.naive.drift import FILLER, naive_drift


def plain(texts: list[str]) -> list[dict]:
    return [{"id": f"c{k}", "source": "s", "tokens": 10, "relevance": 0.5, "text": t} for k, t in enumerate(texts)]


def all_pairs(n: int):
    i, j = np.triu_indices(n, 1)
    return i.astype(np.int64), j.astype(np.int64)


@pytest.mark.parametrize("lead", ["", "İ "])  # İ: an exotic code point, read by the plain pattern
def test_a_number_beyond_the_claim_prefix_makes_no_drift(lead):
    """Two long near-duplicates whose only differing numbers stand after the first MAX_CLAIM_CHARS
    characters (and the 120 claims read after them) make no drift: drift reads where claims read.
    Differing numbers inside the prefix still do."""
    assert len(lead + FILLER) > MAX_CLAIM_CHARS + 120
    texts = [lead + FILLER + "total 3559 people", lead + FILLER + "total 10000 people",
             lead + "total 3559 people " + FILLER, lead + "total 10000 people " + FILLER]
    packed = ctxselect.pack(plain(texts), {"token_budget": 100})
    di, dj = drift_pairs(packed, np.array([0, 2]), np.array([1, 3]))
    assert list(zip(di.tolist(), dj.tolist())) == [(2, 3)]


def test_a_number_that_starts_in_the_prefix_is_read_whole():
    """A number that starts just before MAX_CLAIM_CHARS is read to its end (within the 120 characters
    after the prefix), as claims read it."""
    head = "x" * (MAX_CLAIM_CHARS - 12) + " value "
    texts = [head + "12,345,678 units", head + "12,345,679 units"]
    packed = ctxselect.pack(plain(texts), {"token_budget": 100})
    assert drift_pairs(packed, np.array([0]), np.array([1]))[0].tolist() == [0]
    assert detect.drift_numbers(texts[0]) == ["12,345,678"]


def random_texts(rng: random.Random, n: int) -> list[dict]:
    """Short near-duplicate texts drawing numbers, years, titles and exotic letters from small pools."""
    out = []
    for k in range(n):
        numbers = " ".join(rng.choice(["3", "7", "1,500", "1500", "2.5", "2,5", "42", "w12", "12x"])
                           for _ in range(rng.randrange(4)))
        years = " ".join(rng.choice(["2018", "2019", "1999"]) for _ in range(rng.randrange(3)))
        lead = rng.choice(["", "", "", "İ ", "café "])
        chunk = {"id": f"c{k}", "source": "s", "tokens": 10, "relevance": rng.choice([0.2, 0.5, 0.9]),
                 "text": f"{lead}the club striker scored {numbers} goals in {years} seasons"}
        if rng.random() < 0.3:
            chunk["title"] = rng.choice(["Basic", "Pro"])
        out.append(chunk)
    return out


@pytest.mark.parametrize("seed", range(12))
def test_drift_pairs_are_the_definition_when_the_cap_does_not_bind(seed):
    """Every near pair given: the bulk steps and the per-pair loop keep exactly the pairs the
    definition keeps, and examine at most the cap."""
    rng = random.Random(seed)
    packed = ctxselect.pack(random_texts(rng, rng.randrange(2, 60)), {"token_budget": 100})
    i, j = all_pairs(packed.n)
    keep = rng.random() < 0.5  # also a subset of the pairs, unsorted
    if keep:
        pick = np.array([rng.random() < 0.5 for _ in range(len(i))], dtype=bool)
        order = np.array(rng.sample(range(int(pick.sum())), int(pick.sum())), dtype=np.int64)
        i, j = i[pick][order], j[pick][order]
    info = {}
    di, dj = drift_pairs(packed, i, j, info)
    assert info["examined"] <= info["cap"] and len(i) <= info["cap"]
    assert set(zip(di.tolist(), dj.tolist())) == naive_drift(packed, i, j)


@pytest.mark.parametrize("seed", range(6))
def test_a_binding_cap_examines_the_most_relevant_pairs_first(monkeypatch, seed):
    """With a small cap, drift keeps exactly the defined drift pairs among the ``cap`` pairs it
    examines: those left after the bulk steps, by the relevance rank of their weaker chunk, then (i, j)."""
    rng = random.Random(100 + seed)
    packed = ctxselect.pack(random_texts(rng, 50), {"token_budget": 100})
    monkeypatch.setattr(detect, "DRIFT_PAIR_FLOOR", 0)
    monkeypatch.setattr(detect, "DRIFT_PAIRS_PER_CANDIDATE", 1)  # cap = n = 50
    i, j = all_pairs(packed.n)
    info = {}
    di, dj = drift_pairs(packed, i, j, info)
    assert info["cap"] == 50 and info["examined"] == 50
    texts = [c.text for c in packed.candidates]
    rest = [(a, b) for a, b in zip(i.tolist(), j.tolist())
            if numbers_in(texts[a]) and numbers_in(texts[b]) and numbers_in(texts[a]) != numbers_in(texts[b])]
    rank = {k: r for r, k in enumerate(sorted(range(packed.n), key=lambda k: (-packed.relevance[k], k)))}
    examined = sorted(rest, key=lambda p: (max(rank[p[0]], rank[p[1]]), p))[:50]
    got = set(zip(di.tolist(), dj.tolist()))
    assert got == naive_drift(packed, np.array([a for a, _ in examined]), np.array([b for _, b in examined]))


def test_equal_embeddings_examine_a_bounded_number_of_pairs():
    """Every embedding equal: every pair is a near-duplicate (79,800 at 400 candidates), each with a
    number the other lacks. Drift examines at most the cap of them (a count, not a time), and lists
    only pairs it examined."""
    n = 400
    chunks = [{"id": f"c{k}", "source": "s", "tokens": 10, "relevance": 0.5,
               "text": f"the report counts {k + 10} units and {k + 5000} crates"} for k in range(n)]
    packed = ctxselect.pack(chunks, {"token_budget": 100}, embeddings=np.ones((n, 8)))
    cap = max(detect.DRIFT_PAIR_FLOOR, detect.DRIFT_PAIRS_PER_CANDIDATE * n)
    assert cap < n * (n - 1) // 2
    s = signals(packed, claims=False)
    assert s.similarity == "cosine" and len(s.redundancy) == n * (n - 1) // 2
    drift = int(((s.contradictions.kind & ConflictKind.DRIFT) > 0).sum())
    assert drift == cap
    assert s.capped == (f"drift examined {cap:,} of 79,800 near-duplicate pairs whose numbers differ (the most "
                        "relevant first; the others make no drift)",)
    info = {}
    di, _dj = drift_pairs(packed, *all_pairs(n), info)
    assert info == {"examined": cap, "cap": cap, "pairs": 79_800} and len(di) == cap
    assert signals(ctxselect.pack(chunks[:40], {"token_budget": 100}, embeddings=np.ones((40, 8))),
                   claims=False).capped == ()  # 780 pairs: within the cap, all examined


def test_a_binding_drift_cap_is_said_and_never_proven_optimal(monkeypatch):
    """40 chunks, every embedding equal, each text its own numbers: 780 near pairs to examine, a cap of 40.
    select() is proven optimal without the cap; with it, feasible, and the reason says what was examined."""
    n = 40
    chunks = [{"id": f"c{k}", "source": "s", "tokens": 10, "relevance": 0.5 + k / 100, "embedding": [1.0, 0.0],
               "text": f"the report counts {k + 10} units and {k + 5000} crates"} for k in range(n)]
    reqs = {"token_budget": 100, "min_coverage": 0}
    sel = ctxselect.select(chunks, reqs, signal_options={"claims": False}, on_unresolved="keep_both")
    assert sel.status == "optimal" and sel.status_reason == "proven optimal", (sel.status, sel.status_reason)
    monkeypatch.setattr(detect, "DRIFT_PAIR_FLOOR", 0)
    monkeypatch.setattr(detect, "DRIFT_PAIRS_PER_CANDIDATE", 1)
    sel = ctxselect.select(chunks, reqs, signal_options={"claims": False}, on_unresolved="keep_both")
    assert sel.status == "feasible", (sel.status, sel.status_reason)
    assert sel.status_reason == ("proven optimal, but not every pair was examined for contradictions; drift examined "
                                 "40 of 780 near-duplicate pairs whose numbers differ (the most relevant first; the "
                                 "others make no drift)")


def test_texts_writing_the_same_numbers_are_settled_in_bulk():
    """Near pairs whose texts write the same numbers, hold the same values ("1,500" and "1500"), or
    one of which holds none, are never examined one by one: only the three pairs with the text that
    states one number more are (and make no drift: the other states nothing it lacks)."""
    texts = ["sold 1,500 cars in 3 towns", "sold 1500 cars in 3 towns", "sold 1,500 cars in 3 towns",
             "sold many cars in some towns", "sold 1500 cars in 3 towns and 7 more"]
    packed = ctxselect.pack(plain(texts), {"token_budget": 100})
    i, j = all_pairs(len(texts))
    info = {}
    di, _dj = drift_pairs(packed, i, j, info)
    assert info["examined"] == 3 and len(di) == 0
    assert Counter(detect.drift_numbers(texts[0])) == Counter(["1,500", "3"])

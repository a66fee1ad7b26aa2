"""Corroboration of near-duplicate drift (``_resolve_drift``): numbers read where drift reads them,
the same verdicts as a plain reading of every pair, and bounded work on pairs with huge sides."""

import random

import numpy as np
import pytest

import ctxselect
from ctxselect.features.compute import signals
from ctxselect.features.pairs import ConflictKind
from ctxselect.selection import corroboration
from ctxselect.selection.corroboration import OnUnresolved, Resolution, _resolve_drift
from tests.naive.drift import FILLER, naive_resolve_drift

BASE = "{n} people were affected by the storm power outage in the northern district last week and crews restored power"


def test_a_number_beyond_the_claim_prefix_supports_no_side():
    """Chunk c states a's number only after the prefix claims and drift read: it no longer supports
    a, so a and b are an even split (it was "b contradicted by a, 2 chunks against 1")."""
    cands = [{"id": k, "source": "s", "tokens": 30, "relevance": 0.5, "doc_id": f"d{k}", "text": t}
             for k, t in (("a", BASE.format(n=3559)), ("b", BASE.format(n=10000)), ("c", FILLER + " in all 3559"))]
    sel = ctxselect.select(cands, {"token_budget": 1000})
    assert sel.ids == ["c"]
    assert [u["ids"] for u in sel.unresolved] == [["a", "b"]]
    assert "3559 (1 supporting chunk(s)) vs 10000 (1 supporting chunk(s))" in sel.excluded["b"]
    within = [dict(c, text=c["text"].replace(FILLER, "")) for c in cands]  # the same number inside the prefix
    sel = ctxselect.select(within, {"token_budget": 1000})
    assert sel.unresolved == [] and "b" not in sel.ids and "where 2 chunk(s) state 3559" in sel.excluded["b"]


@pytest.mark.parametrize("seed", range(10))
def test_drift_verdicts_are_the_definition(seed):
    """Random near-duplicates with numbers from a small pool (repeats, "1,500" = "1500"), documents
    and eligibility: the same losers, reasons and unresolved conflicts as a plain reading."""
    rng = random.Random(seed)
    n = rng.randrange(3, 40)
    cands = [{"id": f"c{k}", "source": rng.choice(["s", "t"]), "tokens": 10, "relevance": rng.choice([0.3, 0.6, 0.9]),
              "doc_id": f"d{rng.randrange(8)}",
              "text": "the figures were " + " and ".join(rng.choice(["3", "7", "1,500", "1500", "42", "9"])
                                                         for _ in range(rng.randrange(1, 4)))}
             for k in range(n)]
    packed = ctxselect.pack(cands, {"token_budget": 100}, embeddings=np.ones((n, 4)))
    s = signals(packed, claims=False)
    eligible = np.array([rng.random() < 0.85 for _ in range(n)])
    weight = packed.relevance * s.freshness
    for policy in OnUnresolved:
        got, want = Resolution(), Resolution()
        _resolve_drift(packed, s, eligible, weight, got, policy)
        naive_resolve_drift(packed, s, eligible, weight, want, policy)
        assert got.losers == want.losers and got.conflicts == want.conflicts


def test_weighing_stops_once_the_sides_reach_the_bound(monkeypatch):
    """Half the chunks state "7 7 5", half "7 5 <own number>": every mixed pair drifts and one side
    ("7") is held by every chunk. The sides weighed in one call add up to at most the bound plus one
    pair's (a count of chunks, not a time); at the default bound this small input is weighed whole."""
    n = 60
    cands = [{"id": f"c{k}", "source": "s", "tokens": 10, "relevance": 0.5,
              "text": "the report states " + ("7 and 7 and 5" if k % 2 else f"7 and 5 and {1000 + k}")}
             for k in range(n)]
    packed = ctxselect.pack(cands, {"token_budget": 100}, embeddings=np.ones((n, 4)))
    s = signals(packed, claims=False)
    eligible, weight = np.ones(n, dtype=bool), packed.relevance * s.freshness
    weighed = []
    monkeypatch.setattr(corroboration, "_decide", lambda p, w, o, pair, sides, *a, **k: weighed.append(
        len(sides[0]) + len(sides[1])))
    _resolve_drift(packed, s, eligible, weight, Resolution(), OnUnresolved.DROP_BOTH)
    drift = int(((s.contradictions.kind & ConflictKind.DRIFT) > 0).sum())
    assert len(weighed) == drift and sum(weighed) > n * n // 2  # every pair, huge sides
    weighed.clear()
    monkeypatch.setattr(corroboration, "DRIFT_SIDE_FLOOR", 0)
    monkeypatch.setattr(corroboration, "DRIFT_SIDES_PER_CANDIDATE", 10)  # 600 chunks
    _resolve_drift(packed, s, eligible, weight, Resolution(), OnUnresolved.DROP_BOTH)
    assert 0 < len(weighed) < drift and sum(weighed) <= 10 * n

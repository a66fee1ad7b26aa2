"""The bound of a cut problem (selection.solvers.core.cut_bound): after the reach left chunks
uncompared, the compared chunks' proven optimum plus what the uncompared ones can add at most.
It must cover the best selection of the uncut problem (every pair compared), found here by brute
force, and it is what select() reports when the LP over every chunk leaves a gap above TIGHT_GAP."""

import time
from dataclasses import replace

import numpy as np
import pytest

import ctxselect
from ctxselect.features import similarity
from ctxselect.features.compute import DEFAULT_THRESHOLDS
from ctxselect.selection import eligibility
from ctxselect.selection.api import prepare
from ctxselect.selection.problem import score
from ctxselect.selection.solvers import tiers
from ctxselect.selection.solvers.core import CLUSTER_MARGIN, Reach, _firm_clusters, cut_bound, upper_bound


WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot")
QUESTION = "alpha bravo charlie"  # its terms covered: aspects of the objective, with no provider in the reach


def _instance(rng, n):
    """``n`` admissible chunks with 4-d embeddings (some near-duplicates of others), sources with a cap,
    texts holding QUESTION's terms or not, a hard field, versions of one document, the default gate, a
    budget of a few chunks, and ``n`` more of a scope not allowed (so the reach, which takes the best
    providers of the question's terms first, compares fewer than half the candidates: else it
    compares every pair)."""
    base = rng.normal(size=(2 * n, 4))
    for k in range(1, 2 * n):
        if rng.random() < 0.3:  # a near-duplicate of an earlier chunk
            base[k] = base[int(rng.integers(0, k))] + rng.normal(scale=1e-3, size=4)
    chunks = []
    for k in range(2 * n):
        chunk = {"id": f"c{k}", "scope": "public" if k < n else "internal", "source": f"s{int(rng.integers(0, 3))}",
                 "tokens": int(rng.integers(5, 60)), "relevance": float(rng.random()), "embedding": base[k].tolist(),
                 "text": " ".join(rng.choice(WORDS, 3).tolist()),
                 "fields": {"f": [1, 2, None][int(rng.integers(0, 3))]}}
        if rng.random() < 0.3:
            chunk.update(doc_id="d", version=str(int(rng.integers(1, 3))))
        chunks.append(chunk)
    reqs = {"token_budget": int(rng.integers(30, 90)), "max_per_source": int(rng.integers(1, 4)),
            "conflict_fields": {"f": 1.0}, "allowed_scopes": ["public"],
            "min_token_utilization": float(rng.choice([0.1, 0.7, 0.85]))}  # a floor the optimum may not need
    return chunks, reqs


def _uncut_selections(problem):
    """(tokens, score) of every subset of the uncut problem's eligible chunks (every pair compared)
    within the source caps, at most one chunk of each near-duplicate cluster, one value of each hard
    field and one version per document (the gate's lower rows and the source minimums left out: the
    bound must cover them all the more); n <= 13."""
    packed = problem.packed
    rows = np.flatnonzero(problem.eligible)
    found = [(0, 0.0)]
    for bits in range(1, 1 << len(rows)):
        mask = np.zeros(problem.n, dtype=bool)
        mask[rows[[bits >> k & 1 == 1 for k in range(len(rows))]]] = True
        if (np.bincount(packed.source[mask], minlength=len(packed.source_names)) > packed.source_max).any():
            continue
        if any(mask[group].sum() > 1 for group in problem.groups):
            continue
        if any(len(set(packed.field_values[mask, f][packed.field_values[mask, f] >= 0].tolist())) > 1
               for f in problem.hard_fields):
            continue
        docs = packed.doc[mask][packed.doc[mask] >= 0]
        versions = packed.version[mask][packed.doc[mask] >= 0]
        if len(docs) and any(len(set(versions[docs == d].tolist())) > 1 for d in set(docs.tolist())):
            continue
        found.append((int(packed.tokens[mask].sum()), score(problem, mask)))
    return np.array(found).T


def _checked(cut, tokens, scores) -> tuple[int, int]:
    """The cut bound of ``cut`` at both capacities (the gate's ceiling or not) against the uncut
    problem's selections (``tokens``, ``scores``: :func:`_uncut_selections`): it covers the best
    within the capacity; returns (bounds computed, those below the LP over the uncut problem)."""
    found = tighter = 0
    for ceiling in (True, False):
        capacity = cut.capacity(ceiling)
        bound, timings = cut_bound(cut, capacity, ceiling=ceiling, deadline=time.perf_counter() + 10)
        if bound is None:
            continue
        found += 1
        assert set(timings) == {"bound"}
        assert bound >= scores[tokens <= capacity].max() - 1e-9, (ceiling, bound)
        tighter += bound < upper_bound(replace(cut, eligible=cut.uncut_eligible), capacity) - 1e-9
    return found, tighter

@pytest.mark.parametrize("seed", range(3))
def test_the_cut_bound_covers_the_uncut_optimum(monkeypatch, seed):
    """On random instances cut by the reach (every cosine cut, a core of one), the bound is at
    least the brute-force optimum of the problem with every pair compared, and it is below the LP
    over every chunk the uncut problem could hold on some of them (else it would be pointless)."""
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    rng = np.random.default_rng(seed)
    found = tighter = 0
    for _ in range(30):
        chunks, reqs = _instance(rng, int(rng.integers(8, 13)))
        question = QUESTION if rng.random() < 0.5 else None  # without: no aspects, the bound's own terms alone
        cut = prepare(chunks, reqs, question, reach=Reach(1, 0, True))
        if cut.signals.compared is None or cut.signals.compared.all():
            continue
        full = prepare(chunks, reqs, question)  # every pair compared
        assert full.signals.compared is None
        tokens, scores = _uncut_selections(full)
        found, tighter = np.add((found, tighter), _checked(cut, tokens, scores))
    assert found >= 12 and tighter >= 1, (found, tighter)  # the check ran, and the bound can be the tighter one


@pytest.mark.parametrize("seed", range(3))
def test_the_bound_covers_the_optimum_whichever_chunks_were_compared(seed):
    """The bound's argument on its own: any chunks compared (a random share, the others left out as a
    cut leaves them, every pair among the compared ones that of the full run; some compared ones not
    eligible, as corroboration's losers above CLAIM_ALL_TEXTS_LIMIT, yet held by the uncut problem), the
    bound covers the brute-force optimum of the problem with every chunk, and is below the LP over
    them on some."""
    rng = np.random.default_rng(100 + seed)
    found = tighter = 0
    for _ in range(40):
        chunks, reqs = _instance(rng, int(rng.integers(5, 12)))
        full = prepare(chunks, reqs, QUESTION if rng.random() < 0.5 else None)
        tokens, scores = _uncut_selections(full)
        compared = rng.random(full.n) < rng.uniform(0.2, 0.9)
        losers = rng.random(full.n) < 0.2
        cut = replace(full, signals=replace(full.signals, compared=compared),
                      eligible=full.eligible & compared & ~losers, uncompared=full.eligible & ~compared,
                      uncut_eligible=full.eligible.copy())
        found, tighter = np.add((found, tighter), _checked(cut, tokens, scores))
    assert found >= 5 and tighter >= 1, (found, tighter)


def test_no_cut_bound_without_a_cut_or_when_the_rest_is_worth_more():
    """Nothing to refine without a cut; and none when a chunk not compared is worth more a token than
    the LP's price (its tokens could then add more than the LP's gap: the LP over all is the bound)."""
    chunks, reqs = _instance(np.random.default_rng(1), 8)
    problem = prepare(chunks, reqs, QUESTION)
    assert cut_bound(problem, problem.capacity(True), ceiling=True, deadline=time.perf_counter() + 10) == (None, {})
    density = np.where(problem.eligible, problem.value / problem.packed.tokens, -np.inf)
    compared = density < density.max()  # the densest chunk left out: worth more a token than any price
    cut = replace(problem, signals=replace(problem.signals, compared=compared), eligible=problem.eligible & compared,
                  uncompared=problem.eligible & ~compared, uncut_eligible=problem.eligible.copy())
    bound, timings = cut_bound(cut, cut.capacity(True), ceiling=True, deadline=time.perf_counter() + 10)
    assert bound is None and set(timings) == {"bound"}


def test_the_clusters_keep_only_firm_pairs():
    """A pair at the duplicate threshold may be one in a cut run and not in a full run (a float32 ulp):
    the cut bound keeps the clusters of the pairs CLUSTER_MARGIN above the threshold, which a full run
    holds too; none without a threshold."""
    chunks, reqs = _instance(np.random.default_rng(1), 8)
    signals = prepare(chunks, reqs, QUESTION).signals
    t = signals.duplicate_threshold
    assert t == pytest.approx(DEFAULT_THRESHOLDS["cosine"][1])
    red = signals.redundancy
    i, j = np.array([0, 2, 4, 5]), np.array([1, 3, 5, 6])
    w = np.array([t, t + CLUSTER_MARGIN / 2, t + 2 * CLUSTER_MARGIN, 0.99])
    pairs = replace(signals, redundancy=type(red)(i, j, w), duplicate=np.ones(4, dtype=bool))
    assert [g.tolist() for g in _firm_clusters(pairs)] == [[4, 5, 6]]
    assert _firm_clusters(replace(pairs, duplicate=np.zeros(4, dtype=bool))) == []
    assert _firm_clusters(replace(pairs, duplicate_threshold=None)) == []


def test_select_reports_the_cut_bound_when_the_lp_leaves_more_than_tight_gap(monkeypatch):
    """select() narrows a gap above TIGHT_GAP with the cut bound (its time in timings["bound"]), keeps
    it when the cut bound is not smaller, and never reports a bound below the whole problem's optimum."""
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    rng = np.random.default_rng(7)
    narrowed = 0
    for _ in range(30):
        chunks, reqs = _instance(rng, 10)
        full = ctxselect.select(chunks, reqs, QUESTION)
        assert full.status in ("optimal", "empty")
        monkeypatch.setattr(tiers, "TIGHT_GAP", 1.0)  # never refined: the LP over every chunk
        plain = ctxselect.select(chunks, reqs, QUESTION, core_size=1, exact_up_to=0)
        monkeypatch.setattr(tiers, "TIGHT_GAP", 0.0)  # every gap refined
        refined = ctxselect.select(chunks, reqs, QUESTION, core_size=1, exact_up_to=0)
        if plain.bound is None or "not compared" not in " ".join(plain.excluded.values()):
            continue
        assert refined.ids == plain.ids and refined.objective == plain.objective
        assert full.objective - 1e-9 <= refined.bound <= plain.bound + 1e-12
        if refined.bound < plain.bound - 1e-9:
            narrowed += 1
            assert "bound" in refined.timings and "bound" not in plain.timings
    assert narrowed >= 1


def test_a_superseded_version_stays_out_of_the_uncut_problem(monkeypatch):
    """Above CLAIM_ALL_TEXTS_LIMIT (patched to 0 here) the uncut problem holds every chunk a full run
    might find eligible, corroboration's losers too (pairs not compared could change a verdict), but
    not an older version a newer selectable one supersedes: that is read from the codes, the same in
    any run. At 20,000 x 384 (latency.py, 5 queries) such versions made the reported gap 0.33-1.14 %,
    0.008-0.033 % without them. The bound still covers the brute-force optimum of the full run."""
    monkeypatch.setattr(similarity, "UNCUT_WORK", 0.0)
    monkeypatch.setattr(eligibility, "CLAIM_ALL_TEXTS_LIMIT", 0)
    rng = np.random.default_rng(3)
    superseded = checked = 0
    for _ in range(30):
        chunks, reqs = _instance(rng, int(rng.integers(8, 13)))
        cut = prepare(chunks, reqs, QUESTION, reach=Reach(1, 0, True))
        if cut.uncut_eligible is None:
            continue
        old = [i for i, why in cut.ineligible_reason.items() if why.startswith("superseded by")]
        superseded += len(old)
        assert not cut.uncut_eligible[old].any()
        full = prepare(chunks, reqs, QUESTION)
        tokens, scores = _uncut_selections(full)
        capacity = cut.capacity(True)
        wider = upper_bound(replace(cut, eligible=cut.uncut_eligible), capacity)
        assert wider >= scores[tokens <= capacity].max() - 1e-9
        checked += 1
    assert superseded >= 3 and checked >= 8, (superseded, checked)

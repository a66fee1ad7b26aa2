"""Free-text claims: extraction, normalisation, and the bounds on how many are read and compared."""

import numpy as np

from ctxselect.text import claim_scope
from ctxselect.text import claims as claims_module
from ctxselect.text.claims import (
    MAX_CLAIMS_PER_TEXT,
    compare_claims,
    extract_claims,
    find_claim_conflicts,
)
from tests.helpers import MiB, peak_memory


def test_extraction_normalises_numbers_and_dates():
    claims = extract_claims("On March 3, 2021 the fund held 1.5 million dollars, up 4% from 2,000 dollars; "
                            "in 2020 nothing happened.")
    values = {(c.kind, c.value) for c in claims}
    assert ("date", "2021-03-03") in values and ("number", 1_500_000.0) in values
    assert ("number", 4.0) in values and ("number", 2000.0) in values
    assert not any(c.value == 2020.0 for c in claims)  # a bare year is not a claim
    a = extract_claims("the storm outage in the district affected 1,000 people")
    b = extract_claims("the storm outage in the district affected 1000 people")
    assert compare_claims(a, b)[0] == [] and len(compare_claims(a, b)[1]) == 1



def _numeric_text(seed: int, size: int) -> str:
    rng = np.random.default_rng(seed)
    parts, total = [], 0
    while total < size:
        s = (f"In district {int(rng.integers(1, 999))} the census counted {int(rng.integers(1000, 9999999)):,} "
             f"people and {int(rng.integers(1, 99))} schools. ")
        parts.append(s)
        total += len(s)
    return "".join(parts)


def test_claims_of_a_400kb_numeric_text_are_bounded():
    text = _numeric_text(1, 400_000)  # ~14,000 numbers
    claims = extract_claims(text)
    assert len(claims) == MAX_CLAIMS_PER_TEXT
    assert claims == extract_claims(text[:20_000])  # the earliest ones (20,000 characters hold ~600)
    head = extract_claims(text[:2000])[:-1]  # the cut may split the last number
    assert head == claims[:len(head)]


def test_two_numeric_near_duplicates_compare_a_bounded_number_of_claims():
    a = _numeric_text(2, 400_000)
    b = a[:200] + a[200:].replace("people", "persons", 1)
    second = a.index("counted", a.index("counted") + 1) + 8  # the first figure with four context words
    b = b[:second] + "1,234,567" + b[a.index(" people", second):]
    (found, agreed), peak = peak_memory(lambda: find_claim_conflicts([a, b]))
    aligned = sum(len(v) for v in found.values()) + sum(len(v) for v in agreed.values())
    assert aligned <= MAX_CLAIMS_PER_TEXT
    # the edited figure is found, and only it: the other districts' figures are about other districts
    assert [(ca.raw, cb.raw) for ca, cb in found[(0, 1)]] == [(a[second:a.index(" people", second)] + " people",
                                                                "1,234,567 people")]
    assert peak < 32 * MiB


def test_a_join_bucket_beyond_its_claim_cap_is_skipped(monkeypatch):
    monkeypatch.setattr(claims_module, "MAX_BUCKET_CLAIMS", 150)
    template = " ".join(f"the storm outage in the northern district affected {k} people." for k in range(80))
    found, agreed = find_claim_conflicts([template, template.replace("affected 3 ", "affected 4 ")])
    assert not found and not agreed  # 160 claims share one key: boilerplate


def test_claims_are_built_as_the_dataclass_builds_them():
    """_read_claims builds its claims without the frozen dataclass's __init__: the same attributes,
    in the same order, equal and hashed alike."""
    made = claims_module._claim(1.5, "1.5 people", "the town", "people", "number", 3, 6)
    plain = claims_module.Claim(1.5, "1.5 people", "the town", "people", "number", 3, 6)
    assert vars(made) == vars(plain) and list(vars(made)) == list(vars(plain))
    assert made == plain and hash(made) == hash(plain) and repr(made) == repr(plain)
    claim = extract_claims("the town of Herman counted 1,207 people on March 3, 2021")
    assert [list(vars(c)) for c in claim] == [list(vars(plain))] * 2


def _shared_contexts(texts: int, claims: int = 100, per: int = 8, seed: int = 0) -> list[str]:
    """``texts`` texts of ``claims`` numbers each; every ``per`` numbers of a text share one five-word
    context with the same numbers of every other text, which state other values: join buckets of
    ``texts`` × ``per`` claims in which every pair of texts conflicts."""
    rng = np.random.default_rng(seed)
    words = ["".join(rng.choice(list("bdfgklmnprstvz")) + rng.choice(list("aeiou")) for _ in range(3))
             for _ in range(5 * (claims // per))]
    contexts = [" ".join(words[5 * k:5 * k + 5]) for k in range(claims // per)]
    return [" ".join(f"{ctx} {10 + (k * per + r) % 1400} units." for ctx in contexts for r in range(per))
            for k in range(texts)]


def _pairs(found) -> int:
    return sum(map(len, found.values()))


def test_the_join_makes_a_budgeted_number_of_comparisons_and_aligned_pairs(monkeypatch):
    """30 texts of 96 claims in 12 join buckets of 240 claims (under MAX_BUCKET_CLAIMS): 334,080 scope
    checks and as many aligned pairs before the budgets; now at most ALIGN_BASE + ALIGN_PER_CLAIM
    comparisons and PAIRS_BASE + PAIRS_PER_CLAIM aligned pairs a claim joined. One bucket fits the
    comparisons, not the aligned pairs: none is kept."""
    texts = _shared_contexts(30, claims=96)
    claims = [claims_module.extract_claims(t) for t in texts]
    joined = sum(map(len, claims))
    assert joined == 2880
    checks = []
    same = claim_scope.ScopeReader.same
    monkeypatch.setattr(claim_scope.ScopeReader, "same", lambda self, *pair: checks.append(1) or same(self, *pair))
    info = {}
    conflicts, agreements = find_claim_conflicts(texts, info=info)
    assert info == {"beyond_budget": 12}  # the aligned pairs' budget broke on the first bucket
    assert 0 < len(checks) <= claims_module.ALIGN_BASE + claims_module.ALIGN_PER_CLAIM * joined
    aligned = _pairs(claims_module._aligned_claims(claims, 90.0, 4))
    assert aligned <= claims_module.PAIRS_BASE + claims_module.PAIRS_PER_CLAIM * joined
    assert not conflicts and not agreements and aligned == 0


def test_within_the_budgets_the_join_is_unchanged_and_beyond_them_the_largest_buckets_go(monkeypatch):
    """Buckets are taken smallest first: within the budgets the result is the unbudgeted one; when
    either binds, the buckets beyond it are the largest, and the others keep their pairs, in order."""
    small, large = _shared_contexts(4, claims=16, per=2, seed=1), _shared_contexts(6, claims=24, per=4, seed=2)
    texts = small + large  # 8 buckets of 8 claims (28 comparisons, 24 aligned), 6 of 24 (276 and 240)
    info = {}
    found = find_claim_conflicts(texts, info=info)
    assert _pairs(found[0]) == 8 * 6 * 2 + 6 * 15 * 4 and not found[1]  # per bucket, text pair and claim
    assert info == {"beyond_budget": 0}
    monkeypatch.setattr(claims_module, "ALIGN_BASE", 10 ** 9)
    monkeypatch.setattr(claims_module, "PAIRS_BASE", 10 ** 9)
    unbudgeted = find_claim_conflicts(texts)
    assert found == unbudgeted and list(found[0]) == list(unbudgeted[0])
    alone = find_claim_conflicts(small)
    for name, room in (("ALIGN", 8 * 28 + 275), ("PAIRS", 8 * 24 + 239)):  # the small buckets and not one more
        monkeypatch.setattr(claims_module, f"{name}_BASE", room)
        monkeypatch.setattr(claims_module, f"{name}_PER_CLAIM", 0)
        info = {}
        found = find_claim_conflicts(texts, info=info)
        assert found == alone and list(found[0]) == list(alone[0]) and _pairs(found[0]) == 8 * 6 * 2
        assert info == {"beyond_budget": 6}, (name, info)  # the six large buckets
        monkeypatch.setattr(claims_module, f"{name}_BASE", 10 ** 9)


def test_a_binding_join_budget_is_said_in_the_signals_and_the_status(monkeypatch):
    """The budgets skipping buckets is never silent: the signals say how many, and select() is not
    proven optimal (a skipped bucket may hold a conflict) and says why."""
    import ctxselect

    small, large = _shared_contexts(4, claims=16, per=2, seed=1), _shared_contexts(6, claims=24, per=4, seed=2)
    chunks = [{"id": f"c{k}", "source": "s", "tokens": 10, "relevance": 0.5, "text": t}
              for k, t in enumerate(small + large)]
    reqs = {"token_budget": 40, "min_coverage": 0}
    assert ctxselect.signals(ctxselect.pack(chunks, reqs)).capped == ()
    assert ctxselect.select(chunks, reqs, on_unresolved="keep_both").status == "optimal"
    monkeypatch.setattr(claims_module, "ALIGN_BASE", 8 * 28 + 275)  # the small buckets and not one more
    monkeypatch.setattr(claims_module, "ALIGN_PER_CLAIM", 0)
    said = "the claim join's budgets left 6 of its largest buckets uncompared (claims there make no conflict)"
    assert ctxselect.signals(ctxselect.pack(chunks, reqs)).capped == (said,)
    sel = ctxselect.select(chunks, reqs, on_unresolved="keep_both")  # (drop_both: every chunk conflicts)
    assert sel.status == "feasible", sel.status
    assert sel.status_reason == f"proven optimal, but not every pair was examined for contradictions; {said}"

"""Claim conflict detection of this tree against another checkout of ctxselect: identical outputs, and
an in-process A/B of its CPU time.

    git worktree add /tmp/claims-base df8c09b
    python benchmarks/claims_equal.py equal --base /tmp/claims-base
    python benchmarks/claims_equal.py speed --base /tmp/claims-base [--calls 11] [--seeds 3]
    python benchmarks/claims_equal.py phases --base /tmp/claims-base [--calls 11] [--seeds 3]

Both trees are imported into one process: the base's ``ctxselect`` modules are loaded first and
moved out of ``sys.modules``, then this tree's are loaded (each keeps its own globals and caches).

``equal`` compares ``find_claim_conflicts``' (conflicts, agreements) — keys, claims with every field
including ``start``, ``end`` and ``scope`` — on generated queries (n = 200, 2,000, 6,000, several
seeds) and on hostile texts (unicode, control characters, long texts, labels, years, percents,
scales, dates), and ``_scope_free_difference`` and ``ScopeReader.same`` on random pairs of similar
windows. ``speed`` times ``find_claim_conflicts`` on all texts at n = 2,000 and ``claim_pairs`` (only
the texts of the redundancy pairs) at n = 20,000, base and this tree alternating call by call, the
caches cleared before each call; medians of CPU time (``time.process_time``). ``phases`` times the
Python parts alone the same way: reading the claims, and the join with its scope test and ``settle``.
"""

from __future__ import annotations

import argparse
import dataclasses
import random
import statistics
import sys
import time
from pathlib import Path

HERE = str(Path(__file__).resolve().parent.parent)


def load(base: str):
    """(base modules, this tree's modules): ``name -> module`` for every ``ctxselect`` module."""
    names = ("ctxselect.text.claims", "ctxselect.text.claim_scope", "ctxselect.text.claim_keys",
             "ctxselect.packing", "ctxselect.features.contradictions.detect",
             "ctxselect.features.compute", "ctxselect.evaluate.generate")

    def imported():
        for name in names:
            __import__(name)
        return {k: v for k, v in sys.modules.items() if k == "ctxselect" or k.startswith("ctxselect.")}

    sys.path.insert(0, base)
    old = imported()
    for k in old:
        del sys.modules[k]
    sys.path.remove(base)
    sys.path.insert(0, HERE)
    new = imported()
    assert old["ctxselect"].__file__ != new["ctxselect"].__file__
    return old, new


def clear(mods) -> None:
    """Forget every per-text result of one tree."""
    for name in ("ctxselect.text.claims", "ctxselect.text.words"):
        for v in vars(mods[name]).values():
            if hasattr(v, "cache_clear"):
                v.cache_clear()
    mods["ctxselect.text.claim_scope"]._scope.cache_clear()


def generated(mods, n: int, seed: int):
    """(texts, titles, candidates, requirements) of one generated query."""
    query = mods["ctxselect.evaluate.generate"].generate_queries(queries=1, candidates=n, seed=seed,
                                                                 gold_share=min(0.15, 30 / n))[0]
    cands = query.candidates
    return [c.text for c in cands], mods["ctxselect.text.claims"].claim_titles(cands), cands, query.requirements


def _claim(c):
    """Every field of a claim as plain data (the two trees' Claim classes differ)."""
    return (type(c.value).__name__, c.value, c.raw, c.before, c.unit, c.kind, c.start, c.end,
            None if c.scope is None else dataclasses.astuple(c.scope))


def _plain(found):
    """(conflicts, agreements) as plain comparable data: every field of every claim, in order."""
    return [[(k, [(_claim(a), _claim(b)) for a, b in v]) for k, v in d.items()] for d in found]


def hostile_texts(rng: random.Random) -> list[str]:
    """Edge cases, and templated pairs that join (each with a near-copy)."""
    pieces = ["", " ", "\t\n  \r", "Σ", "İstanbul has 15 million people", "ΣΑΣ 3,559 άνθρωποι ζουν εδώ",
              "population ٣٤٥ people", "١٢٣ ٤٥٦ ٧٨٩", "🙂 5 🙂 10 emoji 😀 people", "\x00\x01 12 \x7f 13 \x1b",
              "part 2 of 5, No. 5, #3, issue #7, vol.3, Chapter II, War II", "In 2018 he scored 27 goals.",
              "45% of 120 users pay 5 dollars per month", "1.5 million people, 3 billion dollars, 7 thousand",
              "March 3, 2021 and 2021-03-03 and 3 March 2021 and Sept 4th, 1999", "1990s fy2023 Q3 v2.1",
              "12 at the start", "ends with 99", "1,234,567 and 1.234.567 and 1,5 and 3.5,1.2"]
    base = ("The {name} plan of the company costs {v} dollars per month for {k} users in {y}, as the annual "
            "report of the regional office stated in {m} {d}, {y}. {extra}")
    names = ["Basic", "Pro", "basic", "İnce", "Σοφία", "ÉCOLE", "u17", "Part", "the"]
    extras = ["He scored 27 goals.", "It was part 2.", "The outlet is licensed.", "", "Their team won 3 games.",
              "See table 4 and figure 5.", "Payments weekly.", "per user", "\u0663 items", "x" * 50]
    out = list(pieces)
    for _ in range(300):
        t = base.format(name=rng.choice(names), v=rng.choice(["5", "20", "5.5", "1,200", "٣"]), k=rng.randint(1, 40),
                        y=rng.choice([2018, 2019, 1999]), m=rng.choice(["March", "Sept", "dec"]), d=rng.randint(1, 31),
                        extra=rng.choice(extras))
        out.append(t)
        out.append(_edit(rng, t))
    long_text = " ".join(rng.choice(out[len(pieces):]) for _ in range(600))  # > 100 KB
    assert len(long_text) > 100_000
    out += [long_text, _edit(rng, long_text), "5 " * 3000, " ".join(str(k) for k in range(4000)),
            "value " * 20000 + " costs 7 dollars", rng.choice(pieces) * 400]
    return out


def _edit(rng: random.Random, text: str, edits: int = 3) -> str:
    """``text`` with a few random words or characters changed."""
    alphabet = "abcdefgh XYZ 0123456789.,-'Σİ٣\n#"
    for _ in range(rng.randint(0, edits)):
        if not text:
            break
        k = rng.randrange(len(text))
        choice = rng.random()
        if choice < 0.3:
            text = text[:k] + rng.choice(alphabet) + text[k + 1:]
        elif choice < 0.5:
            text = text[:k] + text[k + 1:]
        elif choice < 0.7:
            text = text[:k] + rng.choice(["word", "Name", "per", "part", "monthly", "2019", "ii", "the"]) + text[k:]
        else:
            text = text[:k] + rng.choice(alphabet) * rng.randint(1, 5) + text[k:]
    return text


def equal(old, new, seeds: int, sizes) -> str:
    """Every check (raises on the first difference); what was compared."""
    count = total = 0
    rng = random.Random(7)
    cases = []
    for n in sizes:
        for seed in range(seeds):
            texts, titles, _, _ = generated(new, n, 1000 + 31 * n + seed)
            cases.append((f"generated n={n} seed={seed}", texts, titles))
    hostile = hostile_texts(rng)
    cases.append(("hostile", hostile, None))
    cases.append(("hostile titled", hostile, [(rng.choice(["A", "B", None]), None) for _ in hostile]))
    shuffled = hostile[:]
    rng.shuffle(shuffled)
    cases.append(("hostile shuffled", shuffled, None))
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from claim_conflicts import HELD_OUT, templated_sets  # noqa: E402 - templated pages (benchmarks/)
    from tests.text.claim_texts import seeded_fact_text  # noqa: E402 - facts that join, noise, exotic points

    templated = [t for seed in range(3) for families in (None, HELD_OUT) for t in templated_sets(seed, families=families)]
    cases.append(("templated sets together", [x for _, texts, _, _ in templated for x in texts],
                  [x for _, _, titles, _ in templated for x in titles]))
    for seed in range(4):
        facts = random.Random(seed)
        cases.append((f"seeded facts {seed}", [seeded_fact_text(facts, facts.randint(1, 8)) for _ in range(400)], None))
    for name, texts, titles in cases:
        for buffered in (False, True):
            results = []
            for mods in (old, new):
                clear(mods)
                buffer = mods["ctxselect.packing"].text_buffer(texts) if buffered else None
                results.append(_plain(mods["ctxselect.text.claims"].find_claim_conflicts(texts, buffer=buffer,
                                                                                         titles=titles)))
            assert results[0] == results[1], f"{name} buffered={buffered}: outputs differ"
            count, total = count + 1, total + len(texts)
        print(f"equal: {name} ({len(results[1][0])} conflicting, {len(results[1][1])} agreeing pairs)", flush=True)
    for mods in (old, new):
        clear(mods)
    for text in hostile:  # every text's claims, with scopes
        a = old["ctxselect.text.claims"].scoped_claims(text, "T")
        b = new["ctxselect.text.claims"].scoped_claims(text, "T")
        assert list(map(_claim, a)) == list(map(_claim, b)), text[:80]
    windows = _windows(old, new, rng, hostile)
    return (f"{count} calls of find_claim_conflicts ({total:,} texts), scoped_claims of {len(hostile)} texts, "
            f"{windows:,} window checks")


def _windows(old, new, rng: random.Random, texts) -> int:
    """_scope_free_difference and ScopeReader.same on random pairs of similar windows."""
    so, sn = old["ctxselect.text.claim_scope"], new["ctxselect.text.claim_scope"]
    count = 0
    sources = [t for t in texts if t] + ["The Basic plan costs 5 dollars per month in 2019 for part 2. " * 6]
    for _ in range(40_000):
        text = rng.choice(sources)
        k = rng.randrange(len(text))
        a = text[max(0, k - rng.randint(0, 260)):k]
        b = _edit(rng, a, rng.choice([1, 2, 6]))
        assert so._scope_free_difference(a, b) == sn._scope_free_difference(a, b), (a, b)
        assert so._scope_free_difference(b, a) == sn._scope_free_difference(b, a), (b, a)
        count += 2
    vocabulary = ["the", "plan", "Basic", "Pro", "part", "ii", "II", "per", "month", "monthly", "2019", "v2", "Q3",
                  "u17", "x", "İnce", "Σοφία", "ΣΑΣ", "naïve", "o'neil", "long-term", "٣", "𝟘𝟙", "5", "1,200", "2.5",
                  "#3", "No.", "—", "\u00a0", "\t", "\n", "'", "-", "_", "²", "Ⅻ", "日本", "🙂", "a-", "-b"]
    seps = [" ", " ", " ", "", ", ", ". ", "\n", "  "]
    lower = ["the", "plan", "part", "ii", "per", "month", "monthly", "x", "a", "an", "each", "costs", "is", "day"]
    results = set()
    for window in range(60_000):  # windows of a small vocabulary: words of the middle recur in the margins
        words, between = (vocabulary, seps) if window % 3 else (lower, [" ", " ", " ", "  "])  # lower case: split
        a = "".join(rng.choice(words) + rng.choice(between) for _ in range(rng.randint(0, 40)))
        b = list(a.split(" "))
        for _ in range(rng.randint(1, 3)):
            k = rng.randrange(len(b) + 1)
            if rng.random() < 0.5 and b:
                b[min(k, len(b) - 1)] = rng.choice(words)
            else:
                b.insert(k, rng.choice(words))
        b = " ".join(b)
        for x, y in ((a, b), (b, a), (a[rng.randrange(len(a) + 1):], b)):
            found = so._scope_free_difference(x, y)
            assert found == sn._scope_free_difference(x, y), (x, y)
            results.add(found)
            count += 1
    assert results == {True, False}
    claims_old, claims_new = old["ctxselect.text.claims"], new["ctxselect.text.claims"]
    for _ in range(3_000):
        text = rng.choice(sources)
        pair = [text, _edit(rng, text, rng.choice([1, 3, 8]))]
        titles = rng.choice([None, [("A", None), ("A", "s")], [("A", None), ("B", None)]])
        found = []
        for s, c in ((so, claims_old), (sn, claims_new)):
            reader = s.ScopeReader(pair, titles)
            ca, cb = c.extract_claims(pair[0]), c.extract_claims(pair[1])
            found.append([reader.same(0, x, 1, y) for x in ca[:6] for y in cb[:6]]
                         + [reader.same(1, y, 0, x) for x in ca[:3] for y in cb[:3]])
        assert found[0] == found[1]
        count += 1
    print(f"equal: windows and ScopeReader.same: {count} checks", flush=True)
    return count


def speed(old, new, calls: int, seeds: int) -> None:
    """Print the A/B table."""
    print("| case | base ms | new ms | new / base |\n|---|---|---|---|")
    for n in (2_000, 20_000):
        for seed in range(seeds):
            texts, titles, cands, reqs = generated(new, n, 10_000 + 97 * n + seed)
            packed = new["ctxselect"].pack(cands, reqs)
            sig = new["ctxselect.features.compute"].signals(packed)
            red_i, red_j, buffer = sig.redundancy.i, sig.redundancy.j, packed.text_buffer
            times, outputs = {"base": [], "new": []}, {}
            for call in range(calls + 1):  # the first call of each loads and compiles: not counted
                for label, mods in (("base", old), ("new", new)) if call % 2 else (("new", new), ("base", old)):
                    clear(mods)
                    detect = mods["ctxselect.features.contradictions.detect"]
                    start = time.process_time()
                    if n <= 5_000:
                        found = mods["ctxselect.text.claims"].find_claim_conflicts(texts, buffer=buffer, titles=titles)
                    else:
                        found = detect.claim_pairs(texts, red_i, red_j, buffer=buffer, titles=titles)
                    if call:
                        times[label].append(time.process_time() - start)
                    else:
                        outputs[label] = _plain(found)
            assert outputs["base"] == outputs["new"], f"n={n} seed={seed}: outputs differ"
            b, m = statistics.median(times["base"]) * 1e3, statistics.median(times["new"]) * 1e3
            what = "find_claim_conflicts, all texts" if n <= 5_000 else f"claim_pairs, {len(red_i)} pairs"
            print(f"| n={n:,} seed {seed} ({what}) | {b:.2f} | {m:.2f} | {m / b:.2f} |", flush=True)


def phases(old, new, calls: int, seeds: int) -> None:
    """Print the A/B of the Python parts alone: reading the claims of the texts the prefilter keeps
    (``_claims_of``) and joining them (``_aligned_claims`` with the scope test, then ``settle``)."""
    import numpy as np

    print("| case | read: base ms | new ms | ratio | join + settle: base ms | new ms | ratio |\n|---|---|---|---|---|---|---|")
    for n in (2_000, 20_000):
        for seed in range(seeds):
            texts, titles, cands, reqs = generated(new, n, 10_000 + 97 * n + seed)
            packed = new["ctxselect"].pack(cands, reqs)
            buffer = packed.text_buffer
            if n > 5_000:  # as claim_pairs: the texts of the redundancy pairs
                sig = new["ctxselect.features.compute"].signals(packed)
                members = np.unique(np.concatenate([sig.redundancy.i, sig.redundancy.j])).tolist()
                texts, titles = [texts[k] for k in members], [titles[k] for k in members]
                buffer = new["ctxselect.packing"].text_buffer(texts)
            keys, claims = new["ctxselect.text.claim_keys"], new["ctxselect.text.claims"]
            read = keys.texts_to_read(texts, buffer, 4, claims.MAX_CLAIM_CHARS, claims.extract_claims)
            hints = keys.claim_hints(buffer, read, claims.MAX_CLAIM_CHARS, claims.MAX_CLAIM_CHARS + 120)
            rows = [k for k in range(len(texts)) if texts[k] and (read is None or read[k])]
            cut = [texts[k][:claims.MAX_CLAIM_CHARS + 120] for k in rows]
            times = {(label, part): [] for label in ("base", "new") for part in ("read", "join")}
            for call in range(calls + 1):
                for label, mods in (("base", old), ("new", new)) if call % 2 else (("new", new), ("base", old)):
                    clear(mods)
                    module = mods["ctxselect.text.claims"]
                    start = time.process_time()
                    found = [list(module._claims_of(t, hints.get(k))) for k, t in zip(rows, cut)]
                    middle = time.process_time()
                    per_text = [[] for _ in texts]
                    for k, c in zip(rows, found):
                        per_text[k] = c
                    between = time.process_time()
                    scopes = module.scope_reader(texts, titles)
                    module.settle(module._aligned_claims(per_text, 90.0, 4, scopes), scopes)
                    if call:
                        times[label, "read"].append(middle - start)
                        times[label, "join"].append(time.process_time() - between)
            med = {key: statistics.median(v) * 1e3 for key, v in times.items()}
            print(f"| n={n:,} seed {seed} ({len(rows)} texts read) | {med['base', 'read']:.2f} | {med['new', 'read']:.2f} | "
                  f"{med['new', 'read'] / med['base', 'read']:.2f} | {med['base', 'join']:.2f} | {med['new', 'join']:.2f} | "
                  f"{med['new', 'join'] / med['base', 'join']:.2f} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["equal", "speed", "phases"])
    parser.add_argument("--base", required=True, help="a checkout of the base tree")
    parser.add_argument("--calls", type=int, default=11)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    old, new = load(args.base)
    if args.mode == "equal":
        print(f"equal: identical outputs in {equal(old, new, args.seeds, (200, 2_000, 6_000))}")
    elif args.mode == "speed":
        speed(old, new, args.calls, args.seeds)
    else:
        phases(old, new, args.calls, args.seeds)


if __name__ == "__main__":
    main()

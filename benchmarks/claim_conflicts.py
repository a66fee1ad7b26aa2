"""Free-text claim conflicts: planted falsehoods on generated dumps, what the detector flags on
real dumps and on templated documents, and how many of the flags are contradictions.

    python benchmarks/claim_conflicts.py planted [--queries 200]
    python benchmarks/claim_conflicts.py real PATH.jsonl [PATH.jsonl ...] [--sample 20]
    python benchmarks/claim_conflicts.py real-planted PATH.jsonl [PATH.jsonl ...]
    python benchmarks/claim_conflicts.py templated [--sample 20]
    python benchmarks/claim_conflicts.py precision PATH.jsonl [PATH.jsonl ...] [--list]

``precision`` looks every flag up in the hand labels of benchmarks/claim_flag_labels.py (flags on
the shared dumps and on the templated documents, before and after claims had scopes) and reports
true contradictions / flags; ``--list`` prints every flag with its label, or "UNLABELLED".
"""

from __future__ import annotations

import argparse
import inspect
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import ctxselect  # noqa: E402
from ctxselect.text.claims import find_claim_conflicts  # noqa: E402
from ctxselect.evaluate.generate import generate_queries  # noqa: E402

try:  # the labels sit beside this script (benchmarks/ is no package)
    from claim_flag_labels import LABELS  # noqa: E402
except ImportError:  # pragma: no cover - run from elsewhere
    LABELS = {}
# run against a tree from before claims had scopes too: titles are passed only where taken
_TITLED = "titles" in inspect.signature(find_claim_conflicts).parameters


def _conflicts(texts, titles):
    return find_claim_conflicts(texts, **({"titles": titles} if _TITLED else {}))[0]


def _titles(candidates):
    return [(c.extra.get("title"), c.extra.get("section")) for c in candidates]


def planted(queries: int, seed: int) -> None:
    dump = generate_queries(queries=queries, candidates=40, planted_rate=1.0, planted_majority_rate=0.0,
                            planted_favour_false=0.5, seed=seed)
    detected = 0
    for q in dump:  # the detector itself: is the false chunk flagged against a true one?
        plant, ids = q.extra["meta"]["planted"], [c.id for c in q.candidates]
        flagged = {(ids[i], ids[j]) for i, j in _conflicts([c.text for c in q.candidates], _titles(q.candidates))}
        detected += any((a, b) in flagged or (b, a) in flagged for a in plant["false"] for b in plant["true"])
    print(f"planted false chunk flagged against a true one: {detected}/{len(dump)} ({detected / len(dump):.1%})")
    print()
    runs = {"greedy (plain, as assemblers do today)": dict(method="greedy", resolve_by_corroboration=False),
            "greedy (with ctxselect's corroboration)": dict(method="greedy"),
            "optimal (default)": dict(method="optimal")}
    print("| selector | queries with a planted false chunk selected | with a true chunk selected |")
    print("|---|---|---|")
    for name, options in runs.items():
        false = true = 0
        for q in dump:
            plant = q.extra["meta"]["planted"]
            ids = set(ctxselect.select(q.candidates, q.requirements, q.query, **options).ids)
            false += bool(ids & set(plant["false"]))
            true += bool(ids & set(plant["true"]))
        print(f"| {name} | {false}/{len(dump)} ({false / len(dump):.1%}) | {true}/{len(dump)} |")


def real(paths: list[Path], sample: int, seed: int) -> None:
    flagged = []
    print("| dump | queries | candidate pairs | flagged pairs | share |")
    print("|---|---|---|---|---|")
    for path in paths:
        pairs = hits = queries = 0
        for q in ctxselect.read_dump(path):
            queries += 1
            n = len(q.candidates)
            pairs += n * (n - 1) // 2
            conflicts = _conflicts([c.text for c in q.candidates], _titles(q.candidates))
            hits += len(conflicts)
            for (i, j), claims in conflicts.items():
                flagged.append((path.stem, q.candidates[i], q.candidates[j], claims))
        print(f"| {path.stem} | {queries} | {pairs:,} | {hits} | {hits / max(pairs, 1):.3%} |")
    random.Random(seed).shuffle(flagged)
    print()
    for name, a, b, claims in flagged[:sample]:
        ca, cb = claims[0]
        print(f"- {name}: `{a.id}` {ca.raw!r} vs `{b.id}` {cb.raw!r} — context: '{ca.before}' / '{cb.before}'")


def real_planted(paths: list[Path], seed: int) -> None:
    """Plant misinformation into real dumps: for each labelled query, copy a gold chunk that states a
    number, multiply one number by 2–4, give the copy the original's relevance (+0.01) and its own
    document, and count the queries whose selection includes the copy."""
    import dataclasses
    import re


    options = ("keep_both", "drop_both", "keep_stronger")
    print("| dump | planted queries | copy flagged against the original | plain greedy: copy selected | "
          + " | ".join(f"{o}: copy / original / both / told" for o in options) + " |")
    print("|---|---|---|---|" + "---|" * len(options))
    for path in paths:
        rng = random.Random(seed)
        planted = greedy_bad = flagged = 0
        counts = {o: [0, 0, 0, 0] for o in options}  # copy selected, original selected, both, listed as unresolved
        for q in ctxselect.read_dump(path):
            gold = [c for c in q.candidates if q.gold_sets and c.id in set().union(*q.gold_sets)]
            source = next((c for c in gold if re.search(r"\b\d[\d,]*\b", c.text)), None)
            if source is None:
                continue
            numbers = [m for m in re.finditer(r"\b\d[\d,]*\b", source.text)]
            m = numbers[rng.randrange(len(numbers))]
            value = int(m.group(0).replace(",", "")) if m.group(0).replace(",", "").isdigit() else 1
            edited = source.text[:m.start()] + f"{value * rng.randint(2, 4):,}" + source.text[m.end():]
            copy = dataclasses.replace(source, id=source.id + "#planted", text=edited,
                                       relevance=min(1.0, source.relevance + 0.01), doc_id=source.id + "#planted")
            cands = list(q.candidates) + [copy]
            planted += 1
            found = _conflicts([source.text, copy.text], _titles([source, copy]))
            flagged += bool(found)
            for option in options:
                sel = ctxselect.select(cands, q.requirements, q.query, on_unresolved=option)
                ids = set(sel.ids)
                told = any({source.id, copy.id} == set(u["ids"]) for u in sel.unresolved)
                for k, hit in enumerate((copy.id in ids, source.id in ids, {copy.id, source.id} <= ids, told)):
                    counts[option][k] += hit
            plain = set(ctxselect.select(cands, q.requirements, q.query, "greedy", resolve_by_corroboration=False).ids)
            greedy_bad += copy.id in plain
        share = lambda k: f"{k / max(planted, 1):.1%}"  # noqa: E731
        print(f"| {path.stem} | {planted} | {share(flagged)} | {share(greedy_bad)} | "
              + " | ".join(" / ".join(share(k) for k in counts[o]) for o in options) + " |")


# --- templated documents: one template, several subjects (and, sometimes, a second version of one) ---

def _family(names, template, measures, title=None, years=None):
    """A family of templated pages: ``template`` filled per subject; ``measures`` name the slots a
    second version may change (never a subject, a year or a label)."""
    return dict(names=names, template=template, measures=measures, title=title, years=years)


FAMILIES = {
    "pricing tiers": _family(["Basic", "Starter", "Pro", "Team", "Business", "Enterprise"],
                             "Pricing. The {s} plan costs {cost} dollars per month for the whole team, and it includes "
                             "{users} users with {gb} GB of cloud storage.", {"cost": (5, 90), "users": (1, 50),
                                                                             "gb": (10, 500)}, title="{s} plan"),
    "goals by year": _family(None, "During the league campaign the club striker {player} scored {goals} goals in {s}.",
                             {"goals": (5, 40)}, years=(2012, 2024)),
    "numbered notes": _family(None, "This is the {tag} note number {s} on topic {s}: the team reviewed {tickets} open "
                              "tickets this week.", {"tickets": (2, 30)}),
    "regional policies": _family(["EU", "US", "UK", "Canada", "Japan", "Brazil"],
                                 "Refund policy for {s}: customers in {s} may return any item within {days} days of "
                                 "delivery for a full refund.", {"days": (14, 60)}, title="Refund policy ({s})"),
    "API versions": _family(["v1", "v2", "v3", "v4"], "REST API {s} reference. The rate limit for authenticated "
                            "clients is {rate} requests per minute for each token.", {"rate": (60, 1000)}),
    "product specs": _family(["Aero", "Nimbus", "Vector", "Halo", "Orbit"], "Product sheet: the {s} laptop ships with "
                             "{ram} GB of memory and a battery rated for {hours} hours of mixed use.",
                             {"ram": (8, 64), "hours": (6, 18)}, title="{s} laptop"),
    "town census": _family(["Ashford", "Brookfield", "Clayton", "Dunmore", "Elmwood", "Fairview"],
                           "{s} is a town in {county} County, in the north of the state. The population was {pop} at "
                           "the 2010 census.", {"pop": (300, 9000)}),
    "radio stations": _family(["WKXA", "WNOK", "WXBT", "WWDM", "WSPA"], "{s} is a radio station in the Midlands. "
                              "The outlet is licensed by the Federal Communications Commission (FCC) to broadcast at "
                              "{freq} MHz with an ERP of {kw} kW.", {"kw": (5, 100)}, title="{s}"),
    "quarterly revenue": _family(["Q1", "Q2", "Q3", "Q4"], "Earnings release. The company reported total revenue of "
                                 "{rev} million dollars for {s} {year}, the finance team said.", {"rev": (100, 900)}),
}
#: Families written after the scope rules were set and run once, as they came out (docs/conflicts.md).
HELD_OUT = {
    "hotel rates": _family(["Grand", "Riviera", "Alpine", "Harbour"], "Stay at the {s} Hotel: a double room costs "
                           "{price} euros per night in high season, with breakfast included.", {"price": (80, 400)}),
    "election seats": _family(None, "At the {s} general election the Labour party won {seats} seats in the national "
                              "parliament.", {"seats": (150, 420)}, years=(1990, 2020)),
    "squads": _family(["U17", "U19", "U21", "U23"], "Tournament squads. The {s} squad for the summer tournament lists "
                      "{players} players and {coaches} coaches.", {"players": (18, 30), "coaches": (3, 9)}),
    "rainfall": _family(["January", "April", "July", "October"], "Weather summary: in {s} the city recorded {mm} "
                        "millimetres of rain, well above the long-term average.", {"mm": (20, 300)}),
    "salaries": _family(["nurse", "teacher", "engineer", "pharmacist"], "Salary survey. A senior {s} in the capital "
                        "earns about {k} thousand dollars a year before tax.", {"k": (40, 160)}),
    "flights": _family(["TP201", "TP203", "TP207", "TP211"], "Flight {s} from Lisbon to Boston departs at gate 14 "
                       "and takes {hours} hours.", {"hours": (6, 9)}),
}
_EXTRA = {"player": ["Marco Silva", "Jonas Berg", "Ayo Okafor"], "tag": ["alpha", "beta", "gamma"],
          "county": ["Merrimack", "Hardin", "Dodge"], "year": [2019, 2021, 2023]}
#: How a second version of a page is written: the same text with one figure changed, or with a
#: sentence added before or after it.
VARIANTS = ["", "This page was last reviewed by the documentation team. ", " Figures may change without notice."]


def templated_sets(seed: int = 0, per_family: int = 4, version_rate: float = 0.6, families=None):
    """[(set name, texts, titles, subjects)]: each set is one family's pages for 3-4 subjects, titled
    in half of the sets when the family has titles, and (with ``version_rate``) a second version of
    one page with one measured figure changed — the only pairs about the same thing. ``families``:
    :data:`FAMILIES` by default, or :data:`HELD_OUT`."""
    rng = random.Random(seed)
    out = []
    for name, fam in (FAMILIES if families is None else families).items():
        for k in range(per_family):
            if fam["years"]:
                subjects = [str(y) for y in rng.sample(range(*fam["years"]), 3)]
            elif fam["names"]:
                subjects = rng.sample(fam["names"], min(len(fam["names"]), rng.randint(3, 4)))
            else:
                subjects = [str(s) for s in range(3)]
            shared = {key: rng.choice(values) for key, values in _EXTRA.items()}
            titled = fam["title"] is not None and k % 2 == 0
            fills = []
            for s in subjects:
                fill = dict(shared, s=s, freq=f"{rng.randint(88, 107)}.{rng.randint(1, 9)}")
                fill.update({m: rng.randint(*span) for m, span in fam["measures"].items()})
                fills.append(fill)
            texts = [fam["template"].format(**f) for f in fills]
            titles = [fam["title"].format(**f) if titled else None for f in fills]
            if rng.random() < version_rate:
                m = rng.randrange(len(fills))
                fill = dict(fills[m])
                slot = rng.choice(sorted(fam["measures"]))
                fill[slot] = fill[slot] * rng.randint(2, 4) + 1
                fill[slot] += 1000 if 1500 <= fill[slot] <= 2099 else 0  # a bare year is no claim
                variant = VARIANTS[len(out) % len(VARIANTS)]
                text = fam["template"].format(**fill)
                texts.append(variant + text if variant.endswith(" ") else text + variant)
                titles.append(titles[m])
                subjects = subjects + [subjects[m]]
            out.append((f"{name} {k}", texts, titles, subjects))
    return out


def _templated_flags(families=None):
    """(set name, i, j, claims, texts, subjects) of every flagged pair of the templated sets."""
    for name, texts, titles, subjects in templated_sets(families=families):
        for (i, j), claims in sorted(_conflicts(texts, titles).items()):
            yield name, i, j, claims, texts, subjects


def templated(sample: int) -> None:
    print("| families | sets | flagged pairs | about the same subject | second versions flagged |")
    print("|---|---|---|---|---|")
    shown = []
    for label, families in (("development", FAMILIES), ("held out", HELD_OUT)):
        flags = list(_templated_flags(families))
        sets = templated_sets(families=families)
        versions = sum(len(set(s)) < len(s) for _, _, _, s in sets)
        caught = sum(subjects[i] == subjects[j] for _, i, j, _, _, subjects in flags)
        print(f"| {label} ({len(families)}) | {len(sets)} | {len(flags)} | {caught} | {caught}/{versions} |")
        shown += flags
    print()
    for name, i, j, claims, texts, _ in shown[:sample]:
        ca, cb = claims[0]
        print(f"- {name} {i}-{j}: {ca.raw!r} vs {cb.raw!r} — {texts[i]!r} / {texts[j]!r}")


def _real_flags(paths):
    for path in paths:
        for q in ctxselect.read_dump(path):
            for (i, j), claims in sorted(_conflicts([c.text for c in q.candidates], _titles(q.candidates)).items()):
                yield path.stem, q.candidates[i], q.candidates[j], claims


def _count(rows: dict, row_name: str, key: str, claims, show: bool, detail: str) -> None:
    """Count one flag under ``row_name`` by its hand label ``LABELS[key]`` (and print it)."""
    label = LABELS.get(key)
    row = rows.setdefault(row_name, [0, 0, 0])
    row[0] += 1
    row[1] += bool(label and label[0])
    row[2] += label is None
    if show:
        ca, cb = claims[0]
        print(f"{'UNLABELLED' if label is None else ('true ' if label[0] else 'false')} {key}: "
              f"{ca.raw!r} vs {cb.raw!r}{detail or (' — ' + label[1] if label else '')}")


def precision(paths: list[Path], show: bool) -> None:
    rows: dict[str, list[int]] = {p.stem: [0, 0, 0] for p in paths}  # source -> [flags, true, unlabelled]
    for name, a, b, claims in _real_flags(paths):
        _count(rows, name, f"{a.id} | {b.id}", claims, show, "")
    for name, i, j, claims, texts, _subjects, group in [(*f, "development") for f in _templated_flags()] + [
            (*f, "held out") for f in _templated_flags(HELD_OUT)]:
        _count(rows, f"templated documents, {group}", f"{name}: {i}-{j}", claims, show,
               f" — {texts[i]!r} / {texts[j]!r}")
    print("| flags on | flagged pairs | true contradictions | precision | unlabelled |")
    print("|---|---|---|---|---|")
    total = [0, 0, 0]
    for name, (flags, true, unlabelled) in rows.items():
        total = [t + v for t, v in zip(total, (flags, true, unlabelled))]
        print(f"| {name} | {flags} | {true} | {f'{true / flags:.1%}' if flags else '–'} | {unlabelled} |")
    print(f"| all | {total[0]} | {total[1]} | {total[1] / max(total[0], 1):.1%} | {total[2]} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["planted", "real", "real-planted", "templated", "precision"])
    parser.add_argument("paths", nargs="*", type=Path)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--list", action="store_true", help="precision: print every flag with its label")
    args = parser.parse_args()
    if args.mode == "planted":
        planted(args.queries, args.seed)
    elif args.mode == "real-planted":
        real_planted(args.paths, args.seed)
    elif args.mode == "templated":
        templated(args.sample)
    elif args.mode == "precision":
        precision(args.paths, args.list)
    else:
        real(args.paths, args.sample, args.seed)


if __name__ == "__main__":
    main()

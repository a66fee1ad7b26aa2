"""A claim is about something (issue 14, item 1): claims conflict only when their subject and scope
match. Templated pages about different things (plans, years, notes, towns, stations) never conflict;
the same page with one value changed still does."""

import random

import pytest

import ctxselect
from ctxselect.errors import InputError
from ctxselect.evaluate.generate import generate_queries
from ctxselect.text import claim_scope as scope_module
from ctxselect.text.claim_scope import ClaimScope, claim_scope, document_key
from ctxselect.text.claims import claim_titles, extract_claims, find_claim_conflicts, scoped_claims
from tests.naive.claims import naive_find_claim_conflicts

TIERS = [("Basic", 10, 5), ("Pro", 25, 20), ("Enterprise", 60, 100)]


def tier_page(plan, cost, users):
    return f"The {plan} plan costs {cost} dollars per month and includes {users} users."


def pairs(texts, **options):
    conflicts, _ = find_claim_conflicts(texts, **options)
    return sorted(conflicts)


def test_templated_pricing_tiers_do_not_conflict():
    pages = [tier_page(*tier) for tier in TIERS]
    assert pairs(pages) == [] and pairs(pages, titles=[f"{p} plan" for p, _, _ in TIERS]) == []
    longer = [f"Pricing. The {p} plan costs {c} dollars per month for the whole team, and it includes {u} users."
              for p, c, u in TIERS]
    assert pairs(longer) == []
    # the same plan stated twice with different figures still conflicts, and only that pair
    edited = pages + [tier_page("Pro", 25, 50)]
    assert pairs(edited) == [(1, 3)]
    assert pairs(longer + [longer[1].replace("25 dollars", "35 dollars")]) == [(1, 3)]


def test_templated_tiers_are_all_selected():
    cands = [dict(id=p.lower(), source="pricing", relevance=0.8, text=tier_page(p, c, u)) for p, c, u in TIERS]
    chosen = ctxselect.select(cands, {"token_budget": 500}, "Compare the Basic, Pro and Enterprise plans")
    assert sorted(chosen.ids) == ["basic", "enterprise", "pro"]


def test_goals_in_different_years_do_not_conflict():
    texts = [f"During the league campaign the club striker scored {n} goals in {y}." for n, y in
             [(27, 2018), (31, 2019), (12, 2020)]]
    assert pairs(texts) == []
    assert pairs(texts + [texts[1].replace("31", "35")]) == [(1, 3)]
    carried = [f"In {y} the club had a long season. During the league campaign the club striker scored {n} goals."
               for n, y in [(27, 2018), (31, 2019)]]
    assert pairs(carried) == []  # the year of the sentence before carries over
    assert pairs([carried[0], carried[0].replace("27", "29")]) == [(0, 1)]


def test_numbered_notes_on_numbered_topics_do_not_conflict():
    notes = [f"This is the alpha note number {k} on topic {k}." for k in range(3)]
    assert pairs(notes) == []
    assert extract_claims(notes[1]) == []  # "number 1", "topic 1" name the note: they are no claims
    reviewed = [f"alpha note number {k} on topic {k}: the team reviewed {n} open tickets this week"
                for k, n in [(0, 9), (1, 12), (2, 30)]]
    assert pairs(reviewed) == []
    assert pairs(reviewed + [reviewed[2].replace("30 open", "31 open")]) == [(2, 3)]
    for label in ("part 2", "Volume 1", "No. 5", "#5", "chapter 3", "version 2.1", "episode 10"):
        assert extract_claims(f"the storm outage report {label} of the district") == [], label
    assert [c.value for c in extract_claims("the storm outage in district 5 affected 3,559 people")] == [3559.0]


def test_real_templates_about_different_things_do_not_conflict():
    """The shapes docs/conflicts.md's sample of flags was made of (written out, not read from a dump)."""
    stations = [f"The iHeartMedia, Inc. outlet is licensed by the Federal Communications Commission (FCC) to "
                f"broadcast at {f} MHz with an ERP of 90 kW." for f in ("104.7", "100.1")]
    assert pairs(stations) == [(0, 1)]  # nothing in the text tells the stations apart ...
    assert pairs(stations, titles=["WNOK", "WXBT"]) == []  # ... their titles do
    assert pairs(stations, titles=["WNOK", "WNOK"]) == [(0, 1)]
    assert pairs(stations, titles=["WNOK", None]) == [(0, 1)]  # an unknown title is no difference
    towns = [f"{t} is a town in Merrimack County, New Hampshire, United States. The population was {p} at the "
             "2010 census." for t, p in [("Pembroke", "7,115"), ("Hill", "1,089")]]
    assert pairs(towns) == []  # the subject of the sentence before
    lines = ["- North American Bridge Championships ( 9 )", "- North American Bridge Championships ( 5 )"]
    assert pairs(lines, titles=[("Irina Levitina", "Wins"), ("Irina Levitina", "Runners-up")]) == []
    assert pairs(lines, titles=[("Irina Levitina", "Wins"), ("Irina Levitina", "Wins")]) == [(0, 1)]
    orders = [f"- Commander {k} Class of the Order of the Sword ( {d} )" for k, d in
              [("1st", "19 January 1909"), ("2nd", "30 November 1907")]]
    assert pairs(orders) == []
    volumes = [f"- Simon Hoggarts Pick of The News Quiz : Volume {k} ( {d} )" for k, d in
               [(1, "6 Nov 2000"), (2, "23 Sep 2002")]]
    assert pairs(volumes) == []
    fees = ["the standard membership fee for adult members is 17 dollars per month",
            "the standard membership fee for adult members is 187 dollars per year"]
    assert pairs(fees) == [] and pairs([fees[0], fees[0].replace("17", "19")]) == [(0, 1)]


def test_agreements_are_scoped_too():
    texts = [tier_page("Basic", 10, 5), tier_page("Pro", 25, 5), tier_page("Basic", 10, 5)]
    _, agreements = find_claim_conflicts(texts)
    assert sorted(agreements) == [(0, 2)]


def test_scopes_match_unless_each_side_states_something_the_other_does_not():
    a = ClaimScope(subject=frozenset({"springfield"}), time=frozenset({"2018"}))
    assert a.matches(ClaimScope())  # unknown parts match
    assert a.matches(ClaimScope(subject=frozenset({"springfield", "illinois"})))  # more specific
    assert ClaimScope(time=frozenset({"2019"})).differences(a) == ["time"]
    assert ClaimScope(document=("x",)).differences(ClaimScope(document=("y",))) == ["document"]
    assert ClaimScope(document=("x", "wins")).matches(ClaimScope(document=("x", "")))
    assert document_key(("Carl August Ehrensvärd ( 1858–1944 )", None)) == ("carl august ehrensvärd 1858 1944", "")
    text = "Earnings release. In Q3 2021 the Basic plan of Part II cost 10 dollars a month, 2nd in the list."
    scope = claim_scope(text, next(c for c in extract_claims(text) if c.value == 10.0), "Plans")
    assert scope == ClaimScope(("plans",), frozenset({"basic"}), frozenset({"q3", "2021"}),
                               frozenset({"part ii", "2."}), frozenset({"month"}))


def test_found_claims_carry_their_scope_and_titles_are_checked():
    texts = [tier_page("Pro", 25, 20), tier_page("Pro", 25, 50)]
    conflicts, _ = find_claim_conflicts(texts, titles=["Pro plan", "Pro plan"])
    (ca, cb), = conflicts[(0, 1)]
    assert ca.scope.subject == {"pro"} and ca.scope.document == ("pro plan",) and cb.scope.matches(ca.scope)
    assert all(c.scope is not None for c in scoped_claims(texts[0])) and extract_claims(texts[0])[0].scope is None
    with pytest.raises(InputError, match="titles") as err:
        find_claim_conflicts(texts, titles=["Pro plan"])
    assert "\n" not in str(err.value)
    cands = [ctxselect.Candidate.from_dict(dict(id="a", source="s", relevance=0.5, text="x", title="T",
                                                section="S")),
             ctxselect.Candidate.from_dict(dict(id="b", source="s", relevance=0.5, text="y"))]
    assert list(claim_titles(cands)) == [("T", "S"), (None, None)]


def test_scopes_are_read_only_for_joined_claims_that_need_them(monkeypatch):
    texts = [c.text for c in generate_queries(queries=1, candidates=2000, seed=2)[0].candidates]
    texts += [tier_page(*tier) for tier in TIERS]
    read = []
    real = scope_module.claim_scope
    monkeypatch.setattr(scope_module, "claim_scope", lambda text, c, title=None: read.append(c) or real(text, c, title))
    conflicts, agreements = find_claim_conflicts(texts)
    assert not any(i >= 2000 for i, _ in conflicts)  # the tiers' scopes were read: they differ
    agreeing = sum(len(v) for v in agreements.values())
    assert agreeing > 20 and 3 <= len(read) < agreeing / 4  # copies of a chunk agree without reading scopes


def test_titles_change_nothing_of_the_prefilter():
    rng = random.Random(5)
    for _ in range(30):
        texts = [tier_page(rng.choice(["Pro", "Basic"]), rng.choice([10, 25]), rng.choice([5, 20])) for _ in range(6)]
        titles = [rng.choice(["Pro plan", "Basic plan", None, ("Plans", "Pro")]) for _ in texts]
        assert find_claim_conflicts(texts, titles=titles) == naive_find_claim_conflicts(texts, titles=titles)


def test_subjects_carried_from_the_sentence_before():
    stations = [f"{call} is a radio station in the Midlands. The outlet is licensed by the Federal Communications "
                f"Commission (FCC) to broadcast at {f} MHz with an ERP of 20 kW." for call, f in
                [("WXBT", "106.2"), ("WWDM", "105.5")]]
    assert pairs(stations) == []  # "The outlet" is the station named the sentence before
    assert pairs([stations[0], stations[0].replace("106.2", "101.1")]) == [(0, 1)]
    seasons = ["Gasly recorded four more points finishes during the season, including a 7th-place finish in Monaco. "
               "He ended the season in 15th place in the championship with 29 points.",
               "Gasly qualified in 7th place in Brazil. He finished the season in 7th place in the championship "
               "with 95 points."]
    assert pairs(seasons) == []  # the sentence's own ordinal (15th, 7th), not one carried from before


def test_months_and_coded_names_are_scope():
    rain = [f"Weather summary: in {m} the city recorded {mm} millimetres of rain, well above the average."
            for m, mm in [("January", 62), ("July", 21)]]
    assert pairs(rain) == [] and pairs([rain[1], rain[1].replace("21", "25")]) == [(0, 1)]
    squads = [f"Tournament squads. The {s} squad for the summer tournament lists {n} players and 5 coaches."
              for s, n in [("U17", 21), ("U21", 27)]]
    assert pairs(squads) == []
    quarters = [f"Earnings release. The company reported total revenue of {r} million dollars for {q} 2023."
                for q, r in [("Q1", 172), ("Q3", 646)]]
    assert pairs(quarters) == []
    versions = [f"REST API {v} reference. The rate limit for authenticated clients is {r} requests per minute."
                for v, r in [("v1", 100), ("v2", 600)]]
    assert pairs(versions) == [] and pairs([versions[0], versions[0].replace("100", "150")]) == [(0, 1)]


def test_copies_agree_without_reading_scopes_only_when_their_scopes_match(monkeypatch):
    """The join's shortcut (two windows that differ only in lower-case words without scope) never
    lets through a pair whose scopes differ: checked on every pair it passes, on generated copies
    and on templated pages with words changed."""
    rng = random.Random(7)
    texts = [c.text for c in generate_queries(queries=1, candidates=1000, seed=4)[0].candidates]
    for _ in range(60):
        page = rng.choice([tier_page(rng.choice(["Basic", "Pro"]), 10, rng.choice([5, 5, 20])),
                           "In 2018 the club striker scored 27 goals for the first team in the league campaign.",
                           "The outlet WXBT is licensed by the FCC to broadcast at 104.7 MHz with 20 kW per hour."])
        words = page.split()
        k = rng.randrange(len(words))
        words[k] = rng.choice(["new", "Old", "2019", "part", "month", "v2", "the", words[k].lower()])
        texts.append(" ".join(words))
    passed = []
    shortcut = scope_module._scope_free_difference
    monkeypatch.setattr(scope_module, "_scope_free_difference",
                        lambda a, b: shortcut(a, b) and not passed.append((a, b)))
    reader = scope_module.ScopeReader(texts)
    checked = 0
    for (i, j), found in find_claim_conflicts(texts)[1].items():
        for ca, cb in found:
            checked += 1
            assert reader.same(i, ca, j, cb) == reader.scope(i, ca).matches(reader.scope(j, cb)), (texts[i], texts[j])
    assert checked > 20 and passed


def test_scope_free_difference_equals_its_twin_on_random_windows():
    """The common start and end found by rapidfuzz, and only the words between the margins' spaces
    read, against the character-by-character twin, on random windows and edits of them (case, digits,
    non-ASCII)."""
    import random

    from ctxselect.text.claim_scope import _scope_free_difference
    from tests.naive.claims import naive_scope_free_difference

    rng = random.Random(5)
    alphabet = ["a", "b", " ", "c", "D", "1", "2", ".", "é", "Part", " per ", "x", "\n"]
    outcomes = set()
    for _ in range(4000):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        b = list(a)
        for _ in range(rng.randint(0, 3)):
            k = rng.randint(0, len(b))
            if rng.random() < 0.5:
                b.insert(k, rng.choice(alphabet))
            elif b:
                b[min(k, len(b) - 1)] = rng.choice(alphabet)
        b = "".join(b) if rng.random() < 0.85 else "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60)))
        got = _scope_free_difference(a, b)
        assert got == naive_scope_free_difference(a, b), (a, b)
        outcomes.add(got)
    assert outcomes == {True, False}
    assert _scope_free_difference("", "") and _scope_free_difference("same 3", "same 3")


def test_lower_words_is_the_string_methods_test():
    """_LOWER_WORDS (one regular expression) accepts exactly what isascii, isalpha without spaces and
    islower accept together: ASCII lower-case letters and spaces, at least one letter."""
    import random

    from ctxselect.text.claim_scope import _LOWER_WORDS

    def methods(s: str) -> bool:
        return s.isascii() and s.replace(" ", "").isalpha() and s.islower()

    rng = random.Random(11)
    alphabet = ["a", "z", " ", "  ", "A", "Z", "1", "-", "'", "\n", "\t", "é", "ß", "ǅ", "ſ", "K", "\u212a", "_", "ª"]
    cases = ["", " ", "  ", "a", " a", "a ", "A", "aB", "ab cd", "ab\ncd", "\u00aa", "ab1"]
    cases += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(20000)]
    outcomes = set()
    for s in cases:
        assert bool(_LOWER_WORDS(s)) == methods(s), repr(s)
        outcomes.add(methods(s))
    assert outcomes == {True, False}


def test_label_word_before_a_number_with_and_without_a_space():
    """_word_before reads the word after a space in C and falls back to its character walk: both
    read the same label words ("part 2", "vol.3", "issue #5"), long words and non-letters included."""
    from ctxselect.text.claim_scope import _label_before

    cases = {"part 2": "part", "the Part 2": "part", "vol.3": "volume", "issue #5": "issue", "#5": "number",
             "x-part 2": "", "o'part 2": "", "participants 2": "", "participant 2": "participant", "2part 2": "",
             "a\tpart 2": "part", "Ⅻpart 2": "", "a extraordinarily 2": "", "part  2": "part", "part   2": "",
             "\u212aBLOCK 2": "", "bloc\u212a 2": "block", "İssue 2": ""}
    for text, label in cases.items():
        assert _label_before(text, len(text) - 1) == label, text

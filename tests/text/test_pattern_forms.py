"""The number, year and date patterns of text/words.py and text/claims.py are written with their
first character before its look-behind (so ``re`` skips positions quickly): each must find exactly
what its plain form, kept here, finds — same spans, same groups — on random and edge texts."""

import random
import re

import pytest

from ctxselect.text import claim_patterns, claims, words

_MONTH = claim_patterns._MONTH
PLAIN = {
    "words._NUMBER": (words._NUMBER, re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?!\w)")),
    "words._YEAR": (words._YEAR, re.compile(r"(?<!\d)(1[5-9]\d\d|20\d\d)(?!\d)")),
    "claims._NUMBER": (claim_patterns._NUMBER, re.compile(
        r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?:\s*(%|percent|per cent)|\s+(thousand|million|billion|trillion))?"
        r"(?![\w])", re.I)),
    "claims.iso_date": (claims._DATE_PATTERNS[0][0], re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")),
    "claims.day_month_year": (claims._DATE_PATTERNS[2][0],
                              re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+({_MONTH}),?\s+(\d{{4}})\b", re.I)),
}
PIECES = (list("0123456789,.%-_ aAxé\u0663\u00b2\n\t'")
          + ["percent", "per cent", " million", " Thousand", "March", "sept.", "1999", "2024-03-05", "3rd ", "1,500", "12 ", " Sept ", " may, ",
             "21st", " 2021", " 4 June 1998", "-11-30"])
EDGES = ["", "1", "a1", "1a", ".5", "5.", "1,000,000", "12,34", "x2024-1-2", "2024-01-02", "1999 2000 20001",
         "\u0661\u0669\u0669\u0669", "3 March 2021", "03rd March, 2021", "a3 March 2021", "45 %", "7 per cent",
         "1.5 million people", "_12", "é12", "12é"]


def matches(pattern, text):
    return [(m.span(), m.groups(), m.group(0)) for m in pattern.finditer(text)]


@pytest.mark.parametrize("name", PLAIN)
def test_rewritten_patterns_match_their_plain_forms(name):
    fast, plain = PLAIN[name]
    rng = random.Random(name)
    texts = EDGES + ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 30))) for _ in range(20_000)]
    found = 0
    for text in texts:
        want = matches(plain, text)
        assert matches(fast, text) == want, text
        assert fast.findall(text) == plain.findall(text), text
        found += bool(want)
    assert found > 500  # precondition: the texts hold many matches

"""Texts for the claim prefilter's tests: the structures claims are made of, seeded or drawn.

Words (stopwords, one-letter words, Unicode letters, final sigma, apostrophes, hyphens, dashes
inside words), numbers (thousands commas, decimals, percent, scale words, bare years, ordinals),
dates in the three formats (and invalid ones), separators (NBSP, NEL, long runs of spaces, none at
all, so words run into numbers and month names), emoji, and the exotic code points the kernel
hands to Python (a dotted capital I, a long s, a dotless i, an Arabic-Indic digit, an em space).
Facts — a context phrase then a value — repeat across the texts of a set, so their claims join.
"""

from __future__ import annotations

from hypothesis import strategies as st

WORDS = ["the", "of", "in", "a", "I", "per", "storm", "outage", "district", "affected", "people",
         "counted", "census", "schools", "value", "report", "naïve", "Ωmega", "straße", "ΣΊΣΥΦΟΣ",
         "ὈΔΥΣΣΕΎΣ", "don't", "well-known", "x-", "—", "’s", "-", "'", "café", "日本", "😀", "\u212a",
         "ﬁne", "ǅemal", "²", "million", "thousand-fold", "millions", "billion—dollars", "percent",
         "percentage", "%", "may", "mar", "MARCH", "Dec.", "Sept", "th", "rd", "themselves", "w3", "_5"]
NUMBERS = ["3,559", "3559", "1.5", "1.5 million", "45%", "45 %", "12 percent", "12 per cent", "2021",
           "1999", "7", "0.5", "1,234,5678", "3.14.15", "2,000", "10,000", "15th", "3rd", "1,2", "x.5",
           "5-year", "2021 million", "1850%", "7 thousand people"]
DATES = ["March 3, 2021", "2021-03-03", "3 March 2021", "3 March, 2021", "Sept. 3rd 2021", "4th of July 5",
         "Dec. 5 2020", "31 February 2020", "war—March 4, 2021", "1999-12-31", "may 5 2020"]
SEPARATORS = [" ", " ", " ", "", "  ", "\u00a0", "\n", ", ", ". ", "—", "-", "'", "\u0085", ":", "(", " " * 30, "\t"]
EXOTIC = ["İstanbul", "ſept", "ı", "\u0663", "\u2003", "x\u0307"]
PIECES = WORDS + NUMBERS + DATES
CONTEXTS = ["the storm outage in the northern district affected", "the census in the river district counted",
            "naïve café owners’ union reported losses of", "ΣΊΣΥΦΟΣ ΟΔΟΣ total road losses were",
            "well-known x- y- z- firms hired", "themselves the district schools registered", "war— on",
            "the İstanbul storm outage district hit", "storm\u2003outage district affected", "ſome storm outage district affected"]
UNIT_GROUPS = [["3,559 people", "3559 people", "10,000 people", "2,000 people", "7 thousand people", "\u0663\u0664 people"],
               ["45%", "46 percent", "12 per cent", "45 %"], ["1.5 million dollars", "2 million dollars", "1,500,000 dollars"],
               ["March 3, 2021", "March 4, 2021", "2021-03-03", "3 March 2021", "3 March, 2021", "31 February 2021"],
               ["7", "8", "2021"], ["12 schools", "12.5 schools", "1,2 schools"]]
VALUES = ["3,559 people", "3559 people", "10,000 people", "45%", "46 percent", "1.5 million dollars",
          "March 3, 2021", "March 4, 2021", "2021-03-03", "3 March 2021", "12 schools", "Dec. 5 2020", "7",
          "2,000 million", "12 per cent"]


def seeded_text(rng, pieces: int, exotic: float = 0.05) -> str:
    """A text of ``pieces`` pieces from a ``random.Random``; sometimes with an exotic code point."""
    text = "".join(rng.choice(PIECES) + rng.choice(SEPARATORS) for _ in range(pieces))
    return text + rng.choice(EXOTIC) if rng.random() < exotic else text


def seeded_fact(rng) -> str:
    context = rng.choice(CONTEXTS).split()
    if rng.random() < 0.3:
        context.pop(rng.randrange(len(context)))
    return " ".join(context) + rng.choice([" ", "", "\u00a0", "—"]) + rng.choice(VALUES)


def seeded_fact_text(rng, parts: int) -> str:
    """Facts and noise: texts built so share claims that join."""
    return rng.choice(SEPARATORS).join(seeded_fact(rng) if rng.random() < 0.5 else seeded_text(rng, rng.randint(0, 6), 0.02)
                                       for _ in range(parts))


@st.composite
def claim_texts(draw, max_pieces: int = 30):
    """One text: pieces and separators, maybe free Unicode, maybe an exotic code point."""
    separators = st.one_of(st.sampled_from(SEPARATORS), st.integers(25, 45).map(" ".__mul__))
    pieces = draw(st.lists(st.tuples(st.sampled_from(PIECES), separators), max_size=max_pieces))
    text = "".join(p + s for p, s in pieces)
    if draw(st.booleans()):
        at = draw(st.integers(0, len(text)))
        free = draw(st.text(alphabet=st.characters(codec="utf-8"), max_size=6))
        text = text[:at] + free + text[at:]
    if draw(st.integers(0, 9)) == 0:
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(EXOTIC)) + text[at:]
    return text


@st.composite
def fact_text_sets(draw, max_texts: int = 8):
    """Texts whose facts repeat (so claims join: the same context, a value of the same unit), with
    noise between them; some padded so the window or the cut falls elsewhere."""
    facts = draw(st.lists(st.tuples(st.sampled_from(CONTEXTS), st.sampled_from([-1, -1, -1, 0, 2, 5]),
                                    st.sampled_from(UNIT_GROUPS)), min_size=1, max_size=4))
    texts = []
    for _ in range(draw(st.integers(0, max_texts))):
        parts = []
        for _ in range(draw(st.integers(0, 4))):
            if draw(st.integers(0, 9)) < 7:
                context, drop, values = draw(st.sampled_from(facts))
                words = context.split()
                if 0 <= drop < len(words):
                    words.pop(drop)
                glue = draw(st.sampled_from([" ", " ", " ", "\u00a0", "—", ""]))
                parts.append(" ".join(words) + glue + draw(st.sampled_from(values)))
            else:
                parts.append(draw(claim_texts(max_pieces=6)))
        padding = draw(st.sampled_from(["", "", "", "pad " * 20, "x" * 95]))
        texts.append(padding + draw(st.sampled_from(SEPARATORS)).join(parts))
    return texts

"""The claim-key kernel stops reading a text after its last ASCII digit and last lead byte (0xC0 on):
no start and no exotic code point lies past them. Texts built around that cut must still give the
twin's entries and flags (tests/naive/claims.py), with either kernel."""

import pytest

from ctxselect.kernels.claims import UNIT_DATE
from ctxselect.text.claim_keys import key_of, word_hash
from tests.kernels.test_claims_kernel import KERNELS, check, entries
from tests.text.claim_texts import EXOTIC

TAIL = " and then nothing more was said about it at all" * 3
TEXTS = [
    "no digits at all in this storm outage district text",  # nothing to read
    "no digits here but " + EXOTIC[0] + TAIL,  # an exotic code point without digits: flagged
    "café résumé naïve" + TAIL,  # lead bytes only: read to the last one, no entries
    "storm outage district affected 7" + TAIL,  # the last digit early, a long tail
    "storm outage district affected 7 people",  # the unit after the last digit is still read
    "alpha beta gamma delta March 3, 2021" + TAIL,
    "alpha beta gamma delta March" + TAIL,  # a month name without a digit after it
    "storm outage district affected 5 " + EXOTIC[3] + TAIL,  # exotic after the last digit
    EXOTIC[5] + " storm outage district affected 5 units" + TAIL,  # exotic first
    "storm outage district affected 12 per cent" + "é" + TAIL,
    "1", "x", "", "é",
]


@pytest.mark.parametrize("kernel", KERNELS.values(), ids=KERNELS.keys())
def test_texts_around_the_cut_match_twin(kernel):
    check(kernel, TEXTS)
    check(kernel, TEXTS, need=3)
    check(kernel, TEXTS, max_chars=40)


def test_entries_before_the_cut_are_kept():
    got, flags = entries(KERNELS["serial"], TEXTS)
    assert got[0] == got[2] == got[6] == [] and flags[1] == 1 and flags[7] == 1 and flags[8] == 1
    assert got[4] == [(key_of("district", "affected"), word_hash("people"))]
    assert (key_of("gamma", "delta"), int(UNIT_DATE)) in got[5]

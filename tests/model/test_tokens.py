"""Token counting: the default counter and a pluggable one; the one word every reader uses."""

import math

from hypothesis import given
from hypothesis import strategies as st

import ctxselect
from ctxselect.model.tokens import WORD, default_token_counter
from ctxselect.text.claims import extract_claims
from ctxselect.text.words import content_terms


def test_pluggable_token_counter():
    cands = [{"id": "a", "source": "s", "relevance": 0.5, "text": "abcdefgh"}]
    assert ctxselect.pack(cands, {"token_budget": 5}, token_counter=len).tokens.tolist() == [8]
    ctxselect.set_token_counter(lambda text: 3)
    try:
        assert ctxselect.pack(cands, {"token_budget": 5}).tokens.tolist() == [3]
    finally:
        ctxselect.set_token_counter(None)
    assert ctxselect.pack(cands, {"token_budget": 5}).tokens.tolist() == [2]



def test_default_counter_counts_the_one_word():
    # underscores and punctuation separate words; U+00C0-U+FFFF (letters, "’") joins them
    assert [default_token_counter(t) for t in ["snake_case", "don’t stop", "a — b", "x", "", "© ½"]] == [
        math.ceil(1.3 * 2), math.ceil(1.3 * 2), math.ceil(1.3 * 3), 2, 1, 1]


_TEXTS = st.lists(st.sampled_from(list("ab9_ -'’—©ΣσÉé😀\n.,%") + ["March", " 12 ", "2019", "per", "people",
                                                                   " the population was "]),
                  max_size=40).map("".join)


@given(_TEXTS)
def test_every_reader_reads_the_one_word(text):
    words = WORD.findall(text)
    assert default_token_counter(text) == max(1, math.ceil(1.3 * len(words)))
    lowered = [w.lower() for w in words]  # each word lower-cased on its own, as content_terms does
    for term in content_terms(text):  # a stem of a word: the word itself or a prefix plus "y"
        assert any(w == term or w.startswith(term.rstrip("y")) for w in lowered), term
    for claim in extract_claims(text):  # context words are words joined by ' and -
        for word in claim.before.split():
            assert all(WORD.fullmatch(part) for part in word.replace("'", "-").split("-") if part), word


def test_a_text_over_the_limit_is_refused_before_it_is_counted():
    # counting a 50 MB text took 2 s and 0.8 GB before the same error (a helper's hostile hunt)
    import pytest

    from ctxselect.model.validation import MAX_TEXT_CHARS

    seen = []

    class Recording:
        def __call__(self, text):
            seen.append(len(text))
            return 1

        def count_batch(self, texts):
            return [self(t) for t in texts]

    long = "word " * (MAX_TEXT_CHARS // 5) + "x"
    cands = [{"id": "a", "source": "s", "relevance": 0.5, "text": "short text"},
             {"id": "b", "source": "s", "relevance": 0.5, "text": long}]
    for call in (lambda: ctxselect.pack(cands, {"token_budget": 5}, token_counter=Recording()),
                 lambda: ctxselect.inspect(cands, {"token_budget": 5}, token_counter=Recording()),
                 lambda: ctxselect.Candidate.from_dict(cands[1], token_counter=Recording())):
        with pytest.raises(ctxselect.InputError, match=r"field 'text': expected at most 2,000,000 characters"):
            call()
        assert max(seen, default=0) <= MAX_TEXT_CHARS
    assert seen  # (the short text was counted: the recorder records)

"""The text helpers: content terms and years."""

import pytest

from ctxselect.text.words import content_terms, years_in


def test_text_helpers():
    assert content_terms("The Rivers of Zimbabwe, and its waterfalls!") == {"river", "zimbabwe", "waterfall"}
    assert years_in("From Aug 2017 to 2018, not 12345 or 999") == [2017, 2018]



def test_number_reader_reads_every_token_the_number_pattern_finds():
    """Points inside a comma's group once made "3.5,1.2" a thousands grouping, and float("3.51.2")
    raised: every token the pattern finds has a value, and the grouping rules are unchanged."""
    from ctxselect.text.words import _NUMBER, number_value

    for text in ["3.5,1.2", "1.2,3.4", "1.2.3,456", "3.5,123.4", "0,1.2,3"]:
        for token in _NUMBER.findall(text):
            assert isinstance(number_value(token), float)
    assert number_value("3.5,1.2") == 3512.0  # read as the points of a thousands separator, like "1.000.000"
    cases = {"1,500": 1500.0, "1,5": 1.5, "1.500": 1.5, "1.000.000": 1e6, "1,234,567": 1234567.0,
             "1,234.5": 1234.5, "3,1.2": 31.2, "1.5,000": 1.5, "12,34": 12.34}
    assert {token: number_value(token) for token in cases} == cases


def test_a_chunk_writing_3_5_comma_1_2_near_a_copy_is_selected_without_a_traceback():
    """select() raised ValueError on near-duplicates whose numbers differ when one wrote "3.5,1.2"."""
    import ctxselect

    base = ("the river flooded the northern valley district in march and the report by the county says that {} "
            "homes were damaged by the water across the whole region this spring")
    cands = [{"id": "a", "source": "s1", "tokens": 30, "relevance": 0.9, "text": base.format("3.5,1.2")},
             {"id": "b", "source": "s2", "tokens": 30, "relevance": 0.8, "text": base.format("4,100")}]
    sel = ctxselect.select(cands, {"token_budget": 100}, "how many homes were damaged?")
    assert sel.status in ("optimal", "empty") and set(sel.ids) | set(sel.excluded) == {"a", "b"}


@pytest.mark.parametrize("seed", range(3))
def test_number_tokens_tried_at_the_kernel_s_starts_are_the_pattern_s(seed):
    """number_tokens with claim_hints' starts (what drift_pairs reads) equals the plain findall on
    drawn texts, texts of only numbers, control characters and non-ASCII digits (exotic: plain)."""
    import random

    from ctxselect.packing import text_buffer
    from ctxselect.text.claim_keys import claim_hints
    from ctxselect.text.words import number_tokens
    from tests.text.claim_texts import seeded_fact_text, seeded_text

    rng = random.Random(seed)
    texts = [seeded_text(rng, rng.randint(0, 40), 0.2) if rng.random() < 0.5 else seeded_fact_text(rng, 5)
             for _ in range(200)]
    texts += ["", "1", "1 2,3 4.5.6 7,000,000 8a 9_ _0 x1 1x", "3.5,1.2 1.2.3,456", "\x007\x01 8\x7f9",
              "\u0663\u0664 5", "<td>12</td><td>3,4</td>", "١٢٣ 4", "5" * 200]
    hints = claim_hints(text_buffer(texts), None, 1 << 62, 1 << 62)
    assert len(hints) > len(texts) // 2
    found = 0
    for k, text in enumerate(texts):
        if k in hints:
            digit, _date, starts = hints[k]
            got = number_tokens(text, starts) if digit else []
            assert got == number_tokens(text), text
            found += len(got)
    assert found > 200


def test_context_words_of_ascii_texts_read_as_the_word_pattern_reads_them():
    """An ASCII text's context words are read as runs of letters, digits, ' and - (each stripped to
    its first letter): the same words, lower-cased, as the pattern reads in any text, with one-letter
    words and stopwords skipped — also in non-ASCII texts, where "İ" is one letter though it
    lower-cases to two."""
    import random

    from ctxselect.text.words import _WORD, STOPWORDS, first_content_word, last_content_words

    def plain(text):
        return [w.lower() for w in _WORD.findall(text) if len(w) > 1 and w.lower() not in STOPWORDS]

    rng = random.Random(5)
    pieces = [chr(k) for k in range(128)] + [" the ", " Plan ", " o'neil ", " long-term ", " 3abc ", " -x ", " 'tis ",
                                             " a ", " İ ", " ﬁx ", " STRASSE ", "٣", "\u00a0", " naïve "]
    for k in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        text = text.encode("ascii", "ignore").decode() if k % 2 else text
        words = plain(text)
        assert last_content_words(text, 5) == words[-5:], text
        assert first_content_word.__wrapped__(text) == (words[0] if words else ""), text
    assert last_content_words("Part 2: 3abc the O'Neil long-term x9 İ", 5) == ["part", "abc", "o'neil", "long-term", "x9"]
    assert first_content_word("İ İs the") == "i̇s"

"""The text helpers: content terms and years."""

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

"""The text helpers: content terms and years."""

from ctxselect.text.words import content_terms, years_in


def test_text_helpers():
    assert content_terms("The Rivers of Zimbabwe, and its waterfalls!") == {"river", "zimbabwe", "waterfall"}
    assert years_in("From Aug 2017 to 2018, not 12345 or 999") == [2017, 2018]


"""``char_class``: the word classes written as negations compile fast and match exactly the
characters of their bodies, on every code point; the patterns built from them find what the
plain classes found."""

import random
import re
import sys

import pytest

from ctxselect.model.tokens import LETTERS, PER_CHARACTER, TOKEN_UNIT, WORD, WORD_CHARACTERS, char_class
from ctxselect.text import claim_keys, claim_scope, words

EVERY = "".join(map(chr, range(sys.maxunicode + 1)))  # surrogates too: a str may hold them


@pytest.mark.parametrize("body", [WORD_CHARACTERS, LETTERS, PER_CHARACTER, WORD_CHARACTERS + "'\\-", "a", "\\-", "a-",
                                  "\\]x-z", "\x00", "\U0010ffff", "\x00-\U0010ffff",
                                  "b-cA-Z\U00010000-\U0001ffff"])
def test_a_class_matches_exactly_the_characters_of_its_body(body):
    plain, negated = re.compile(f"[{body}]"), re.compile(char_class(body))
    assert negated.findall(EVERY) == plain.findall(EVERY)


def test_the_patterns_built_from_them_find_what_the_plain_classes_found():
    plain_word = re.compile(f"[{WORD_CHARACTERS}]+")
    plain_unit = re.compile(f"[{PER_CHARACTER}]|(?:(?![{PER_CHARACTER}])[{WORD_CHARACTERS}])+")
    plain_context = re.compile(rf"[{LETTERS}][{WORD_CHARACTERS}'\-]*")
    plain_letter, plain_run = re.compile(f"[{LETTERS}]"), re.compile(f"[{WORD_CHARACTERS}'\\-]")
    rng = random.Random(7)
    pool = [chr(c) for c in [*range(0x300), *range(0x2000, 0x2100), *range(0x3000, 0x3100), *range(0xAC00, 0xAC40),
                             0xD800, 0xFFFF, 0x10000, 0x20000, 0x10FFFF]] + list("ab'-1 ") * 20
    for _ in range(2000):
        text = "".join(rng.choice(pool) for _ in range(rng.randint(0, 60)))
        assert WORD.findall(text) == plain_word.findall(text)
        assert TOKEN_UNIT.findall(text) == plain_unit.findall(text)
        assert words._WORD.findall(text) == claim_scope._WORD.findall(text) == plain_context.findall(text)
        assert claim_keys._WORD_CLASS.findall(text) == plain_letter.findall(text)
        assert claim_keys._RUN_CLASS.findall(text) == plain_run.findall(text)


@pytest.mark.parametrize("body", ["^a", "\\d", "a\\", "z-a", "a-\\n"])
def test_a_body_it_cannot_read_exactly_is_refused(body):
    """A negated body, an escape that is a class (``\\d``) or a dangling one, a range running
    backwards: a ``ValueError``, never a class that silently matches other characters."""
    with pytest.raises(ValueError, match="char_class"):
        char_class(body)

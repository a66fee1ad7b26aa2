"""The fast paths of packing (well-formed values kept after cheap checks, one C-level pass per
column, one join for the text buffer) give what the field-by-field path gives: equal
PackedCandidates, or the same InputError, on generated dicts that are well formed, nearly so, or
hostile, and on Candidate objects."""

from __future__ import annotations

import math
import random
from dataclasses import fields as dc_fields
from datetime import datetime, timezone

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxselect import packing
from ctxselect.errors import InputError
from ctxselect.model import validation as checks
from ctxselect.model.candidate import Candidate, coerce_with_embeddings
from ctxselect.packing import pack, text_buffer
from tests.naive.pack import (naive_candidate, naive_integer, naive_label, naive_mapping, naive_pack, naive_string_list,
                              naive_text, naive_text_buffer)

NOW = 1_790_000_000.0


class _Str(str):
    """A str subclass (NumPy's str_ is one too): valid wherever text is."""


LABELS = st.one_of(
    st.sampled_from(["a", "b", "src", "policy", " x ", "Ünï", "é", "", " ", "\t", "a\x00b", "<b>&amp;</b>",
                     "\u2028", "\ud800", "x" * 4096, "x" * 4097, "-", "1"]),
    st.text(max_size=6),
    st.integers(-3, 3),
    st.sampled_from([10**12, 10**12 + 1, -(10**13), np.int64(5), np.int32(-1), np.uint8(7), True, False,
                     1.0, 2.5, [], {}, b"x", np.str_("np"), _Str("a"), None]),
)
NUMBERS = st.one_of(
    st.floats(-0.5, 1.5),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 0.0, -0.0, 1.0, 1.0000001, 0.5, True, False, np.float32(0.5), np.float64(0.25),
                     np.int64(1), np.bool_(True), "0.5", 10**400, float("nan"), math.inf, None, [0.5]]),
)
COUNTS = st.one_of(
    st.integers(-2, 50),
    st.sampled_from([1.0, 2.5, 0.0, True, np.int64(3), np.float64(4.0), np.uint64(2), "5", None, 10**12,
                     10**12 + 1, math.inf, math.nan, -0.0, [3]]),
)
TEXTS = st.one_of(
    st.text(max_size=12),
    st.sampled_from(["", "  ", "one two three", "Ünïcode wörds", "ΑΣ ΟΔΟΣ", "\ud800 x", "漢字かな", None, 3,
                     b"bytes", _Str("sub text")]),
)
TIMES = st.one_of(
    st.floats(NOW - 1e9, NOW + 1e9),
    st.integers(-(10**11), 10**11),
    st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 0.0, 1e11, 1e11 - 1, 1.7e12, -62_135_596_800.0,
                     -62_135_596_801.0, True, "2024-05-01", "2024-05-01T10:00:00Z", " 2026-01-01 ", "bad",
                     "", np.float64(NOW), np.int64(10**9), datetime(2025, 1, 1, tzinfo=timezone.utc),
                     datetime(2025, 1, 1), None, [1.0], 10**400]),
)
CLAIMS = st.one_of(
    st.none(), st.integers(-2, 2), st.booleans(), st.sampled_from(["p", "q", "1", ""]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1.0, 2.0, np.float64(1.0), np.float64(math.nan), np.int64(1), np.bool_(False), _Str("p"), [1],
                     {"a": 1}, (1,), b"p", 10**30, math.nan, math.inf, -math.inf]),
)
KEYS = st.sampled_from(["x", "y", "z", "", 1, None])


@st.composite
def fields(draw):
    kind = draw(st.integers(0, 9))
    if kind == 0:
        return draw(st.sampled_from([[], "x", None, 3, (("x", 1),)]))
    return draw(st.dictionaries(KEYS if kind == 1 else st.sampled_from(["x", "y", "z"]), CLAIMS, max_size=3))


@st.composite
def aspect_lists(draw):
    items = draw(st.lists(st.one_of(st.sampled_from(["a", "b", "c", "d"]), LABELS), max_size=3)
                 if draw(st.integers(0, 4)) == 0 else st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=3))
    shape = draw(st.sampled_from([list, list, tuple, set, frozenset, str, dict]))
    if shape is str:
        return "a"
    if shape is dict:
        return {"a": 1}
    try:
        return shape(items)
    except TypeError:  # unhashable items in a set
        return items


#: Well-formed claim values of every kind, so that 1, 1.0, True and "1" meet in one field.
GOOD_CLAIMS = st.one_of(st.integers(0, 2), st.booleans(), st.sampled_from(["p", "q", "1", 1.0, 0.0, -0.0, 2.5]),
                        st.floats(0, 2), st.none())


@st.composite
def candidate_dicts(draw, i, hostility):
    """A dict of the dump's shape: well formed, each field off with probability ``hostility``
    (near misses: valid values of other types, and invalid ones)."""
    chance = random.Random(draw(st.integers(0, 2**32))).random  # uniform (hypothesis' draws favour the ends)
    good = {
        "id": st.sampled_from([f"c{i}", f"c{i}", f"c{i}", i, f"Ç{i}"]),
        "source": st.sampled_from(["policy", "wiki", "status", "wiki", "policy", "status", "wiki", "-"]),
        "relevance": st.one_of(st.floats(0.0, 1.0), st.sampled_from([0, 1, -0.0])),
        "tokens": st.one_of(st.integers(1, 400), st.sampled_from([2.0, np.int64(3)])),
        "text": st.sampled_from(["one two", "three four five", "Σίσυφος ΟΔΟΣ", "x", " ½ "]),
        "rank": st.integers(0, 20),
        "timestamp": st.one_of(st.floats(NOW - 1e8, NOW), st.sampled_from([-0.0, 0.0, NOW, int(NOW), "2026-01-01"])),
        "valid_from": st.sampled_from([NOW - 1e6, NOW - 1.0, -0.0]),
        "valid_to": st.sampled_from([NOW + 1e6, NOW - 1.0, NOW]),
        "doc_id": st.sampled_from(["d1", "d2"]),
        "version": st.sampled_from(["1", "2", 3]),
        "scope": st.sampled_from(["public", "internal"]),
        "aspects": st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=3).map(
            lambda items: tuple(items) if len(items) == 2 else items),
        "fields": st.dictionaries(st.sampled_from(["x", "y"]), GOOD_CLAIMS),
    }
    hostile = {"id": LABELS, "source": LABELS, "relevance": NUMBERS, "tokens": COUNTS, "text": TEXTS,
               "rank": COUNTS, "timestamp": TIMES, "valid_from": TIMES, "valid_to": TIMES, "doc_id": LABELS,
               "version": LABELS, "scope": LABELS, "aspects": aspect_lists(), "fields": fields()}
    absent = {"id": 0.01, "relevance": 0.03, "tokens": 0.1, "source": 0.02}
    out = {}
    for key in good:
        if chance() < absent.get(key, 0.5):
            continue
        out[key] = draw(hostile[key] if chance() < hostility else good[key])
    for _ in range(draw(st.integers(0, 2))):  # other keys: extras, top-level claims (article 000's shape)
        if chance() < hostility:
            out[draw(st.sampled_from(["x", "y", 7, ""]))] = draw(CLAIMS)
        else:
            out[draw(st.sampled_from(["title", "x", "y", "extra"]))] = draw(GOOD_CLAIMS)
    if chance() < hostility:
        out["embedding"] = draw(st.sampled_from([[True, 1.0], [math.nan, 1.0], "x", [1.0], None]))
    if draw(st.integers(0, 14)) == 0:
        out = dict(reversed(list(out.items())))  # another key order
    return out


@st.composite
def candidate_inputs(draw):
    n = draw(st.integers(0, 7))
    hostility = draw(st.sampled_from([0.0, 0.0, 0.0, 0.02, 0.05, 0.3]))
    items = [draw(candidate_dicts(i, hostility)) for i in range(n)]
    if draw(st.integers(0, 7)) == 0:  # embeddings: all or none
        for i, item in enumerate(items):
            item.setdefault("embedding", draw(st.sampled_from([[0.5, 1.0], [1, i], (0.25, 2.0)])))
    if n and draw(st.integers(0, 9)) == 0:
        items[draw(st.integers(0, n - 1))]["id"] = items[0].get("id")  # a duplicate id
    every = draw(st.integers(0, 4)) == 0  # all given as Candidate objects (their own fast path), or some
    for k, item in enumerate(items):
        if every or draw(st.integers(0, 4)) == 0:
            try:
                items[k] = Candidate.from_dict(item)
            except InputError:
                pass
    if n and draw(st.integers(0, 19)) == 0:
        items[draw(st.integers(0, n - 1))] = draw(st.sampled_from([None, "c", 3, ["id", "x"]]))
    return items


@st.composite
def requirements(draw):
    out = {"token_budget": draw(st.integers(1, 2000)), "now": NOW}
    if draw(st.integers(0, 3)):
        out["conflict_fields"] = draw(st.sampled_from([["x"], ["x", "y"], {"y": 0.5, "x": 1.0}, ["z"]]))
    if draw(st.booleans()):
        out["required_sources"] = draw(st.sampled_from([["policy"], {"wiki": 2, "status": 1}]))
    if draw(st.booleans()):
        out["max_per_source"] = draw(st.sampled_from([2, {"wiki": 1, "nowhere": 3}, {}]))
    if draw(st.booleans()):
        out["allowed_scopes"] = draw(st.sampled_from([["public"], ["public", "public", "internal"], []]))
    if draw(st.booleans()):
        out["required_aspects"] = draw(st.sampled_from([["a", "b"], {"c": 2.0}]))
    if draw(st.integers(0, 3)) == 0:
        out["source_decay"] = {"wiki": 0.1}
    if draw(st.integers(0, 3)) == 0:
        out["half_life_days"] = 30.0
    return out


def _typed(value):
    """A value with its types spelled out (1, 1.0 and True differ; arrays by dtype and bytes)."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes(), value.flags.writeable)
    if isinstance(value, (tuple, list)):
        return (type(value).__name__, [_typed(v) for v in value])
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, Candidate):
        return ("Candidate", _typed({f.name: getattr(value, f.name) for f in dc_fields(value)}))
    if isinstance(value, float) and math.isnan(value):
        return (type(value).__name__, "nan")
    return (type(value).__name__, repr(value))


def _outcome(run):
    try:
        return "ok", run()
    except InputError as err:
        return "error", str(err)


class _Counter:
    """A token counter that records its calls and sometimes answers badly."""

    def __init__(self):
        self.calls = []

    def __call__(self, text):
        self.calls.append(text)
        return {0: 0, 1: 2.0, 2: True}.get(len(text) % 17, len(text))


def _compare(items, reqs, **options):
    counters = _Counter(), _Counter()
    new = _outcome(lambda: pack(items, reqs, token_counter=counters[0], **options))
    old = _outcome(lambda: naive_pack(items, reqs, token_counter=counters[1], **options))
    assert new[0] == old[0], (new, old)
    if new[0] == "error":
        assert new[1] == old[1]
    else:
        for name, expected in old[1].items():
            assert _typed(getattr(new[1], name)) == _typed(expected), name
    assert counters[0].calls == counters[1].calls


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(candidate_inputs(), requirements(), st.sampled_from([None, None, 0.5, 1, math.nan, "x"]))
def test_fast_paths_equal_the_field_by_field_path(items, reqs, default_relevance):
    _compare(items, reqs, default_relevance=default_relevance)


@settings(max_examples=60, deadline=None)
@given(candidate_inputs(), requirements())
def test_fast_paths_equal_with_an_embedding_matrix(items, reqs):
    n = len(items)
    _compare(items, reqs, embeddings=np.arange(2.0 * n).reshape(n, 2))


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["id", "source", "relevance", "tokens", "text", "rank", "timestamp",
                                        "valid_from", "valid_to", "doc_id", "version", "scope", "aspects",
                                        "fields", "extra"]),
                       st.one_of(LABELS, NUMBERS, COUNTS, TEXTS, TIMES, aspect_lists(), fields())))
def test_candidate_constructor_equals_the_validators(values):
    """``Candidate(**values)`` (keyword construction, every field hostile) as the naive path."""
    values = {"id": "c", "source": None, "relevance": 0.5, "tokens": 3, **values}
    new = _outcome(lambda: Candidate(**values))
    old = _outcome(lambda: naive_candidate(values))
    assert new[0] == old[0] and (_typed(new[1]) == _typed(old[1]) if new[0] == "ok" else new[1] == old[1])


_NEAR_MISSES = {
    "id": ["", " ", "\t\n", "x" * 4096, "x" * 4097, "é", "\ud800", "a\x00b", 0, -3, 10**12, 10**12 + 1, True, 1.0,
           np.int64(4), np.str_("np"), _Str("sub"), [], b"x"],
    "source": ["", " ", "x" * 4097, "é", "\ud800", 0, True, 2.5, np.int32(1), np.str_("wiki"), _Str("wiki"), None, "-"],
    "relevance": [0, 1, True, -0.0, 1.0000001, -1e-300, math.nan, math.inf, np.float64(0.5), np.float32(0.5),
                  np.int64(1), np.bool_(True), "0.5", 10**400, None],
    "tokens": [0, -1, 10**12, 10**12 + 1, 2.0, 2.5, True, np.int64(3), np.float64(4.0), math.inf, math.nan, "5",
               None],
    "text": ["", "é", "\ud800", "x" * 2_000_001, 3, None, _Str("t"), np.str_("t")],
    "rank": [0, -1, 10**12 + 1, 1.0, 1.5, True, np.int64(2), "1"],
    "timestamp": [-0.0, 0.0, 1e11, 1e11 - 1, 1.7e12, -62_135_596_800.0, -62_135_596_801.0, math.nan, math.inf, True,
                  int(NOW), np.float64(NOW), np.int64(10**9), "2024-05-01", "bad", 10**400],
    "valid_from": [NOW + 5e6, math.nan, 1e11, -0.0, "2026-01-01"],
    "valid_to": [NOW - 5e6, math.inf, 1.7e12, np.float64(NOW)],
    "doc_id": ["", " ", "é", 3, True, 10**13, _Str("d")],
    "version": ["", "\ud800", 3, 2.0, np.int64(2)],
    "scope": ["", "x" * 4097, 1, False, np.str_("public")],
    "aspects": [("a", "b"), ["a", ""], ["a", " "], ["a", 1], ["é"], ["a", True], {"a"}, frozenset(), "a", None,
                {"a": 1}, ["x" * 4097], [np.str_("a")], [_Str("a")]],
    "fields": [{"x": math.nan}, {"x": math.inf}, {"x": np.float64(math.nan)}, {"x": np.float64(1.0)}, {"x": np.int64(1)},
               {"x": [1]}, {"x": {"a": 1}}, {"": 1}, {1: 1}, {"x": None}, {"x": _Str("p")}, {"x": 10**30},
               {"x": np.bool_(True)}, [("x", 1)], "x", None],
    "x": [1, True, "1", 1.0, None, math.nan, math.inf, [1], {"a": 1}, np.float64(2.0), np.int64(1)],  # top level
}


@pytest.mark.parametrize("field", list(_NEAR_MISSES))
def test_each_near_miss_gives_what_the_validators_give(field):
    """One field of one candidate off (the middle one of three well-formed dicts, or given as a
    Candidate where it is valid), every other value well formed."""
    base = {"source": "wiki", "relevance": 0.5, "tokens": 3, "text": "one two", "rank": 1, "timestamp": NOW - 10.0,
            "valid_from": NOW - 1e6, "valid_to": NOW + 1e6, "doc_id": "d", "version": "1", "scope": "public",
            "aspects": ["a"], "fields": {"x": 1}}
    reqs = {"token_budget": 10, "now": NOW, "conflict_fields": ["x"], "required_aspects": ["a", "b"],
            "allowed_scopes": ["public"]}
    for value in _NEAR_MISSES[field]:
        items = [{**base, "id": f"c{i}"} for i in range(3)]
        items[1][field] = value
        if field == "x":  # article 000's shape: the claim as a top-level key
            items[1]["fields"] = {}
        _compare(items, reqs)
        try:
            objects = [Candidate.from_dict(item) for item in items]
        except InputError:
            continue
        _compare(objects, reqs)
        _compare(objects[:1] + [items[1]] + objects[2:], reqs)


VALUES = st.one_of(LABELS, NUMBERS, COUNTS, TEXTS, aspect_lists(), fields(), st.text(max_size=3),
                   st.sampled_from(["abcde", "abcdef", " a ", "\u3000", "x" * 4096]))


@settings(max_examples=500, deadline=None)
@given(VALUES, st.sampled_from([None, 0, 1, 5]), st.sampled_from([checks.MAX_COUNT, 10]), st.booleans(),
       st.sampled_from([5, checks.MAX_TEXT_CHARS]))
def test_validators_equal_their_every_check_versions(value, low, high, allow_empty, limit):
    """The validators' fast first lines decide as their full checks do (naive copies)."""
    pairs = [
        (lambda: checks.label(value, "f"), lambda: naive_label(value, "f")),
        (lambda: checks.text(value, "f", allow_empty=allow_empty, limit=limit),
         lambda: naive_text(value, "f", allow_empty=allow_empty, limit=limit)),
        (lambda: checks.integer(value, "f", low=low, high=high), lambda: naive_integer(value, "f", low=low, high=high)),
        (lambda: checks.string_list(value, "f"), lambda: naive_string_list(value, "f")),
        (lambda: checks.mapping(value, "f", "an object"), lambda: naive_mapping(value, "f", "an object")),
    ]
    for new, old in pairs:
        got, want = _outcome(new), _outcome(old)
        assert got[0] == want[0] and (_typed(got[1]) == _typed(want[1]) if got[0] == "ok" else got[1] == want[1])


def test_well_formed_dicts_are_copied_not_shared():
    claims, extra_value = {"x": 1}, {"nested": [1]}
    item = {"id": "a", "relevance": 0.5, "tokens": 2, "fields": claims, "title": extra_value}
    cand = coerce_with_embeddings([item])[0][0]
    claims["x"] = 2
    item["title"] = "changed"
    assert cand.fields == {"x": 1} and cand.fields is not claims
    assert cand.extra == {"title": extra_value}


@pytest.mark.parametrize("shape", ["all candidates", "mixed"])
def test_duplicate_ids_are_found_in_order(shape):
    cands = [Candidate(id=i, source="s", relevance=0.5, tokens=1) for i in ("a", "b", "c", "b", "a")]
    items = cands if shape == "all candidates" else [cands[0], cands[1].to_dict(), *cands[2:]]
    with pytest.raises(InputError) as err:
        pack(items, {"token_budget": 3})
    assert str(err.value) == "candidate 'b', field 'id': duplicate candidate id; expected ids unique within a query"


SIGMA_TEXTS = st.lists(st.text(alphabet=st.sampled_from(["Σ", "σ", "ς", "A", "a", "'", ".", " ", "\u0301", "İ",
                                                          "\u00ad", ":", "\ud800", "\udfff", "ß", "ǅ", "x"]),
                               max_size=5), max_size=6)


@pytest.mark.parametrize("group", [None, 1, 2, packing._GROUP_TEXTS])  # many ASCII bytes: by groups of texts
@settings(max_examples=300, deadline=None)
@given(st.one_of(SIGMA_TEXTS, st.lists(st.text(max_size=8), max_size=6),
                 st.lists(st.text(st.characters(max_codepoint=127), max_size=12), max_size=6)), st.booleans())
def test_text_buffer_equals_per_text_encoding(group, texts, lower):
    with pytest.MonkeyPatch.context() as mp:
        if group is not None:  # (None: these few bytes are written whole)
            mp.setattr(packing, "_GROUP_TEXTS", group)
            mp.setattr(packing, "_WHOLE_BYTES", 0)
        buf, offsets = text_buffer(texts, lower=lower)
    want_buf, want_offsets = naive_text_buffer(texts, lower=lower)
    assert buf.dtype == np.uint8 and offsets.dtype == np.int64 and not buf.flags.writeable
    assert buf.tobytes() == want_buf.tobytes() and offsets.tolist() == want_offsets.tolist()


def test_text_buffer_of_many_ascii_texts_crosses_groups():
    """More texts than a group, some empty, of uneven lengths: the same bytes as text by text."""
    rng = random.Random(5)
    texts = ["".join(rng.choice("AbZ z.9-") for _ in range(rng.randrange(0, 40)))
             for _ in range(3 * packing._GROUP_TEXTS + 7)]
    texts.append("q" * packing._WHOLE_BYTES)  # more bytes than are written whole
    buf, offsets = text_buffer(texts)
    want_buf, want_offsets = naive_text_buffer(texts)
    assert buf.tobytes() == want_buf.tobytes() and offsets.tolist() == want_offsets.tolist()
    whole = text_buffer(["", ""])[0]
    assert whole.tolist() == [0] and not whole.flags.writeable and not buf.flags.writeable
    assert numba.typeof(buf) == numba.typeof(whole) == numba.typeof(text_buffer(["ab"])[0])  # one kernel signature


def test_text_buffer_cuts_final_sigma_per_text():
    """Greek capital sigma lowers by its neighbours (final ς): each text is lowered on its own."""
    buf, offsets = text_buffer(["ΟΔΟΣ", "Α", "ΣΑ"])
    parts = [buf[offsets[i]:offsets[i + 1]].tobytes().decode() for i in range(3)]
    assert parts == ["οδος", "α", "σα"]

"""Hypothesis strategies for candidates and requirements."""

from hypothesis import strategies as st

SOURCES = ["policy", "procedure", "status", "wiki"]
SCOPES = ["public", "support", "internal"]
ASPECTS = ["a", "b", "c", "d", "e"]
NOW = 1_790_000_000.0  # fixed reference time, epoch seconds


@st.composite
def candidate_lists(draw, min_size=0, max_size=12):
    n = draw(st.integers(min_size, max_size))
    out = []
    for i in range(n):
        c = {
            "id": f"c{i}",
            "source": draw(st.sampled_from(SOURCES)),
            "tokens": draw(st.integers(1, 400)),
            "relevance": draw(st.floats(0, 1, allow_nan=False)),
            "aspects": draw(st.lists(st.sampled_from(ASPECTS), max_size=3, unique=True)),
            "fields": {k: v for k, v in {
                "x": draw(st.one_of(st.none(), st.integers(0, 2))),
                "y": draw(st.one_of(st.none(), st.sampled_from(["p", "q"]))),
            }.items() if v is not None},
        }
        if draw(st.booleans()):
            c["scope"] = draw(st.sampled_from(SCOPES))
        if draw(st.booleans()):
            age = draw(st.floats(0, 400, allow_nan=False))
            c["timestamp"] = NOW - age * 86400.0
            c["age_days"] = age
        if draw(st.booleans()):
            c["doc_id"] = draw(st.sampled_from(["d1", "d2"]))
            c["version"] = draw(st.sampled_from(["1", "2", "3"]))
        out.append(c)
    return out


@st.composite
def requirement_dicts(draw):
    aspects = draw(st.dictionaries(st.sampled_from(ASPECTS), st.floats(0.05, 1.0), max_size=4))
    return {
        "token_budget": draw(st.integers(1, 3000)),
        "required_aspects": aspects,
        "required_sources": draw(st.dictionaries(st.sampled_from(SOURCES), st.integers(1, 3), max_size=3)),
        "allowed_scopes": draw(st.one_of(st.none(), st.lists(st.sampled_from(SCOPES), unique=True))),
        "conflict_fields": draw(st.dictionaries(st.sampled_from(["x", "y"]), st.floats(0.1, 1.0), max_size=2)),
        "decay_lambda": draw(st.floats(0, 0.05)),
        "now": NOW,
    }


def api_chunks(chunks):
    """Drop the test-only keys before handing chunks to the library."""
    return [{k: v for k, v in c.items() if k != "age_days"} for c in chunks]

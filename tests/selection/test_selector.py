"""ContextSelector: configuration validated up front, the caller's own objects back, nothing
process-wide changed, safe to share between threads, an async twin."""

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest

import ctxselect
from ctxselect.evaluate.generate import generate_queries
from ctxselect.model.tokens import get_token_counter


def _chunks():
    return [{"id": 7, "source": "s", "relevance": 0.9, "tokens": 30, "text": "refunds within 30 days"},
            {"id": 8, "source": "t", "relevance": 0.6, "tokens": 30, "text": "payouts take five days"}]


def test_the_selection_holds_the_callers_objects_with_their_id_types():
    chunks = _chunks()
    selection = ctxselect.ContextSelector(budget=100).select(iter(chunks), "how do refunds work?")
    assert selection.ids == ["7", "8"] and [c["id"] for c in selection.chunks] == [7, 8]
    assert all(any(c is o for o in chunks) for c in selection.chunks)
    assert "chunks" not in selection.to_dict()


@pytest.mark.parametrize("kwargs, field", [
    ({"budget": 0}, "token_budget"), ({"budget": 100, "colour": 1}, "colour"),
    ({"budget": 100, "time_limit": -1}, "time_limit"), ({"budget": 100, "requirements": {"tokens": 1}}, "requirements.tokens"),
    ({"budget": 100, "method": "best"}, "method"), ({"budget": 100, "requirements": {"token_budget": 5}}, "requirements.token_budget"),
    ({"budget": 100, "token_counter": 3}, "token_counter"), ({"budget": 100, "weights": {"sharpen": -1}}, "weights.sharpen"),
])
def test_bad_configuration_is_refused_when_the_selector_is_made(kwargs, field):
    with pytest.raises(ctxselect.InputError, match=f"field '{field}'"):
        ctxselect.ContextSelector(**kwargs)


def test_the_token_counter_is_the_selectors_not_the_process():
    before = get_token_counter()
    chunks = [{k: v for k, v in c.items() if k != "tokens"} for c in _chunks()]
    selector = ctxselect.ContextSelector(budget=100, token_counter=lambda text: 40)
    assert selector.select(chunks).tokens == 80 and get_token_counter() is before
    assert ctxselect.select(chunks, {"token_budget": 100}).tokens < 80  # the default estimate, untouched


def test_per_query_requirements_override_the_selectors():
    selector = ctxselect.ContextSelector(budget=100, requirements={"required_sources": ["s"]})
    assert selector.select(_chunks()).ids == ["7", "8"]
    assert selector.select(_chunks(), requirements={"token_budget": 40}).ids == ["7"]


def test_one_selector_serves_many_threads_and_async_callers():
    queries = generate_queries(queries=8, candidates=40, seed=3)
    selector = ctxselect.ContextSelector(budget=400, time_limit=5.0)
    alone = [selector.select(q.candidates, q.query, requirements={"token_budget": q.requirements.token_budget}).ids
             for q in queries]
    with ThreadPoolExecutor(4) as pool:
        together = list(pool.map(lambda q: selector.select(
            q.candidates, q.query, requirements={"token_budget": q.requirements.token_budget}).ids, queries))
    assert together == alone

    async def both():
        return await asyncio.gather(*(selector.aselect(q.candidates, q.query,
                                                       requirements={"token_budget": q.requirements.token_budget})
                                      for q in queries[:3]))
    assert [s.ids for s in asyncio.run(both())] == alone[:3]


@pytest.mark.parametrize("option, value", [("order", "random"), ("enforce_gate", "yes"), ("on_unresolved", "keep"),
                                           ("hard_conflict_severity", 2), ("signal_options", {"colour": 1}),
                                           ("resolve_by_corroboration", 1), ("mmr_lambda", 2)])
def test_every_option_is_checked_when_the_selector_is_made(option, value):
    with pytest.raises(ctxselect.InputError, match=f"'{option}"):
        ctxselect.ContextSelector(budget=100, **{option: value})


def test_a_named_counter_or_a_tokenizer_object_is_accepted_as_select_takes_them():
    """ContextSelector takes what select(token_counter=...) takes: a name (bpe-openai ships its
    vocabulary, nothing is downloaded) or an object with ``encode``."""
    import pytest

    pytest.importorskip("bpe_openai")

    class Words:
        def encode(self, text):
            return text.split()

    chunks = [{"id": "a", "source": "s", "relevance": 0.9, "text": "one two three"}]
    by_object = ctxselect.ContextSelector(budget=100, token_counter=Words()).select(chunks)
    assert by_object.tokens == 3
    named = ctxselect.ContextSelector(budget=100, token_counter="bpe-openai:cl100k_base").select(chunks)
    assert named.tokens == ctxselect.select(chunks, {"token_budget": 100},
                                            token_counter="bpe-openai:cl100k_base").tokens

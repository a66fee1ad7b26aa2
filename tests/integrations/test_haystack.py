"""The Haystack component against the real haystack-ai: a @component in a Pipeline after a real
BM25 retriever, its run() contract, and its serialisation."""

import asyncio
import copy
import pickle

import pytest

pytest.importorskip("haystack")

from haystack import Document, Pipeline  # noqa: E402
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever  # noqa: E402
from haystack.document_stores.in_memory import InMemoryDocumentStore  # noqa: E402

import ctxselect  # noqa: E402
from ctxselect.integrations.haystack import CtxSelectRanker  # noqa: E402
from tests.integrations._threads import a_calls_b_calls_a_reads  # noqa: E402

TEXTS = ["Annual plans can be refunded within 30 days of purchase.",
         "Annual plans can be refunded within 30 days of purchase.",
         "Refunds reach the original payment method within five business days.",
         "Internal: refund fraud thresholds for the risk team."]


def _docs():
    scopes = ["public", "public", "public", "internal"]
    return [Document(id=f"d{k}", content=t, score=s, meta={"source": "policy", "scope": sc, "tokens": 20})
            for k, (t, s, sc) in enumerate(zip(TEXTS, (0.9, 0.85, 0.7, 0.95), scopes))]


def test_run_returns_the_callers_documents_in_assembly_order():
    docs = _docs()
    ranker = CtxSelectRanker(token_budget=100, requirements={"allowed_scopes": ["public"]})
    out = ranker.run(documents=docs, query="how long do refunds take?")["documents"]
    assert all(any(o is d for d in docs) for o in out)
    ids = [d.id for d in out]
    assert "d3" not in ids and not {"d0", "d1"} <= set(ids) and "d2" in ids
    assert ranker.last_selection.excluded["3:d3"].startswith("inadmissible")
    assert ranker.run(documents=[], query="q") == {"documents": []}


def test_in_a_pipeline_after_a_bm25_retriever_and_serialised():
    store = InMemoryDocumentStore()
    store.write_documents([Document(content=f"Note {k}: refunds are handled by team {k}.", meta={"scope": "public"})
                           for k in range(12)])
    pipeline = Pipeline()
    pipeline.add_component("retriever", InMemoryBM25Retriever(store, top_k=8))
    pipeline.add_component("select", CtxSelectRanker(token_budget=60, use_scores=False))  # BM25 is no [0, 1] score
    pipeline.connect("retriever.documents", "select.documents")
    question = "who handles refunds?"
    result = pipeline.run({"retriever": {"query": question}, "select": {"query": question}})
    sel = pipeline.get_component("select").last_selection
    assert [d.id for d in result["select"]["documents"]] == [i.split(":", 1)[1] for i in sel.ids]
    assert len(sel.ids) + len(sel.excluded) == 8 and sel.tokens <= 60
    # Haystack deserialises only modules the user trusts
    again = Pipeline.from_dict(pipeline.to_dict(), allowed_modules=["ctxselect.integrations.haystack"])
    assert again.get_component("select").token_budget == 60


def test_a_score_outside_zero_one_is_a_located_error():
    docs = [Document(id="x", content="text", score=12.0, meta={})]
    with pytest.raises(ctxselect.InputError, match=r"candidate '0:x', field 'relevance'"):
        CtxSelectRanker(token_budget=100).run(documents=docs, query="q")


def test_no_earlier_selection_shows_after_an_empty_or_failed_run():
    # a ranker shared between requests kept the last non-empty run's selection (its texts included)
    ranker = CtxSelectRanker(token_budget=100, requirements={"allowed_scopes": ["public"]})
    ranker.run(documents=_docs(), query="tenant A's question")
    assert ranker.last_selection is not None
    assert ranker.run(documents=[], query="tenant B's question") == {"documents": []}
    assert ranker.last_selection is None
    ranker.run(documents=_docs(), query="tenant A's question")
    with pytest.raises(ctxselect.InputError):
        ranker.run(documents=[Document(id="x", content="text", score=12.0, meta={})], query="q")
    assert ranker.last_selection is None


def test_last_selection_is_this_threads_last_run():
    # four threads sharing one ranker read another thread's selection (its candidate texts included)
    ranker = CtxSelectRanker(token_budget=100, requirements={"allowed_scopes": ["public"]})
    b_docs = [Document(id="b-note", content="Tenant B's only note.", meta={"scope": "public"})]
    a, b = a_calls_b_calls_a_reads(lambda docs: ranker.run(documents=docs, query="q"),
                                   lambda: ranker.last_selection, _docs(), b_docs)
    assert b.ids == ["0:b-note"]
    assert "0:b-note" not in a.ids and len(a.ids) + len(a.excluded) == 4
    assert ranker.last_selection is None  # this (third) thread ran nothing


def test_run_async_and_copies_keep_their_own_last_selection():
    ranker = CtxSelectRanker(token_budget=100, requirements={"allowed_scopes": ["public"]})
    out = asyncio.run(ranker.run_async(documents=_docs(), query="refunds"))["documents"]  # on a worker thread
    assert [d.id for d in out] == [cid.split(":", 1)[1] for cid in ranker.last_selection.ids]
    for clone in (copy.deepcopy(ranker), pickle.loads(pickle.dumps(ranker)),
                  CtxSelectRanker.from_dict(ranker.to_dict())):
        assert clone.last_selection is None and clone.to_dict() == ranker.to_dict()
        assert [d.id for d in clone.run(documents=_docs(), query="refunds")["documents"]] == [d.id for d in out]


@pytest.mark.parametrize("key", ["bogus", "method", "requirements"])
def test_a_select_option_select_does_not_take_fails_at_construction(key):
    # it failed on the first run, with select()'s TypeError ("unexpected keyword", "multiple values")
    with pytest.raises(ctxselect.InputError, match=rf"^field 'select_options\.{key}': .*expected one of order, "
                                                   r"enforce_gate, time_limit, .*relevance$"):
        CtxSelectRanker(token_budget=5, select_options={key: 1})
    with pytest.raises(ctxselect.InputError, match=r"field 'select_options': expected a dict"):
        CtxSelectRanker(token_budget=5, select_options=["time_limit"])
    assert CtxSelectRanker(token_budget=5, select_options={"time_limit": 0.5}).run(documents=[])["documents"] == []


class _Unformattable:
    def __format__(self, spec):
        raise RuntimeError("no")


@pytest.mark.parametrize("documents, message", [
    ([Document(content="abc def ghi", meta=[1, 2])], r"^field 'metadata': document #0: expected a dict, found list$"),
    ([None], r"^field 'documents': document #0: expected a haystack Document, found NoneType$"),
    (["Internal: secret plan"], r"^field 'documents': document #0: expected a haystack Document, found str$"),
    (None, r"^field 'documents': expected an iterable of haystack Documents, found NoneType$"),
    ([Document(id=_Unformattable(), content="abc")],
     r"^field 'id': document #0: expected an id that formats as text, found _Unformattable$"),
])
def test_items_or_meta_of_the_wrong_type_are_located_errors(documents, message):
    # these raised AttributeError or TypeError, or the id's own error (and no text appears in the message)
    with pytest.raises(ctxselect.InputError, match=message):
        CtxSelectRanker(token_budget=100).run(documents=documents, query="q")


def test_a_generator_of_documents_is_read_as_a_list():
    docs = _docs()
    out = CtxSelectRanker(token_budget=100, requirements={"allowed_scopes": ["public"]}).run(
        documents=(d for d in docs), query="refunds")["documents"]
    assert out and all(any(o is d for d in docs) for o in out)

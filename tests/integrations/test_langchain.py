"""The LangChain component against the real langchain-core: the BaseDocumentCompressor contract,
sync and async, after a real in-memory retriever in a runnable chain."""

import asyncio
import copy
import dataclasses
import pickle

import pytest

langchain_core = pytest.importorskip("langchain_core")

from langchain_core.documents import BaseDocumentCompressor, Document  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402
from langchain_core.runnables import RunnableLambda  # noqa: E402
from langchain_core.vectorstores import InMemoryVectorStore  # noqa: E402

import ctxselect  # noqa: E402
from ctxselect.integrations.langchain import CtxSelectCompressor  # noqa: E402
from tests.integrations._threads import a_calls_b_calls_a_reads  # noqa: E402

DOCS = [
    Document("Annual plans can be refunded within 30 days of purchase.", id="refund-v2",
             metadata={"source": "policy", "relevance_score": 0.9, "tokens": 20}),
    Document("Annual plans can be refunded within 30 days of purchase.", id="refund-copy",
             metadata={"source": "wiki", "relevance_score": 0.85, "tokens": 20}),
    Document("Refunds go to the original payment method within five business days.", id="payout",
             metadata={"source": "policy", "relevance_score": 0.7, "tokens": 20}),
    Document("Internal: refund fraud thresholds for the risk team.", id="internal",
             metadata={"source": "risk", "relevance_score": 0.95, "tokens": 20, "scope": "internal"}),
]


def _compressor(**over):
    return CtxSelectCompressor(token_budget=100, requirements={"allowed_scopes": ["public"]}, **over)


def test_it_is_a_langchain_document_compressor_returning_the_selected_documents():
    docs = [d.model_copy(update={"metadata": {**d.metadata, "scope": d.metadata.get("scope", "public")}}) for d in DOCS]
    compressor = _compressor()
    assert isinstance(compressor, BaseDocumentCompressor)
    out = compressor.compress_documents(docs, "how long do refunds take?")
    ids = [d.id for d in out]
    assert "internal" not in ids  # outside the caller's scopes
    assert not {"refund-v2", "refund-copy"} <= set(ids)  # near-duplicates: one of them
    assert "payout" in ids and all(isinstance(d, Document) for d in out)
    assert [d.metadata["ctxselect"]["position"] for d in out] == list(range(len(out)))
    assert docs[0].metadata.get("ctxselect") is None  # the inputs are not modified
    sel = compressor.last_selection
    assert isinstance(sel, ctxselect.Selection) and sel.status == out[0].metadata["ctxselect"]["status"]
    assert sel.excluded["3:internal"].startswith("inadmissible")


def test_async_and_empty_input():
    docs = [d.model_copy(update={"metadata": {**d.metadata, "scope": "public"}}) for d in DOCS[:3]]
    compressor = _compressor()
    out = asyncio.run(compressor.acompress_documents(docs, "refund window"))
    assert out and {d.id for d in out} <= {"refund-v2", "refund-copy", "payout"}
    assert compressor.compress_documents([], "anything") == []


def test_after_a_real_retriever_in_a_chain_without_scores():
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents([Document(f"Note {k}: refunds are handled by team {k}.", id=f"n{k}", metadata={"scope": "public"})
                         for k in range(12)])
    compressor = _compressor(method="greedy")
    chain = store.as_retriever(search_kwargs={"k": 8}) | RunnableLambda(
        lambda docs: compressor.compress_documents(docs, "who handles refunds?"))
    out = chain.invoke("who handles refunds?")
    sel = compressor.last_selection
    assert 1 <= len(out) <= 8 and [d.id for d in out] == [i.split(":", 1)[1] for i in sel.ids]
    assert sel.tokens <= 100 and len(sel.ids) + len(sel.excluded) == 8  # the retriever's 8, each accounted for


def test_a_bad_document_field_is_a_located_error():
    bad = Document("text", id="x", metadata={"relevance_score": "high", "scope": "public"})
    with pytest.raises(ctxselect.InputError, match=r"candidate '0:x', field 'relevance'"):
        _compressor().compress_documents([bad], "q")


# -- inside LangChain's own retrievers (langchain-classic: LangChain >= 1.0 moved them there) ------

def _store(texts):
    store = InMemoryVectorStore(DeterministicFakeEmbedding(size=32))
    store.add_documents([Document(text, id=f"d{k}") for k, text in enumerate(texts)])  # no metadata at all
    return store


TEXTS = ["Annual plans can be refunded within 30 days of purchase.",
         "Annual plans can be refunded within 30 days of purchase.",
         "Refunds reach the original payment method within five business days.",
         "Monthly plans are not refunded; cancel before the renewal date.",
         "Invoices are sent on the first day of each month.",
         "Support answers refund questions by email within one day."]


def test_in_a_contextual_compression_retriever():
    retrievers = pytest.importorskip("langchain_classic.retrievers")
    store = _store(TEXTS)
    # the user's three lines
    compressor = CtxSelectCompressor(token_budget=40)
    retriever = retrievers.ContextualCompressionRetriever(base_compressor=compressor,
                                                          base_retriever=store.as_retriever(search_kwargs={"k": 6}))
    out = retriever.invoke("How do refunds work for annual plans?")
    sel = compressor.last_selection
    assert out and all(isinstance(d, Document) for d in out)
    assert [d.id for d in out] == [cid.split(":", 1)[1] for cid in sel.ids]  # assembly order
    assert [d.metadata["ctxselect"]["position"] for d in out] == list(range(len(out)))
    assert sel.tokens <= 40 and len(sel.ids) + len(sel.excluded) == 6  # the retriever's 6, each accounted for
    assert not {"d0", "d1"} <= {d.id for d in out}  # the exact duplicate pair: at most one
    assert len(out) < 6  # the budget left some out
    again = asyncio.run(retriever.ainvoke("How do refunds work for annual plans?"))
    assert [d.id for d in again] == [d.id for d in out]


def test_last_in_a_document_compressor_pipeline_after_a_splitter():
    pytest.importorskip("langchain_classic")
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_classic.retrievers.document_compressors import DocumentCompressorPipeline
    from langchain_text_splitters import CharacterTextSplitter

    store = _store([" ".join(TEXTS[k:k + 3]) for k in range(0, 6, 3)])  # two long documents
    splitter = CharacterTextSplitter(separator=". ", chunk_size=60, chunk_overlap=0)
    pipeline = DocumentCompressorPipeline(transformers=[splitter, CtxSelectCompressor(token_budget=30)])
    retriever = ContextualCompressionRetriever(base_compressor=pipeline, base_retriever=store.as_retriever())
    out = retriever.invoke("refund window")
    sel = pipeline.transformers[1].last_selection
    assert out and len(sel.ids) + len(sel.excluded) > 2  # the splitter's chunks, not the two documents
    assert sum(ctxselect.default_token_counter(d.page_content) for d in out) == sel.tokens <= 30


def test_a_source_rule_needs_every_documents_source():
    docs = [Document("Refunds take five days.", id="a", metadata={"source": "policy"}),
            Document("Refunds take a week.", id="b")]
    compressor = CtxSelectCompressor(token_budget=50, requirements={"required_sources": ["policy"]})
    with pytest.raises(ctxselect.InputError, match=r"^candidate '1:b', field 'source': missing required field; "
                                                   r"expected a source name, since the requirements set required_sources$"):
        compressor.compress_documents(docs, "refunds")
    assert len(compressor.model_copy(update={"default_source": "web"}).compress_documents(docs, "refunds")) >= 1
    assert len(CtxSelectCompressor(token_budget=50).compress_documents(docs, "refunds")) >= 1  # no rule: no source needed


def test_no_earlier_selection_shows_after_an_empty_or_failed_call():
    # a compressor shared between requests kept the last non-empty call's selection (its texts included)
    docs = [d.model_copy(update={"metadata": {**d.metadata, "scope": "public"}}) for d in DOCS[:3]]
    compressor = _compressor()
    compressor.compress_documents(docs, "tenant A's question")
    assert compressor.last_selection is not None
    assert compressor.compress_documents([], "tenant B's question") == [] and compressor.last_selection is None
    compressor.compress_documents(docs, "tenant A's question")
    bad = Document("text", id="x", metadata={"relevance_score": 12.0})
    with pytest.raises(ctxselect.InputError):
        compressor.compress_documents([bad], "q")
    assert compressor.last_selection is None


def test_each_call_stamps_its_own_status(monkeypatch):
    # the copies read the status off the shared attribute, which another call may set in between
    import ctxselect.integrations.langchain as lc

    docs = [d.model_copy(update={"metadata": {**d.metadata, "scope": "public"}}) for d in DOCS[:3]]
    compressor = _compressor()
    real = lc.choose

    class Landing(list):  # another call's selection lands while this call's copies are made
        def __iter__(self):
            compressor._last.set(dataclasses.replace(self.selection, status="another call's"))
            return super().__iter__()

    def choose_then_overwritten(*args):
        selection, chosen = real(*args)
        landing = Landing(chosen)
        landing.selection = selection
        return selection, landing

    monkeypatch.setattr(lc, "choose", choose_then_overwritten)
    out = compressor.compress_documents(docs, "refund window")
    assert out and {d.metadata["ctxselect"]["status"] for d in out} == {"optimal"}


def test_last_selection_is_this_threads_last_call():
    # four threads sharing one compressor read another thread's selection (its candidate texts included)
    a_docs = [d.model_copy(update={"metadata": {**d.metadata, "scope": "public"}}) for d in DOCS[:3]]
    b_docs = [Document("Tenant B's only note.", id="b-note", metadata={"scope": "public"})]
    compressor = _compressor()
    a, b = a_calls_b_calls_a_reads(lambda docs: compressor.compress_documents(docs, "q"),
                                   lambda: compressor.last_selection, a_docs, b_docs)
    assert b.ids == ["0:b-note"]
    assert a is not b and "0:b-note" not in a.ids and len(a.ids) + len(a.excluded) == 3
    assert compressor.last_selection is None  # this (third) thread made no call


def test_the_per_thread_record_constructs_copies_pickles_and_serialises_as_before():
    docs = [d.model_copy(update={"metadata": {**d.metadata, "scope": "public"}}) for d in DOCS[:3]]
    compressor = _compressor()
    out = asyncio.run(compressor.acompress_documents(docs, "refund window"))  # computed on an executor thread
    assert [d.id for d in out] == [cid.split(":", 1)[1] for cid in compressor.last_selection.ids]
    for clone in (compressor.model_copy(), copy.deepcopy(compressor), pickle.loads(pickle.dumps(compressor))):
        assert clone.last_selection is None and clone.token_budget == 100
        assert clone.requirements == compressor.requirements
        assert [d.id for d in clone.compress_documents(docs, "refund window")] == [d.id for d in out]
    assert compressor.model_dump()["token_budget"] == 100 and "_last" not in compressor.model_dump()


@pytest.mark.parametrize("key", ["bogus", "method", "requirements"])
def test_a_select_option_select_does_not_take_fails_at_construction(key):
    # it failed on the first call, with select()'s TypeError ("unexpected keyword", "multiple values")
    with pytest.raises(ctxselect.InputError, match=rf"^field 'select_options\.{key}': .*expected one of order, "
                                                   r"enforce_gate, time_limit, .*relevance$"):
        CtxSelectCompressor(token_budget=5, select_options={key: 1})
    compressor = CtxSelectCompressor(token_budget=5, select_options={"time_limit": 0.5})
    compressor.select_options[key] = 1  # set after construction: the call refuses it the same way
    with pytest.raises(ctxselect.InputError, match=rf"select_options\.{key}"):
        compressor.compress_documents([Document("a note", id="a")], "q")


class _Unformattable:
    def __format__(self, spec):
        raise RuntimeError("no")


@pytest.mark.parametrize("documents, message", [
    (["Internal: secret plan"], r"^field 'documents': document #0: expected a langchain Document, found str$"),
    ([Document("ok", id="a"), None],
     r"^field 'documents': document #1: expected a langchain Document, found NoneType$"),
    (None, r"^field 'documents': expected an iterable of langchain Documents, found NoneType$"),
    ([Document.model_construct(page_content="abc", metadata=[1, 2])],
     r"^field 'metadata': document #0: expected a dict, found list$"),
    ([Document("abc", metadata={"id": _Unformattable()})],
     r"^field 'id': document #0: expected an id that formats as text, found _Unformattable$"),
])
def test_items_or_metadata_of_the_wrong_type_are_located_errors(documents, message):
    # these raised AttributeError or TypeError (and a str item's text must not appear in the message)
    with pytest.raises(ctxselect.InputError, match=message):
        _compressor().compress_documents(documents, "q")


def test_any_iterable_of_documents_is_read():
    docs = (d.model_copy(update={"metadata": {**d.metadata, "scope": "public"}}) for d in DOCS[:3])
    out = _compressor().compress_documents(docs, "refund window")
    assert out and {d.id for d in out} <= {"refund-v2", "refund-copy", "payout"}

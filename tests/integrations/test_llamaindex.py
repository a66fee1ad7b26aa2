"""The LlamaIndex component against the real llama-index-core: the BaseNodePostprocessor contract,
called directly and in a query engine's postprocessor list."""

import asyncio
import copy
import pickle

import pytest

pytest.importorskip("llama_index.core")

from llama_index.core import Settings, VectorStoreIndex  # noqa: E402
from llama_index.core.embeddings import MockEmbedding  # noqa: E402
from llama_index.core.llms import MockLLM  # noqa: E402
from llama_index.core.postprocessor.types import BaseNodePostprocessor  # noqa: E402
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # noqa: E402

import ctxselect  # noqa: E402
from ctxselect.integrations.llamaindex import CtxSelectPostprocessor  # noqa: E402
from tests.integrations._threads import a_calls_b_calls_a_reads  # noqa: E402

TEXTS = ["Annual plans can be refunded within 30 days of purchase.",
         "Annual plans can be refunded within 30 days of purchase.",
         "Refunds reach the original payment method within five business days.",
         "Internal: refund fraud thresholds for the risk team."]


def _nodes(scores=(0.9, 0.85, 0.7, 0.95)):
    scopes = ["public", "public", "public", "internal"]
    return [NodeWithScore(node=TextNode(text=t, id_=f"n{k}", metadata={"source": "policy", "scope": s, "tokens": 20}),
                          score=score) for k, (t, s, score) in enumerate(zip(TEXTS, scopes, scores))]


def test_it_is_a_node_postprocessor_returning_the_callers_nodes():
    nodes = _nodes()
    pp = CtxSelectPostprocessor(token_budget=100, requirements={"allowed_scopes": ["public"]})
    assert isinstance(pp, BaseNodePostprocessor)
    out = pp.postprocess_nodes(nodes, query_str="how long do refunds take?")
    assert all(any(o is n for n in nodes) for o in out)  # the same objects
    ids = [o.node.node_id for o in out]
    assert "n3" not in ids and not {"n0", "n1"} <= set(ids) and "n2" in ids
    assert isinstance(pp.last_selection, ctxselect.Selection) and pp.last_selection.excluded["3:n3"].startswith("inadmissible")
    assert pp.postprocess_nodes([], query_str="q") == []


def test_scores_outside_zero_one_are_refused_unless_ranks_are_used():
    pp = CtxSelectPostprocessor(token_budget=100)
    with pytest.raises(ctxselect.InputError, match=r"candidate '0:n0', field 'relevance': expected a number in \[0, 1\]"):
        pp.postprocess_nodes(_nodes(scores=(12.5, 9.0, 3.0, 1.0)), query_str="q")
    ranked = CtxSelectPostprocessor(token_budget=100, use_scores=False)
    assert ranked.postprocess_nodes(_nodes(scores=(12.5, 9.0, 3.0, 1.0)), query_str="q")


def test_in_a_query_engine_postprocessor_list():
    Settings.llm, Settings.embed_model = MockLLM(), MockEmbedding(embed_dim=16)
    index = VectorStoreIndex([TextNode(text=f"Note {k}: refunds are handled by team {k}.", id_=f"t{k}",
                                       metadata={"scope": "public"}) for k in range(12)])
    pp = CtxSelectPostprocessor(token_budget=60, use_scores=False)
    engine = index.as_query_engine(similarity_top_k=8, node_postprocessors=[pp])
    response = engine.query("who handles refunds?")
    sel = pp.last_selection
    assert [n.node.node_id for n in response.source_nodes] == [i.split(":", 1)[1] for i in sel.ids]
    assert 1 <= len(sel.ids) and len(sel.ids) + len(sel.excluded) == 8 and sel.tokens <= 60


def test_no_earlier_selection_shows_after_an_empty_or_failed_call():
    # a postprocessor shared between requests kept the last non-empty call's selection (its texts included)
    pp = CtxSelectPostprocessor(token_budget=100, requirements={"allowed_scopes": ["public"]})
    pp.postprocess_nodes(_nodes(), query_str="tenant A's question")
    assert pp.last_selection is not None
    assert pp.postprocess_nodes([], query_str="tenant B's question") == [] and pp.last_selection is None
    pp.postprocess_nodes(_nodes(), query_str="tenant A's question")
    with pytest.raises(ctxselect.InputError):
        pp.postprocess_nodes(_nodes(scores=(12.0, 0.5, 0.5, 0.5)), query_str="q")
    assert pp.last_selection is None


def test_last_selection_is_this_threads_last_call():
    # threads sharing one postprocessor read another thread's selection (its candidate texts included)
    post = CtxSelectPostprocessor(token_budget=100, requirements={"allowed_scopes": ["public"]})
    b_nodes = [NodeWithScore(node=TextNode(text="Tenant B's only note.", id_="b-note", metadata={"scope": "public"}))]
    a, b = a_calls_b_calls_a_reads(lambda nodes: post.postprocess_nodes(nodes, query_str="q"),
                                   lambda: post.last_selection, _nodes(), b_nodes)
    assert b.ids == ["0:b-note"]
    assert "0:b-note" not in a.ids and len(a.ids) + len(a.excluded) == 4
    assert post.last_selection is None  # this (third) thread made no call


def test_async_copies_and_serialisation_keep_their_own_last_selection():
    post = CtxSelectPostprocessor(token_budget=100, requirements={"allowed_scopes": ["public"]})
    out = asyncio.run(post.apostprocess_nodes(_nodes(), query_str="refunds"))  # on a worker thread
    assert [n.node.node_id for n in out] == [cid.split(":", 1)[1] for cid in post.last_selection.ids]
    for clone in (post.model_copy(), copy.deepcopy(post), pickle.loads(pickle.dumps(post)),
                  CtxSelectPostprocessor.from_dict(post.to_dict())):
        assert clone.last_selection is None and clone.token_budget == 100
        assert clone.postprocess_nodes(_nodes(), query_str="refunds") == out


@pytest.mark.parametrize("key", ["bogus", "method", "requirements"])
def test_a_select_option_select_does_not_take_fails_at_construction(key):
    # it failed on the first call, with select()'s TypeError ("unexpected keyword", "multiple values")
    with pytest.raises(ctxselect.InputError, match=rf"^field 'select_options\.{key}': .*expected one of order, "
                                                   r"enforce_gate, time_limit, .*relevance$"):
        CtxSelectPostprocessor(token_budget=5, select_options={key: 1})
    assert CtxSelectPostprocessor(token_budget=100, select_options={"time_limit": 0.5}).postprocess_nodes(
        _nodes(), query_str="refunds")


@pytest.mark.parametrize("call, message", [
    (lambda p: p.postprocess_nodes(_nodes(), "refund"),
     r"^field 'query_bundle': expected a llama_index QueryBundle \(a query string goes in query_str=\), found str$"),
    (lambda p: p.postprocess_nodes(_nodes(), query_bundle="refund"), r"found str$"),
    (lambda p: p.postprocess_nodes([None], query_str="q"),
     r"^field 'nodes': node #0: expected a llama_index NodeWithScore, found NoneType$"),
    (lambda p: p.postprocess_nodes([TextNode(text="Internal: secret plan")], query_str="q"),
     r"^field 'nodes': node #0: expected a llama_index NodeWithScore, found TextNode$"),
    (lambda p: p.postprocess_nodes(None, query_str="q"), r"^field 'nodes': expected an iterable"),
])
def test_a_query_or_node_of_the_wrong_type_is_a_located_error(call, message):
    # these raised AttributeError (a str query_bundle, as LlamaIndex's own postprocessors would; a TextNode)
    post = CtxSelectPostprocessor(token_budget=100)
    with pytest.raises(ctxselect.InputError, match=message):
        call(post)
    assert post.postprocess_nodes(_nodes(), QueryBundle("refund"))  # the contract's own form still works

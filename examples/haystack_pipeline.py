"""ctxselect in a Haystack pipeline after a BM25 retriever (needs ``pip install 'ctxselect[haystack]'``).

    python examples/haystack_pipeline.py
"""

from haystack import Document, Pipeline
from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
from haystack.document_stores.in_memory import InMemoryDocumentStore

from ctxselect.integrations.haystack import CtxSelectRanker

store = InMemoryDocumentStore()
store.write_documents([
    Document(content="Annual plans can be refunded within 30 days of purchase.", meta={"source": "policy"}),
    Document(content="Annual plans can be refunded within 30 days of purchase!", meta={"source": "wiki"}),
    Document(content="Refunds reach the original payment method within five business days.", meta={"source": "policy"}),
    Document(content="Monthly plans are not refunded; cancel before the renewal date.", meta={"source": "policy"}),
])
pipeline = Pipeline()
pipeline.add_component("retriever", InMemoryBM25Retriever(store, top_k=4))
pipeline.add_component("select", CtxSelectRanker(token_budget=60, use_scores=False))  # BM25 scores are unbounded
pipeline.connect("retriever.documents", "select.documents")
question = "How do refunds work for annual plans?"
result = pipeline.run({"retriever": {"query": question}, "select": {"query": question}})
for doc in result["select"]["documents"]:
    print(doc.meta["source"], doc.content)
selection = pipeline.get_component("select").last_selection
print("status:", selection.status)
for cid, why in selection.excluded.items():
    print("left out", cid, "-", why)

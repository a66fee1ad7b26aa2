"""ctxselect after a LangChain retriever (needs ``pip install 'ctxselect[langchain]'``; the
ContextualCompressionRetriever part runs when ``langchain-classic`` is installed too).

    python examples/langchain_compressor.py
"""

from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.vectorstores import InMemoryVectorStore

from ctxselect.integrations.langchain import CtxSelectCompressor

store = InMemoryVectorStore(DeterministicFakeEmbedding(size=64))
store.add_documents([
    Document("Annual plans can be refunded within 30 days of purchase.", metadata={"source": "policy"}),
    Document("Annual plans can be refunded within 30 days of purchase.", metadata={"source": "wiki"}),
    Document("Refunds reach the original payment method within five business days.", metadata={"source": "policy"}),
    Document("Monthly plans are not refunded; cancel before the renewal date.", metadata={"source": "policy"}),
])
question = "How do refunds work for annual plans?"
retrieved = store.as_retriever(search_kwargs={"k": 4}).invoke(question)

compressor = CtxSelectCompressor(token_budget=60)
for doc in compressor.compress_documents(retrieved, question):
    print(doc.metadata["ctxselect"]["position"], doc.metadata["source"], doc.page_content)
print("status:", compressor.last_selection.status)
for cid, why in compressor.last_selection.excluded.items():
    print("left out", cid, "-", why)

try:  # LangChain's own wrapper: langchain-classic (LangChain >= 1.0), or langchain before it
    from langchain_classic.retrievers import ContextualCompressionRetriever
except ImportError:
    try:
        from langchain.retrievers import ContextualCompressionRetriever
    except ImportError:
        ContextualCompressionRetriever = None
if ContextualCompressionRetriever is not None:
    retriever = ContextualCompressionRetriever(base_compressor=compressor,
                                               base_retriever=store.as_retriever(search_kwargs={"k": 4}))
    print("ContextualCompressionRetriever:", [d.page_content[:30] for d in retriever.invoke(question)])

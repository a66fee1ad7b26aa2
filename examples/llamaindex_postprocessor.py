"""ctxselect in a LlamaIndex query engine (needs ``pip install 'ctxselect[llamaindex]'``).

    python examples/llamaindex_postprocessor.py
"""

from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.schema import TextNode

from ctxselect.integrations.llamaindex import CtxSelectPostprocessor

Settings.llm, Settings.embed_model = MockLLM(), MockEmbedding(embed_dim=32)  # no model downloads
index = VectorStoreIndex([
    TextNode(text="Annual plans can be refunded within 30 days of purchase.", metadata={"source": "policy"}),
    TextNode(text="Annual plans can be refunded within 30 days of purchase.", metadata={"source": "wiki"}),
    TextNode(text="Refunds reach the original payment method within five business days.", metadata={"source": "policy"}),
    TextNode(text="Monthly plans are not refunded; cancel before the renewal date.", metadata={"source": "policy"}),
])
postprocessor = CtxSelectPostprocessor(token_budget=60, use_scores=False)  # mock scores are no relevance
response = index.as_query_engine(similarity_top_k=4, node_postprocessors=[postprocessor]).query(
    "How do refunds work for annual plans?")
for node in response.source_nodes:
    print(node.node.metadata["source"], node.node.get_content())
print("status:", postprocessor.last_selection.status)
for cid, why in postprocessor.last_selection.excluded.items():
    print("left out", cid, "-", why)

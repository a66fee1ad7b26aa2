"""ctxselect as a LangChain document compressor (``pip install 'ctxselect[langchain]'``).

:class:`CtxSelectCompressor` follows LangChain's ``BaseDocumentCompressor`` contract:
``compress_documents(documents, query)`` (and its async twin) returns the documents ctxselect
selects, in assembly order, so it drops into a ``ContextualCompressionRetriever``, a
``DocumentCompressorPipeline`` or a ``RunnableLambda`` after any retriever::

    from ctxselect.integrations.langchain import CtxSelectCompressor
    compressor = CtxSelectCompressor(token_budget=2000)
    docs = compressor.compress_documents(retriever.invoke(question), question)

Fields are read by name from each document: the text from ``page_content``; the id from
``Document.id``, else ``metadata[id_key]``, else the position; the source, relevance, timestamp,
scope and token count from ``metadata`` (``source_key``, ``score_key`` ...). A document without a
score gets a relevance from its retrieval rank (1 for the first, falling linearly). The
documents returned are copies with ``metadata["ctxselect"]`` = ``{"position", "status"}`` (LangChain's
compressors return copies; the inputs are not modified); the whole :class:`ctxselect.Selection`
of this thread's last call is :attr:`CtxSelectCompressor.last_selection` (its ids are
``"<position>:<document id>"``, unique even when documents share an id; per thread, so a compressor
shared between threads never shows one request another's).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.runnables.config import run_in_executor
from pydantic import ConfigDict, Field, PrivateAttr

from ctxselect.integrations._fields import LastSelection, candidate, check_select_options, choose, items, refuse
from ctxselect.selection.api import Selection

__all__ = ["CtxSelectCompressor"]


class CtxSelectCompressor(BaseDocumentCompressor):
    """Select the retrieved documents that go into the context window.

    Parameters
    ----------
    token_budget : int
        The context's token budget.
    requirements : dict, optional
        Any other requirement key (``required_sources``, ``allowed_scopes``, ``gate`` ...).
    method : str
        ``optimal`` (default) or a baseline (``greedy``, ``topk``, ``density``, ``mmr``).
    select_options : dict, optional
        Keyword arguments of :func:`ctxselect.select` (``time_limit``, ``weights`` ...), all but those the
        component passes itself (``requirements``, ``method``); another key is an :class:`ctxselect.InputError`
        at construction, listing the valid ones.
    id_key, source_key, score_key, timestamp_key, scope_key, tokens_key : str
        Metadata keys the fields are read from.
    default_source : str, optional
        The source of a document whose metadata names none (default: none; a source rule
        in ``requirements`` then refuses it, naming the document).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    token_budget: int
    requirements: dict = Field(default_factory=dict)
    method: str = "optimal"
    select_options: dict = Field(default_factory=dict)
    id_key: str = "id"
    source_key: str = "source"
    score_key: str = "relevance_score"
    timestamp_key: str = "timestamp"
    scope_key: str = "scope"
    tokens_key: str = "tokens"
    default_source: Optional[str] = None
    _last: LastSelection = PrivateAttr(default_factory=LastSelection)

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        check_select_options(self.select_options)  # a key select() does not take fails here, not on the first call

    @property
    def last_selection(self) -> Optional[Selection]:
        """The :class:`ctxselect.Selection` of this thread's last call (report, reasons, unresolved
        conflicts); None before this thread's first call, after a call with no documents and after one
        that failed. Each thread sees its own (``acompress_documents``: the awaiting thread's)."""
        return self._last.get()

    def __copy__(self) -> "CtxSelectCompressor":  # pydantic's shallow copy would share the per-thread record
        clone = super().__copy__()
        clone._last = LastSelection()
        return clone

    def _candidate(self, k: int, n: int, doc: Document) -> dict[str, Any]:
        meta = doc.metadata if doc.metadata is not None else {}
        if not isinstance(meta, Mapping):
            raise refuse("document", k, "metadata", "a dict", meta)
        doc_id = doc.id if getattr(doc, "id", None) else meta.get(self.id_key, k)
        keys = {"source": self.source_key, "timestamp": self.timestamp_key, "scope": self.scope_key,
                "tokens": self.tokens_key}
        return candidate(k, n, doc_id, doc.page_content, meta, meta.get(self.score_key), keys, self.default_source)

    def compress_documents(self, documents: Sequence[Document], query: str,
                           callbacks: Optional[Callbacks] = None) -> Sequence[Document]:
        """The documents ctxselect selects for ``query``, in assembly order (copies, with
        ``metadata["ctxselect"]``).

        Raises
        ------
        ctxselect.InputError
            For ``documents`` that is no iterable of ``Document`` or a document whose fields ctxselect cannot
            read (naming the document and field; never quoting its text).
        """
        self._last.set(None)  # a call with no documents, or one that fails, shows no earlier call's
        selection, out = self._compress(documents, query)
        self._last.set(selection)
        return out

    async def acompress_documents(self, documents: Sequence[Document], query: str,
                                  callbacks: Optional[Callbacks] = None) -> Sequence[Document]:
        """:meth:`compress_documents` in an executor thread; :attr:`last_selection` is then the awaiting
        thread's."""
        self._last.set(None)
        selection, out = await run_in_executor(None, self._compress, documents, query)
        self._last.set(selection)
        return out

    def _compress(self, documents: Sequence[Document], query: str) -> tuple[Optional[Selection], list[Document]]:
        documents = items(documents, "document", "documents", Document, "a langchain Document")
        if not documents:
            return None, []
        selection, chosen = choose(documents, self._candidate, self.requirements, self.token_budget, query,
                                   self.method, self.select_options)
        return selection, [doc.model_copy(update={"metadata": dict(doc.metadata or {}, ctxselect={
            "position": place, "status": selection.status})}) for place, doc in enumerate(chosen)]

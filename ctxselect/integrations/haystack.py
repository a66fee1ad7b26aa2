"""ctxselect as a Haystack 2.x component (``pip install 'ctxselect[haystack]'``).

:class:`CtxSelectRanker` is a ``@component`` with ``run(documents, query) -> {"documents": [...]}``:
it returns the caller's own ``Document`` objects that ctxselect selects, in assembly order, so it
goes after any retriever or ranker in a ``Pipeline``::

    from ctxselect.integrations.haystack import CtxSelectRanker
    pipeline.add_component("select", CtxSelectRanker(token_budget=2000))
    pipeline.connect("retriever.documents", "select.documents")

A document's text is ``content``; its relevance is its ``score`` (which must then lie in [0, 1];
with ``use_scores=False``, or without a score, the retrieval rank gives it); source, timestamp,
scope and token count come from ``meta`` by name. The whole :class:`ctxselect.Selection` of this
thread's last run is :attr:`CtxSelectRanker.last_selection` (ids ``"<position>:<document id>"``; None
after a run with no documents or one that failed; per thread, so a component shared between threads
never shows one request another's).
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

from haystack import Document, component, default_from_dict, default_to_dict

from ctxselect.integrations._fields import LastSelection, candidate, check_select_options, choose, items
from ctxselect.selection.api import Selection

__all__ = ["CtxSelectRanker"]


@component
class CtxSelectRanker:
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
    use_scores : bool
        Read relevance from the documents' scores (they must lie in [0, 1]); else from their rank.
    source_key, timestamp_key, scope_key, tokens_key : str
        ``meta`` keys the fields are read from.
    default_source : str, optional
        The source of a document whose meta names none (default: none; a source rule
        in ``requirements`` then refuses it, naming the document).
    """

    def __init__(self, token_budget: int, requirements: Optional[dict] = None, method: str = "optimal",
                 select_options: Optional[dict] = None, use_scores: bool = True, source_key: str = "source",
                 timestamp_key: str = "timestamp", scope_key: str = "scope", tokens_key: str = "tokens",
                 default_source: Optional[str] = None) -> None:
        self.token_budget, self.requirements, self.method = token_budget, dict(requirements or {}), method
        self.select_options, self.use_scores = check_select_options(select_options), use_scores
        self.keys = {"source": source_key, "timestamp": timestamp_key, "scope": scope_key, "tokens": tokens_key}
        self.default_source = default_source
        self._last = LastSelection()

    @property
    def last_selection(self) -> Optional[Selection]:
        """The :class:`ctxselect.Selection` of this thread's last run (report, reasons, unresolved
        conflicts); None before this thread's first run, after a run with no documents and after one that
        failed. Each thread sees its own (``run_async``: the awaiting thread's)."""
        return self._last.get()

    def to_dict(self) -> dict[str, Any]:
        """The component's configuration, for Haystack's pipeline serialisation."""
        return default_to_dict(self, token_budget=self.token_budget, requirements=self.requirements,
                               method=self.method, select_options=self.select_options, use_scores=self.use_scores,
                               source_key=self.keys["source"], timestamp_key=self.keys["timestamp"],
                               scope_key=self.keys["scope"], tokens_key=self.keys["tokens"],
                               default_source=self.default_source)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "CtxSelectRanker":
        return default_from_dict(cls, data)

    def _candidate(self, k: int, n: int, doc: Document) -> dict[str, Any]:
        return candidate(k, n, doc.id, doc.content or "", doc.meta, doc.score if self.use_scores else None,
                         self.keys, self.default_source)

    @component.output_types(documents=list[Document])
    def run(self, documents: list[Document], query: str = "") -> dict[str, list[Document]]:
        """The documents ctxselect selects for ``query``, in assembly order (the same objects).

        Raises
        ------
        ctxselect.InputError
            For ``documents`` that is no iterable of ``Document`` (a generator is read as a list), or a
            document whose fields ctxselect cannot read (naming the document and field; never quoting its text).
        """
        self._last.set(None)  # a call with no documents, or one that fails, shows no earlier call's
        selection, chosen = self._select(documents, query)
        self._last.set(selection)
        return {"documents": chosen}

    @component.output_types(documents=list[Document])
    async def run_async(self, documents: list[Document], query: str = "") -> dict[str, list[Document]]:
        """:meth:`run` in a worker thread (for ``Pipeline.run_async``); :attr:`last_selection` is then the
        awaiting thread's."""
        self._last.set(None)
        selection, chosen = await asyncio.to_thread(self._select, documents, query)
        self._last.set(selection)
        return {"documents": chosen}

    def _select(self, documents: list[Document], query: str) -> tuple[Optional[Selection], list[Document]]:
        documents = items(documents, "document", "documents", Document, "a haystack Document")  # any iterable
        if not documents:
            return None, []
        return choose(documents, self._candidate, self.requirements, self.token_budget, query, self.method,
                      self.select_options)

"""ctxselect as a LlamaIndex node postprocessor (``pip install 'ctxselect[llamaindex]'``).

:class:`CtxSelectPostprocessor` follows LlamaIndex's ``BaseNodePostprocessor`` contract: it goes in
a query engine's ``node_postprocessors`` list (or is called as ``postprocess_nodes(nodes,
query_str=...)``) and returns the caller's own ``NodeWithScore`` objects that ctxselect selects, in
assembly order::

    from ctxselect.integrations.llamaindex import CtxSelectPostprocessor
    engine = index.as_query_engine(node_postprocessors=[CtxSelectPostprocessor(token_budget=2000)])

A node's text is ``node.get_content()``; its relevance is its score (which must then lie in
[0, 1]; with ``use_scores=False``, or when a node has no score, the retrieval rank gives it: 1
for the first, falling linearly); source, timestamp, scope and token count are read from
``node.metadata`` by name. The whole :class:`ctxselect.Selection` of this thread's last call is
:attr:`CtxSelectPostprocessor.last_selection` (ids ``"<position>:<node id>"``; per thread, so a
postprocessor shared between threads never shows one request another's).
"""

from __future__ import annotations

import asyncio
from typing import Any, List, Optional

from llama_index.core.bridge.pydantic import Field, PrivateAttr
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from ctxselect.errors import InputError
from ctxselect.integrations._fields import LastSelection, candidate, check_select_options, choose, items
from ctxselect.selection.api import Selection

__all__ = ["CtxSelectPostprocessor"]


class CtxSelectPostprocessor(BaseNodePostprocessor):
    """Select the retrieved nodes that go into the context window.

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
        Read relevance from the nodes' scores (they must lie in [0, 1]); else from their rank.
    source_key, timestamp_key, scope_key, tokens_key : str
        Metadata keys the fields are read from.
    default_source : str, optional
        The source of a node whose metadata names none (default: none; a source rule
        in ``requirements`` then refuses it, naming the node).
    """

    token_budget: int
    requirements: dict = Field(default_factory=dict)
    method: str = "optimal"
    select_options: dict = Field(default_factory=dict)
    use_scores: bool = True
    source_key: str = "source"
    timestamp_key: str = "timestamp"
    scope_key: str = "scope"
    tokens_key: str = "tokens"
    default_source: Optional[str] = None
    _last: LastSelection = PrivateAttr(default_factory=LastSelection)

    @classmethod
    def class_name(cls) -> str:
        return "CtxSelectPostprocessor"

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        check_select_options(self.select_options)  # a key select() does not take fails here, not on the first call

    @property
    def last_selection(self) -> Optional[Selection]:
        """The :class:`ctxselect.Selection` of this thread's last call (report, reasons, unresolved
        conflicts); None before this thread's first call, after a call with no nodes and after one that
        failed. Each thread sees its own (``apostprocess_nodes``: the awaiting thread's)."""
        return self._last.get()

    def __copy__(self) -> "CtxSelectPostprocessor":  # pydantic's shallow copy would share the per-thread record
        clone = super().__copy__()
        clone._last = LastSelection()
        return clone

    def _candidate(self, k: int, n: int, item: NodeWithScore) -> dict[str, Any]:
        keys = {"source": self.source_key, "timestamp": self.timestamp_key, "scope": self.scope_key,
                "tokens": self.tokens_key}
        return candidate(k, n, item.node.node_id, item.node.get_content(), item.node.metadata,
                         item.score if self.use_scores else None, keys, self.default_source)

    def _postprocess_nodes(self, nodes: List[NodeWithScore],
                           query_bundle: Optional[QueryBundle] = None) -> List[NodeWithScore]:
        """The nodes ctxselect selects for the query, in assembly order (the same objects).

        Raises
        ------
        ctxselect.InputError
            For a ``query_bundle`` that is no ``QueryBundle`` (a string goes in ``query_str=``), ``nodes`` that
            is no iterable of ``NodeWithScore``, or a node whose fields ctxselect cannot read (naming the node
            and field; never quoting its text).
        """
        self._last.set(None)  # a call with no nodes, or one that fails, shows no earlier call's
        selection, chosen = self._select(nodes, query_bundle)
        self._last.set(selection)
        return chosen

    async def _apostprocess_nodes(self, nodes: List[NodeWithScore],
                                  query_bundle: Optional[QueryBundle] = None) -> List[NodeWithScore]:
        """:meth:`_postprocess_nodes` in a worker thread; :attr:`last_selection` is then the awaiting thread's."""
        self._last.set(None)
        selection, chosen = await asyncio.to_thread(self._select, nodes, query_bundle)
        self._last.set(selection)
        return chosen

    def _select(self, nodes: List[NodeWithScore],
                query_bundle: Optional[QueryBundle]) -> tuple[Optional[Selection], List[NodeWithScore]]:
        if query_bundle is not None and not isinstance(query_bundle, QueryBundle):  # BaseNodePostprocessor: a bundle
            raise InputError(field="query_bundle", message="expected a llama_index QueryBundle (a query string goes in "
                             f"query_str=), found {type(query_bundle).__name__}")
        nodes = items(nodes, "node", "nodes", NodeWithScore, "a llama_index NodeWithScore")
        if not nodes:
            return None, []
        query = query_bundle.query_str if query_bundle is not None else ""
        return choose(nodes, self._candidate, self.requirements, self.token_budget, query, self.method,
                      self.select_options)

"""A reusable selector, in the scikit-learn manner: configuration held by an object, one call per
query.

    selector = ctxselect.ContextSelector(budget=2000, weights={"sharpen": 2}, token_counter=count)
    selection = selector.select(candidates, query="...")
    context = selection.chunks      # the caller's own objects, in assembly order

The configuration is validated when the selector is made (an unknown requirement or option is an
``InputError`` then, not at the first query), and nothing process-wide is set: the token counter
and every option go to each :func:`ctxselect.select` call. A selector holds no per-call state, so
one instance may serve many threads at once.
"""

from __future__ import annotations

import asyncio
from typing import Any, Iterable, Mapping

from ctxselect.errors import InputError
from ctxselect.model import validation as checks
from ctxselect.model.requirements import Requirements
from ctxselect.model.tokens import TokenCounter, resolve_token_counter
from ctxselect.selection.api import _PARAMETERS, Selection, prepare, select
from ctxselect.selection.solvers.registry import Method, Order

__all__ = ["ContextSelector"]

#: select()'s keyword options a selector may hold (the rest of its signature is per call).
SELECT_OPTIONS = ("order", "enforce_gate", "time_limit", "mmr_lambda", "core_size", "exact_up_to",
                  "hard_conflict_severity", "exclude_outside_window", "resolve_by_corroboration", "on_unresolved",
                  "signal_options", "relevance")


class ContextSelector:
    """Choose each query's context with one configuration.

    Parameters
    ----------
    budget : int
        The token budget (the requirements' ``token_budget``).
    method : str
        ``optimal`` (default) or a baseline (``greedy``, ``topk``, ``density``, ``mmr``).
    requirements : dict or Requirements, optional
        Any other requirement key (``required_sources``, ``allowed_scopes``, ``gate`` ...).
    weights : dict, optional
        Objective weights.
    token_counter : callable, optional
        Counts the tokens of a text without a ``tokens`` count (instead of the default estimate).
    **options
        Any of :data:`SELECT_OPTIONS`, passed to every :func:`ctxselect.select` call.
    """

    def __init__(self, budget: int, method: str = "optimal", *, requirements: Mapping[str, Any] | Requirements | None = None,
                 weights: Mapping[str, float] | None = None, token_counter: TokenCounter | None = None,
                 **options: Any) -> None:
        unknown = sorted(set(options) - set(SELECT_OPTIONS))
        if unknown:
            raise InputError(field=unknown[0], message="unknown option",
                             expected="one of " + ", ".join(SELECT_OPTIONS))
        token_counter = resolve_token_counter(token_counter)  # a name or a tokenizer object too; checked now
        base = requirements.to_dict() if isinstance(requirements, Requirements) else dict(requirements or {})
        if "token_budget" in base or "budget" in base:
            raise InputError(field="requirements.token_budget", message="the budget is given twice",
                             expected="budget= only")
        self.requirements = Requirements.from_dict({**base, "token_budget": budget})  # validated now
        self.method = method
        self.weights = None if weights is None else dict(checks.mapping(weights, "weights", "an object of weights"))
        self.token_counter = token_counter
        self.options = dict(options)
        self._check()

    def _check(self) -> None:
        """Every option as :func:`ctxselect.select` checks it, without a call (nothing is logged)."""
        checks.parse_choice(Method, self.method, "method")
        if "order" in self.options:
            checks.parse_choice(Order, self.options["order"], "order")
        for name, check in _PARAMETERS.items():
            if name in self.options:
                check(self.options[name])
        keys = ("hard_conflict_severity", "on_unresolved", "signal_options", "relevance")
        prepare([], self.requirements, None, weights=self.weights, **{k: self.options[k] for k in keys if k in self.options})

    def __repr__(self) -> str:
        return (f"ContextSelector(budget={self.requirements.token_budget}, method={self.method!r}, "
                f"options={self.options!r})")

    def select(self, candidates: Iterable[Any], query: str | None = None, *,
               requirements: Mapping[str, Any] | None = None, embeddings: Any = None) -> Selection:
        """The context for one query: :func:`ctxselect.select` with this configuration.

        ``requirements`` adds or overrides requirement keys for this query only; ``Selection.chunks``
        holds the caller's own candidate objects in assembly order.
        """
        reqs = self.requirements if not requirements else Requirements.from_dict(
            {**self.requirements.to_dict(), **dict(requirements)})
        return select(candidates, reqs, query, self.method, weights=self.weights, token_counter=self.token_counter,
                      embeddings=embeddings, **self.options)

    async def aselect(self, candidates: Iterable[Any], query: str | None = None, **kwargs: Any) -> Selection:
        """:meth:`select` in a worker thread, for async callers (the event loop is not blocked)."""
        return await asyncio.to_thread(self.select, list(candidates), query, **kwargs)

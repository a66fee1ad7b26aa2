"""ctxselect: decide which retrieved chunks go into an LLM's context window.

Public API
----------
select(candidates, requirements)   choose the context: optimizer or baselines, with reasons
warm_up()                           load the solver and kernels now (at start-up), not in a first call
ContextSelector(budget=...)         the same with a configuration held by an object (thread-safe)
inspect(chunks, requirements)      score a context: the quality vector and the gate
trace(chunks, prompts) / audit(...) which chunks reached the prompt; RAGScope's audit
pack(candidates, requirements)     candidates as a struct of NumPy arrays (embeddings=: one (n, d) array)
signals(packed)                    freshness, sparse redundancy / contradiction pairs, clusters
read_dump(path) / write_dump(path, queries)
Candidate, Requirements, GateThresholds, Query, QualityReport, InputError
"""

from typing import TYPE_CHECKING

#: public name -> the module that defines it; imported on first use (PEP 562), so
#: ``import ctxselect`` costs milliseconds and Numba, OR-Tools and NumPy load with the first
#: function a program actually calls
_EXPORTS = {
    "CtxSelectError": "ctxselect.errors",
    "InputError": "ctxselect.errors",
    "ablation_variants": "ctxselect.evaluate.ablation",
    "AuditReport": "ctxselect.evaluate.audit",
    "audit": "ctxselect.evaluate.audit",
    "labelled_metrics": "ctxselect.evaluate.labelled",
    "self_consistency": "ctxselect.evaluate.labelled",
    "summarize_labelled": "ctxselect.evaluate.labelled",
    "ranking_metrics": "ctxselect.evaluate.labelled",
    "aggregate_relevance": "ctxselect.evaluate.relevance",
    "context_relevance": "ctxselect.evaluate.relevance",
    "relevance_band": "ctxselect.evaluate.relevance",
    "quality_score": "ctxselect.quality.score",
    "TracedChunk": "ctxselect.evaluate.trace",
    "trace": "ctxselect.evaluate.trace",
    "signals": "ctxselect.features.compute",
    "ConflictKind": "ctxselect.features.pairs",
    "Signals": "ctxselect.features.pairs",
    "Candidate": "ctxselect.model.candidate",
    "Query": "ctxselect.model.io",
    "read_dump": "ctxselect.model.io",
    "write_dump": "ctxselect.model.io",
    "GateThresholds": "ctxselect.model.requirements",
    "Requirements": "ctxselect.model.requirements",
    "default_token_counter": "ctxselect.model.tokens",
    "get_token_counter": "ctxselect.model.tokens",
    "set_token_counter": "ctxselect.model.tokens",
    "PackedCandidates": "ctxselect.packing",
    "pack": "ctxselect.packing",
    "GateFailure": "ctxselect.quality.gate",
    "QualityReport": "ctxselect.quality.report",
    "inspect": "ctxselect.quality.report",
    "METRIC_NAMES": "ctxselect.quality.vector",
    "Selection": "ctxselect.selection.api",
    "ContextSelector": "ctxselect.selection.selector",
    "select": "ctxselect.selection.api",
    "warm_up": "ctxselect.selection.warmup",
    "ObjectiveWeights": "ctxselect.model.weights",
    "score": "ctxselect.selection.problem",
    "Method": "ctxselect.selection.solvers.registry",
    "Order": "ctxselect.selection.solvers.registry",
}


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ctxselect' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # the eager imports, for type checkers and IDEs
    from ctxselect.errors import CtxSelectError, InputError
    from ctxselect.evaluate.ablation import ablation_variants
    from ctxselect.evaluate.audit import AuditReport, audit
    from ctxselect.evaluate.labelled import (
        labelled_metrics,
        ranking_metrics,
        self_consistency,
        summarize_labelled,
    )
    from ctxselect.evaluate.relevance import aggregate_relevance, context_relevance, relevance_band
    from ctxselect.evaluate.trace import TracedChunk, trace
    from ctxselect.features.compute import signals
    from ctxselect.features.pairs import ConflictKind, Signals
    from ctxselect.model.candidate import Candidate
    from ctxselect.model.io import Query, read_dump, write_dump
    from ctxselect.model.requirements import GateThresholds, Requirements
    from ctxselect.model.tokens import (
        default_token_counter,
        get_token_counter,
        set_token_counter,
    )
    from ctxselect.model.weights import ObjectiveWeights
    from ctxselect.packing import PackedCandidates, pack
    from ctxselect.quality.gate import GateFailure
    from ctxselect.quality.report import QualityReport, inspect
    from ctxselect.quality.score import quality_score
    from ctxselect.quality.vector import METRIC_NAMES
    from ctxselect.selection.api import Selection, select
    from ctxselect.selection.warmup import warm_up
    from ctxselect.selection.selector import ContextSelector
    from ctxselect.selection.problem import score
    from ctxselect.selection.solvers.registry import Method, Order

__version__ = "0.1.0"

__all__ = [
    "ablation_variants",
    "aggregate_relevance",
    "context_relevance",
    "labelled_metrics",
    "quality_score",
    "ranking_metrics",
    "relevance_band",
    "self_consistency",
    "summarize_labelled",
    "trace",
    "TracedChunk",
    "AuditReport",
    "audit",
    "Candidate",
    "ConflictKind",
    "CtxSelectError",
    "GateFailure",
    "GateThresholds",
    "InputError",
    "METRIC_NAMES",
    "Method",
    "ObjectiveWeights",
    "Order",
    "PackedCandidates",
    "QualityReport",
    "Query",
    "Requirements",
    "default_token_counter",
    "get_token_counter",
    "inspect",
    "pack",
    "read_dump",
    "score",
    "select",
    "warm_up",
    "ContextSelector",
    "Selection",
    "set_token_counter",
    "Signals",
    "signals",
    "write_dump",
]

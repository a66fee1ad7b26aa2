"""ctxselect: decide which retrieved chunks go into an LLM's context window.

Public API
----------
select(candidates, requirements)   choose the context: optimizer or baselines, with reasons
inspect(chunks, requirements)      score a context: the quality vector and the gate
trace(chunks, prompts) / audit(...) which chunks reached the prompt; RAGScope's audit
pack(candidates, requirements)     candidates as a struct of NumPy arrays
signals(packed)                    freshness, sparse redundancy / contradiction pairs, clusters
read_dump(path) / write_dump(path, queries)
Candidate, Requirements, GateThresholds, Query, QualityReport, InputError
"""

from .ablation import ablation_variants
from .audit import AuditReport, audit
from .candidate import Candidate
from .dump import Query, read_dump, write_dump
from .errors import CtxSelectError, InputError
from .gate import GateFailure
from .inspection import QualityReport, inspect
from .labelled import labelled_metrics, self_consistency, summarize_labelled
from .objective import ObjectiveWeights, score
from .packing import PackedCandidates, pack
from .quality import METRIC_NAMES
from .relevance import aggregate_relevance, relevance_band
from .requirements import GateThresholds, Requirements
from .selection import Selection, select
from .selectors.registry import Method, Order
from .signals import ConflictKind, Signals, signals
from .tokens import default_token_counter, get_token_counter, set_token_counter
from .trace import TracedChunk, trace

__version__ = "0.1.0"

__all__ = [
    "ablation_variants",
    "aggregate_relevance",
    "labelled_metrics",
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
    "Selection",
    "set_token_counter",
    "Signals",
    "signals",
    "write_dump",
]

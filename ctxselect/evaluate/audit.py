"""The trace audit RAGScope gives (shared seed 002; RAGScope v0.4.1's scorer, reimplemented).

Input: the retrieved chunks of one trace, each with what was observed about it — retrieval rank,
reranked rank, tokens, whether it reached the prompt, its position there, its overlap with the
next chunk and whether the retriever logged its score (see :func:`ctxselect.trace`). Output: four
or five sub-scores (0–100), a weighted overall score, a PASS / WARN / FAIL label and the
recommendation sentences, rounded as JavaScript's ``Math.round`` rounds (halves up).

- precision = round(100·used/n) − 12 per high-rank chunk buried mid-context (at most 36), where
  "buried" means in-context, strictly inside the middle half of the in-context positions (needs
  more than 3 in context) and with retrieval rank ≤ max(3, ⌈n/3⌉);
- efficiency = round(100·in-context tokens / all tokens);
- uniqueness = round(100·(1 − mean overlap_with_next)) over chunks that have an overlap;
- coverage = round(100·(1 − chunks missing a score / n));
- rerank-gain (only when some chunk was reranked) = round(50 + 12.5·mean(rank_retrieval −
  rank_reranked)) over the reranked chunks that reached the prompt (all reranked ones when none
  did), clipped to [0, 100];
- overall = round(0.4·precision + 0.3·efficiency + 0.2·uniqueness + 0.1·coverage), or with a
  reranker 0.35 / 0.25 / 0.15 (rerank-gain) / 0.15 / 0.10; PASS ≥ 75, WARN ≥ 50, else FAIL.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ctxselect.errors import InputError
from ctxselect.evaluate.trace import TracedChunk
from ctxselect.model import validation as checks

__all__ = ["CHUNK_KEYS", "AuditChunk", "AuditReport", "audit", "js_round"]


def js_sum(values) -> float:
    """Left-to-right float addition, as JavaScript's loops (and RAGScope) add: Python 3.12's
    ``sum()`` compensates rounding, which moved a score by one point on the reference vectors."""
    total = 0.0
    for value in values:
        total += value
    return total


def js_round(x: float) -> int:
    """JavaScript's Math.round: halves round up (2.5 → 3, −2.5 → −2). Not ``floor(x + 0.5)``: that
    sum rounds in floating point (0.49999999999999994 + 0.5 is 1.0, and 2**52 + 1 loses its 1)."""
    low = math.floor(x)
    return int(low + 1 if x - low >= 0.5 else low)


@dataclass(frozen=True)
class AuditChunk:
    """One retrieved chunk as the audit sees it."""

    id: str
    rank_retrieval: int | None = None
    rank_reranked: int | None = None
    tokens: int = 0
    in_context: bool = False
    context_position: int | None = None
    overlap_with_next: float | None = None
    score_missing: bool = False

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "AuditChunk":
        """Read one chunk record (a key outside :data:`CHUNK_KEYS` is refused, naming it).

        Raises
        ------
        InputError
            Naming the chunk and the field.
        """
        if isinstance(data, AuditChunk):
            return data
        if isinstance(data, TracedChunk):  # audit(trace(...)), as documented
            data = data.to_dict()
        if not isinstance(data, Mapping):
            raise InputError(expected="a chunk object", found=data, has_found=True)
        cid = data.get("id")
        try:
            unknown = [key for key in data if key not in CHUNK_KEYS]
            if unknown:  # a misspelt field would otherwise be read as absent and decide the verdict
                hint = " (a chunk with text is traced against the trace's prompts first)" \
                    if unknown[0] in _TRACE_INPUT_KEYS else ""
                raise InputError(field=str(unknown[0]), message="unknown chunk field",
                                 expected="one of " + ", ".join(CHUNK_KEYS) + hint)
            known = {f: data[f] for f in cls.__dataclass_fields__ if f in data}
            if "id" not in known:
                raise InputError(field="id", message="missing required field", expected="a string")
            known["id"] = checks.label(known["id"], "id")
            for name in ("rank_retrieval", "rank_reranked", "context_position"):
                if known.get(name) is not None:
                    known[name] = checks.integer(known[name], name, low=0)
            tokens = known.get("tokens")  # absent or null: 0 (unknown); a present false or "" is refused
            known["tokens"] = 0 if tokens is None else checks.integer(tokens, "tokens", low=0)
            for name in ("in_context", "score_missing"):
                known[name] = checks.boolean(known.get(name, False), name)
            if known.get("overlap_with_next") is not None:
                known["overlap_with_next"] = checks.number(known["overlap_with_next"], "overlap_with_next",
                                                           low=0.0, high=1.0)
            _check_match(data.get("match"), known["in_context"])
            return cls(**known)
        except InputError as err:
            raise err.located(candidate_id=cid if isinstance(cid, str) else None) from None


#: The keys of a chunk record: the fields of :class:`AuditChunk`, and ``match``, which
#: :func:`ctxselect.trace` writes beside them (checked against ``in_context``, not scored).
CHUNK_KEYS = (*AuditChunk.__dataclass_fields__, "match")
#: The keys of a chunk before tracing (``text`` and the scores): named in the error's hint.
_TRACE_INPUT_KEYS = frozenset({"text", "rank", "relevance", "score"})
_MATCHES = ("exact", "normalised", "fuzzy", "none")


def _check_match(match: Any, in_context: bool) -> None:
    """``match`` (absent or null, or one of trace()'s four) never contradicts ``in_context``."""
    if match is None:
        return
    if match not in _MATCHES:
        raise InputError(field="match", expected="one of " + ", ".join(_MATCHES), found=match, has_found=True)
    if (match != "none") != in_context:
        raise InputError(field="match", message=f"match {match!r} contradicts in_context "
                         f"{'true' if in_context else 'false'}", expected="'none' exactly when not in context")


def _check_trace(items: list[AuditChunk]) -> None:
    """Refuse what no real trace holds: one chunk id twice, and a position on a chunk not in context
    (0, RAGScope's placeholder there, is taken as no position). Two in-context chunks at one position
    are scored as RAGScope scores them (two of its 109 reference vectors tie at 0)."""
    first: dict[str, int] = {}
    for k, c in enumerate(items):
        if c.id in first:
            raise InputError(candidate_id=c.id, field="id",
                             message=f"chunk #{k} repeats the id of chunk #{first[c.id]}",
                             expected="one record per chunk of a trace")
        first[c.id] = k
        position = c.context_position
        if position is None:
            continue
        if not c.in_context and position != 0:
            raise InputError(candidate_id=c.id, field="context_position",
                             message="a position for a chunk not in context",
                             expected="null (or 0, RAGScope's placeholder) when in_context is false",
                             found=position)


@dataclass(frozen=True)
class SubScore:
    name: str
    score: int
    finding: str
    recommendation: str | None


@dataclass(frozen=True)
class AuditReport:
    """RAGScope's audit of one trace."""

    overall: int
    label: str
    subscores: list[SubScore] = field(default_factory=list)

    @property
    def recommendations(self) -> list[str]:
        return [s.recommendation for s in self.subscores if s.recommendation]

    def to_dict(self) -> dict[str, Any]:
        """``{"overall", "label", "subscores": {name: {"score", "recommendation"}}}`` — the shape of
        RAGScope's expected results."""
        return {"overall": self.overall, "label": self.label,
                "subscores": {s.name: {"score": s.score, "recommendation": s.recommendation}
                              for s in self.subscores}}


def _buried(chunks: list[AuditChunk]) -> int:
    placed = sorted((c for c in chunks if c.in_context and c.context_position is not None),
                    key=lambda c: c.context_position)
    n = len(placed)
    if n <= 3:
        return 0
    lo, hi = math.floor((n - 1) * 0.25), math.ceil((n - 1) * 0.75)
    cutoff = max(3, math.ceil(len(chunks) / 3))
    return sum(1 for c in placed if lo < c.context_position < hi
               and c.rank_retrieval is not None and c.rank_retrieval <= cutoff)


def _precision(chunks: list[AuditChunk]) -> SubScore:
    if not chunks:
        return SubScore("precision", 100, "no chunks", None)
    used = sum(c.in_context for c in chunks)
    base = js_round(used / len(chunks) * 100)
    buried = _buried(chunks)
    score = max(0, min(100, base - min(12 * buried, 36)))
    finding = f"{used}/{len(chunks)} chunks used" + (f" · {buried} buried mid-context" if buried else "")
    if buried:
        plural = "s" if buried > 1 else ""
        advice = (f"Move top-ranked chunks to the prompt edges — {buried} high-rank chunk{plural} buried "
                  "in the lost-in-the-middle zone")
    elif base < 60:
        advice = f"Reduce TOP_K {len(chunks)}→{max(used, 3)} (only {used} chunks reached LLM)"
    else:
        advice = None
    return SubScore("precision", score, finding, advice)


def _efficiency(chunks: list[AuditChunk]) -> SubScore:
    used = sum(c.tokens for c in chunks if c.in_context)
    total = sum(c.tokens for c in chunks)
    if total == 0:
        return SubScore("efficiency", 100, "no token data", None)
    score = js_round(used / total * 100)
    wasted = 100 - score
    return SubScore("efficiency", score, f"{wasted}% tokens wasted",
                    f"{wasted}% of retrieved tokens never reached the LLM" if score < 60 else None)


def _uniqueness(chunks: list[AuditChunk]) -> SubScore:
    overlaps = [c.overlap_with_next for c in chunks if c.overlap_with_next is not None]
    if not overlaps:
        return SubScore("uniqueness", 100, "no overlap data", None)
    score = js_round((1 - js_sum(overlaps) / len(overlaps)) * 100)
    high = sum(1 for o in overlaps if o > 0.8)
    return SubScore("uniqueness", score, f"{high} near-duplicate pairs" if high else "chunks are distinct",
                    f"{high} near-duplicate chunks — deduplicate at ingest time" if score < 70 and high else None)


def _coverage(chunks: list[AuditChunk]) -> SubScore:
    if not chunks:
        return SubScore("coverage", 100, "no chunks", None)
    missing = sum(c.score_missing for c in chunks)
    score = js_round((1 - missing / len(chunks)) * 100)
    return SubScore("coverage", score, f"{missing} chunks missing scores" if missing else "all chunks scored",
                    "Log scores in retriever output to unlock score optimizations" if score < 80 else None)


def _rerank_gain(chunks: list[AuditChunk]) -> SubScore:
    reranked = [c for c in chunks if c.rank_reranked is not None and c.rank_retrieval is not None]
    sample = [c for c in reranked if c.in_context] or reranked
    gain = sum(c.rank_retrieval - c.rank_reranked for c in sample) / len(sample) if sample else float("nan")
    if math.isnan(gain):
        score, finding = 50, "no reranked chunk with both ranks"
    else:
        score = max(0, min(100, js_round(50 + gain * 12.5)))
        finding = (f"used chunks promoted avg +{gain:.1f} ranks" if gain > 0.5 else
                   f"used chunks demoted avg {gain:.1f} ranks" if gain < -0.5 else "reranker left used chunks in place")
    return SubScore("rerank-gain", score, finding,
                    "Reranker is not surfacing the chunks the LLM actually uses" if score < 60 else None)


def audit(chunks: Iterable[AuditChunk | TracedChunk | Mapping[str, Any]]) -> AuditReport:
    """Audit one trace's retrieved chunks the way RAGScope does (see the module docstring).

    Parameters
    ----------
    chunks : iterable of AuditChunk, TracedChunk or dict
        :func:`ctxselect.trace`'s result as it is, or records with the fields ``id``,
        ``rank_retrieval``, ``rank_reranked``, ``tokens``, ``in_context``, ``context_position``,
        ``overlap_with_next``, ``score_missing`` (as :func:`ctxselect.trace` produces them, with
        its ``match``); no other key.

    Returns
    -------
    AuditReport

    Raises
    ------
    InputError
        Naming the chunk (id, else index) and the field: a key outside :data:`CHUNK_KEYS`, a
        mistyped value, a chunk id given twice, or a position (other than RAGScope's placeholder 0)
        on a chunk not in context. In-context chunks that share a position are scored as RAGScope
        scores them (its reference vectors hold two such traces).
    """
    items = []
    for k, c in enumerate(chunks):
        try:
            items.append(AuditChunk.from_dict(c))
        except InputError as err:
            raise err.located(candidate_index=k) from None
    _check_trace(items)
    precision, efficiency = _precision(items), _efficiency(items)
    uniqueness, coverage = _uniqueness(items), _coverage(items)
    if any(c.rank_reranked is not None for c in items):
        rerank = _rerank_gain(items)
        overall = js_round(0.35 * precision.score + 0.25 * efficiency.score + 0.15 * rerank.score
                           + 0.15 * uniqueness.score + 0.10 * coverage.score)
        subscores = [precision, efficiency, rerank, uniqueness, coverage]
    else:
        overall = js_round(0.4 * precision.score + 0.3 * efficiency.score + 0.2 * uniqueness.score
                           + 0.1 * coverage.score)
        subscores = [precision, efficiency, uniqueness, coverage]
    label = "PASS" if overall >= 75 else "WARN" if overall >= 50 else "FAIL"
    return AuditReport(overall, label, subscores)

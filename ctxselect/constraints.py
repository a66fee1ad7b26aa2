"""Hard constraints, incremental (for the greedy selectors) and as a check of any selection.

Constraint tiers:

- ``hard`` — always: eligibility (admissible, inside the validity window, fits the budget alone),
  the token budget, hard conflicts (never both), near-duplicate clusters (at most one),
  per-source maximums and the maximum chunk count;
- ``sources`` — per-source minimums (required sources);
- ``gate`` — every condition of the quality gate, when it is enforced.
"""

from __future__ import annotations

import numpy as np

from .gate import evaluate_gate
from .objective import Problem
from .quality import quality_vector

__all__ = ["HardState", "violations"]


class HardState:
    """The hard constraints while a selection grows one chunk at a time."""

    def __init__(self, problem: Problem) -> None:
        packed = problem.packed
        self.problem = problem
        self.capacity = packed.budget
        self.used = 0
        self.count = 0
        self.source_count = np.zeros(len(packed.source_names), dtype=np.int64)
        self.blocked = ~problem.eligible.copy()
        self.selected = np.zeros(problem.n, dtype=bool)
        n = problem.n
        partners: list[list[int]] = [[] for _ in range(n)]
        for a, b in zip(problem.hard_i.tolist(), problem.hard_j.tolist()):
            partners[a].append(b)
            partners[b].append(a)
        for group in problem.groups:
            members = group.tolist()
            for a in members:
                partners[a].extend(m for m in members if m != a)
        self.partners = partners
        reqs = packed.requirements
        self.max_chunks = reqs.max_chunks if reqs.max_chunks is not None else n + 1

    def fits(self, i: int) -> bool:
        """Whether chunk i can join the selection without breaking a hard constraint."""
        packed = self.problem.packed
        src = packed.source[i]
        return (not self.blocked[i] and not self.selected[i]
                and self.used + packed.tokens[i] <= self.capacity
                and self.source_count[src] < packed.source_max[src]
                and self.count < self.max_chunks)

    def available(self) -> np.ndarray:
        """Mask of every chunk that :meth:`fits` right now (vectorised)."""
        packed = self.problem.packed
        if self.count >= self.max_chunks:
            return np.zeros(self.problem.n, dtype=bool)
        return (~self.blocked & ~self.selected & (packed.tokens <= self.capacity - self.used)
                & (self.source_count[packed.source] < packed.source_max[packed.source]))

    def add(self, i: int) -> None:
        packed = self.problem.packed
        self.selected[i] = True
        self.used += int(packed.tokens[i])
        self.count += 1
        self.source_count[packed.source[i]] += 1
        for other in self.partners[i]:
            self.blocked[other] = True


def hard_violations(problem: Problem, mask: np.ndarray) -> list[str]:
    """The hard-tier constraints that ``mask`` breaks."""
    packed = problem.packed
    out = []
    if (mask & ~problem.eligible).any():
        out.append("selects an ineligible chunk")
    if int(packed.tokens[mask].sum()) > packed.budget:
        out.append("exceeds the token budget")
    if (mask[problem.hard_i] & mask[problem.hard_j]).any():
        out.append("selects both chunks of a hard conflict")
    if any(mask[g].sum() > 1 for g in problem.groups):
        out.append("selects two near-duplicates")
    counts = np.bincount(packed.source[mask], minlength=len(packed.source_names))
    if (counts > packed.source_max).any():
        out.append("exceeds a per-source maximum")
    reqs = packed.requirements
    if reqs.max_chunks is not None and mask.sum() > reqs.max_chunks:
        out.append("exceeds the maximum chunk count")
    return out


def source_violations(problem: Problem, mask: np.ndarray) -> list[str]:
    packed = problem.packed
    counts = np.bincount(packed.source[mask], minlength=len(packed.source_names))
    return [f"source `{name}` has {counts[k]} of {packed.source_min[k]} required chunks"
            for k, name in enumerate(packed.source_names) if counts[k] < packed.source_min[k]]


def gate_violations(problem: Problem, mask: np.ndarray) -> list[str]:
    """Gate conditions broken, plus any contradiction among the selected chunks when the gate
    forbids contradictions (the optimizer forbids every detected conflict, drift included)."""
    packed = problem.packed
    failures = evaluate_gate(quality_vector(packed, mask, problem.signals.freshness), packed.requirements.gate)
    out = [f.condition for f in failures]
    con = problem.signals.contradictions
    if packed.requirements.gate.max_contradiction_density <= 0 and len(con):
        if (mask[con.i] & mask[con.j]).any() and "max_contradiction_density" not in out:
            out.append("max_contradiction_density")
    return out


def violations(problem: Problem, mask: np.ndarray, *, enforce_gate: bool = True,
               enforce_sources: bool = True) -> list[str]:
    """Every constraint of the optimizer's model that the selection ``mask`` breaks."""
    mask = np.asarray(mask, dtype=bool)
    out = hard_violations(problem, mask)
    if enforce_sources:
        out += source_violations(problem, mask)
    if enforce_gate:
        out += gate_violations(problem, mask)
    return out

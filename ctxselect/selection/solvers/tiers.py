"""The optimizer's run: CP-SAT on the tiers gate → sources → hard constraints only, a tier dropped
only when it is infeasible, and a status that says what happened (``relaxed``, ``infeasible``,
``fallback``)."""

from __future__ import annotations

import time
from dataclasses import replace
from functools import cache, partial
from typing import Any

import numpy as np

from ctxselect.features.cut_rows import TOO_ALIKE
from ctxselect.selection.constraints import satisfies
from ctxselect.selection.diagnosis import diagnose
from ctxselect.selection.problem import Problem, score
from ctxselect.selection.solvers.core import TIGHT_GAP, cut_bound
from ctxselect.selection.solvers.cpsat import solve_optimal, solver_loaded, upper_bound
from ctxselect.selection.solvers.freshness import FRESHNESS_SLACK, closest_freshness, with_freshness_floor
from ctxselect.selection.solvers.hints import Baselines, best_hint

__all__ = ["run_optimal"]


#: When packing and signals alone used the time limit (less than the least grace is left), the
#: solver still gets this share of it (at least MIN_GRACE seconds and MIN_GRACE_PER_CANDIDATE a
#: candidate) on the core, instead of handing back a baseline: the call overruns by that much, and
#: the status reason says so. In that grace the branch and bound alone searches the core
#: (``quick``): CP-SAT found no selection in 20 ms on the LP's core at n = 50,000.
GRACE_SHARE = 0.08
MIN_GRACE = 0.02
#: ... plus this much per candidate: the core's choice and the branch and bound's arrays take
#: ~10 + 10 ms at n = 50,000, and its best selection reached 99.4-100.1 % of CP-SAT's full-time
#: objective after 20 ms more (3 generated queries), the baselines' best 61-64 %.
MIN_GRACE_PER_CANDIDATE = 1e-6
#: How far the whole call may run past its time limit: this share of the limit or OVERRUN[1]
#: seconds, whichever is larger. A grace never reaches past it, unless its least does.
OVERRUN = (0.2, 0.02)

#: Time kept back from the solver for what follows it (score, assembly order, report and reasons):
#: a fixed part and a part per candidate, 1.5-3 times the report stage measured with the collector
#: paused (2026-12-01: 0.9 ms at n = 200, 2.3 ms at 2,000, 14 ms at 20,000, 42-66 ms at 50,000).
REPORT_RESERVE = (0.002, 2e-6)
#: Time kept back from the cosine tiles when they would not all fit in the time limit
#: (:func:`ctxselect.features.similarity.cosine_pairs_until`), for what follows them: the solver's
#: least grace and the report's reserve, plus the contradictions, problem, baselines and the chained
#: pairs of a cut (2026-12-04, n = 20,000, d = 384: 0.15-0.19 s after a cut; 35-55 + 7-9 + 4-9 ms of it
#: the contradictions, problem and baselines). (0.1 s, 5 µs) cut calls that would have ended in
#: 0.85 s of a 1 s limit, and they took longer than uncut ones (0.93-1.02 s, 5 queries).
SIMILARITY_RESERVE = (0.03, 6e-6)
#: The cosine aims at the time limit plus this share of it (half the allowed OVERRUN): a cut costs
#: quality, so it is made only when the call would otherwise end well past the limit (at 20,000 x 384,
#: calls whose uncut run ended in 0.88-1.04 s were cut to 0.989-1.000 of its objective in 1.04-1.09 s).
SIMILARITY_SLACK = 0.1


def similarity_deadline(deadline: float, n: int) -> float:
    """When the cosine tiles of ``n`` candidates should stop for the call to end by ``deadline``."""
    return deadline - SIMILARITY_RESERVE[0] - SIMILARITY_RESERVE[1] * n


def run_optimal(problem: Problem, *, enforce_gate: bool, time_limit: float, core_size: int,
                exact_up_to: int, timings: dict, deadline: float | None = None) -> tuple[np.ndarray, dict]:
    """CP-SAT on the tiers gate → sources → hard constraints only, dropping a tier only when it is
    infeasible. The source minimums are dropped at best effort: the last tier first finds the most
    required chunks a selection can hold (Σ_s min(chunks of s, its minimum): 5 required of a source
    with 3 that fit gives 3), then the best selection that holds that many. Whatever comes back says
    what it breaks: a fallback baseline that misses the gate or a source minimum lists them in
    ``relaxed``, never silently. With ``enforce_gate``, the gate's utilization ceiling holds in every
    tier, so a relaxed gate gives up only the conditions that cannot be met.

    ``deadline`` (a ``time.perf_counter()`` instant; default: ``time_limit`` from now) is when the
    whole call should end: the solver runs until it, less :data:`REPORT_RESERVE`. ``info["objective"]``
    is the returned selection's objective (:func:`~ctxselect.selection.problem.score`).

    When the time limit or the reach cut the similarities (``Signals.compared``), nothing is proven
    over the whole problem (the pairs not compared may hold conflicts, even among chunks none may
    select): ``optimal`` becomes ``feasible``, the bound is the LP relaxation over every chunk the
    uncut problem could hold (``Problem.uncut_eligible``), or when that leaves a gap above
    ``TIGHT_GAP`` and time is left, :func:`~ctxselect.selection.solvers.core.cut_bound` where it is
    smaller (its time in ``timings["bound"]``); the reason says how many were left out, and a relaxed
    tier's ``infeasible`` says they may hold what is missing."""
    end = _solver_end(problem, time_limit, deadline)
    loaded = timings.get("load", 0.0)  # before the tiers: select() moved its deadline for it already
    mask, info = _run_tiers(problem, enforce_gate=enforce_gate, time_limit=time_limit, core_size=core_size,
                            exact_up_to=exact_up_to, timings=timings, deadline=deadline)
    info["objective"] = score(problem, mask)
    uncut = problem.signals.compared is not None  # pairs left out, even among chunks none may select,
    info["cut"] = uncut and problem.signals.cut_by_time  # may hold conflicts (drift) that corroboration reads
    if uncut:
        left, compared = int(problem.uncompared.sum()), int(problem.signals.compared.sum())
        if info.get("bound") is not None:  # the LP of every chunk eligible but for the cut and corroboration:
            wider = replace(problem, eligible=problem.uncut_eligible)  # valid for the uncut problem
            room = problem.capacity(info["ceiling"])
            info["bound"] = max(info["bound"], upper_bound(wider, room))
            end += timings.get("load", 0.0) - loaded  # OR-Tools' first import in the tiers: outside the limit
            if info["bound"] - info["objective"] > TIGHT_GAP * abs(info["bound"]) and time.perf_counter() < end:
                tighter, spent = cut_bound(problem, room, ceiling=info["ceiling"], deadline=end)
                _add_timings(timings, spent)
                if tighter is not None:  # both bound the uncut problem: the smaller holds
                    info["bound"] = min(info["bound"], tighter)
        budget = " and the pair budget" * problem.signals.cut_by_pairs
        why, more = ((f"the time limit of {time_limit:g} s{budget} cut the similarities",
                      "a longer time_limit compares them")
                     if info["cut"] else (f"the similarities stopped at their pair budget ({TOO_ALIKE})",
                                          "their embeddings are too alike to compare")
                     if problem.signals.cut_by_pairs else ("the similarities were computed within the optimizer's "
                                                           "reach", "a larger core_size or exact_up_to compares them"))
        info.update(status="feasible" if info["status"] == "optimal" else info["status"],
                    reason=f"{why} ({compared} of {problem.n} candidates compared with every other; pairs among the "
                           f"others may hold conflicts): {left} candidate(s) not compared were not selectable; "
                           f"among the compared: {info['reason']}")
        if info["relaxed"]:
            info["infeasible"].append(f"the {left} candidate(s) not compared may hold what is missing ({more})")
    return mask, info


def _run_tiers(problem: Problem, *, enforce_gate: bool, time_limit: float, core_size: int,
               exact_up_to: int, timings: dict, deadline: float | None) -> tuple[np.ndarray, dict]:
    """:func:`run_optimal` over the chunks the problem holds eligible."""
    deadline = _solver_end(problem, time_limit, deadline)
    baseline_masks = Baselines(problem, timings)
    tiers = [("gate", True, True), ("sources", False, True), ("none", False, False)]
    if not enforce_gate:
        tiers = tiers[1:]
    info: dict[str, Any] = {"relaxed": [], "infeasible": [], "ceiling": enforce_gate}
    tried = False  # CP-SAT already ran on a tier (and proved it infeasible)
    late_start = None  # (why the first tier started late, its grace): a later tier's result says it too
    for name, gate_on, sources_on in tiers:
        hint = cache(partial(best_hint, problem, baseline_masks, gate_on, sources_on, enforce_gate))  # when read
        remaining = deadline - time.perf_counter()
        least = MIN_GRACE + MIN_GRACE_PER_CANDIDATE * problem.n
        late = remaining < least and not tried  # (what is left would not let the solver start)
        if late:  # the stages before the solver overran the limit: a short grace on the core, said
            before = sum(timings.get(k, 0.0) for k in ("pack", "signals", "problem"))
            baseline_masks.selections()  # now: the reason below says what they took (timings['baselines'])
            spent = ("spent before the solver" if remaining <= 0 else
                     f"left the solver {remaining:.2g} s, less than its least grace of {least:.2g} s")
            overrun = (f"time limit of {time_limit:g} s {spent} (packing, signals and the "
                       f"problem took {before:.3g} s, the baselines {timings['baselines']:.3g} s, and "
                       f"{REPORT_RESERVE[0] + REPORT_RESERVE[1] * problem.n:.2g} s is kept for the report)")
            room = deadline + max(OVERRUN[0] * time_limit, OVERRUN[1]) - time.perf_counter()
            remaining = max(min(GRACE_SHARE * time_limit, room), least)
            late_start = (overrun, remaining)
        # a tier after an infeasible one gets at least 10 ms: proving the next tier is often quick
        remaining = max(remaining, 0.01) if tried else remaining
        tried = True
        target = None  # the last tier: how many required chunks the selection must hold
        if name == "none" and problem.packed.source_min.any():
            most = solve_optimal(problem, enforce_gate=False, enforce_sources=False, hint=hint,
                                 time_limit=remaining / 2, core_size=core_size, core_extra=baseline_masks,
                                 exact_up_to=0 if late else exact_up_to, ceiling=enforce_gate, maximize_sources=True,
                             quick=late)
            _add_timings(timings, most.timings)
            deadline += most.timings.get("load", 0.0)  # OR-Tools' first import: outside the time limit
            target = sources_met(problem, most.mask) if most.mask is not None else 0
            remaining = max(deadline - time.perf_counter(), 0.01)
            most_proven = most.status == "optimal"
        result = solve_optimal(problem, enforce_gate=gate_on, enforce_sources=sources_on, hint=hint,
                               time_limit=remaining, core_size=core_size, core_extra=baseline_masks,
                               exact_up_to=0 if late else exact_up_to, ceiling=enforce_gate, sources_met=target,
                               quick=late)
        _add_timings(timings, result.timings)
        deadline += result.timings.get("load", 0.0)
        if result.status in ("optimal", "feasible"):
            info.update(status=result.status, bound=result.bound, gate_on=gate_on)
            if result.status == "optimal":
                info["reason"] = "proven optimal"
            elif not result.core_is_full:
                core = "core" if result.core_size is None else f"core of {result.core_size} candidates"
                info["reason"] = (f"{'optimal' if result.core_proven else 'the best found in the time left'} on a "
                                  f"{core} ({int(problem.eligible.sum())} are eligible); the "
                                  "bound is a relaxation of the whole problem")
            else:
                info["reason"] = f"time limit of {time_limit:g} s reached before optimality was proven"
            if target is not None and not most_proven and result.status == "optimal":
                info.update(status="feasible", reason="proven optimal for the required chunks found, but "
                            "whether a selection can hold more of them was not proven in the time limit")
            info["reason"] = _after_late_start(late_start, info["reason"])  # whichever tier this is
            if satisfies(problem, result.mask, enforce_gate=gate_on, enforce_sources=sources_on,
                         ceiling=enforce_gate) and sources_met(problem, result.mask) >= (target or 0):
                if target is not None:
                    info["infeasible"] += _best_effort_notes(problem, result.mask, most_proven)
                return result.mask, info
            # the model holds in integers but not in exact arithmetic (rounded coefficients): a
            # baseline that satisfies the tier is returned instead, never a false "infeasible"
            baseline = hint()
            if satisfies(problem, baseline, enforce_gate=gate_on, enforce_sources=sources_on,
                         ceiling=enforce_gate) and sources_met(problem, baseline) >= (target or 0):
                info.update(status="feasible", bound=None, reason=_after_late_start(
                    late_start, "the solver's selection broke a condition in exact arithmetic (its coefficients "
                                "are rounded); the best baseline that meets it is returned"))
                if target is not None:
                    info["infeasible"] += _best_effort_notes(problem, baseline, most_proven)
                return baseline, info
        if result.status == "unknown":
            return _fallback(problem, hint(), gate_on, sources_on, info,
                             (f"{late_start[0]}; CP-SAT found no selection in a grace of {remaining:.2g} s"
                              if late_start is not None
                              else f"time limit of {time_limit:g} s reached before CP-SAT found a selection")
                             + "; the best baseline is returned")
        # infeasible: say why, then keep what can be kept of it, or drop it
        if not info["infeasible"]:
            info["infeasible"] = diagnose(problem, enforce_gate=gate_on)
        reqs = problem.packed.requirements
        if name == "gate" and reqs.freshness_fallback == "closest" and reqs.gate.min_freshness > 0:
            kept = _closest_freshness_tier(problem, hint, deadline, core_size, exact_up_to, enforce_gate, info, timings)
            if kept is not None:
                info["reason"] = _after_late_start(late_start, info["reason"])
                return kept, info
        info["relaxed"].append("gate" if name == "gate" else "sources")
    raise AssertionError("the hard constraints alone are always satisfiable (the empty selection)")


def _solver_end(problem: Problem, time_limit: float, deadline: float | None) -> float:
    """When the solvers must stop: ``deadline`` (default: ``time_limit`` from now) less the report's reserve."""
    return (time.perf_counter() + time_limit if deadline is None else deadline) - (
        REPORT_RESERVE[0] + REPORT_RESERVE[1] * problem.n)


def _after_late_start(late_start: tuple[str, float] | None, reason: str) -> str:
    """A tier's ``reason`` after the first tier's late start (why it was late, the grace it had);
    ``reason`` itself when the solver started in time (``late_start`` None)."""
    return reason if late_start is None else f"{late_start[0]}; in a grace of {late_start[1]:.2g} s: {reason}"


def _closest_freshness_tier(problem: Problem, hint, deadline: float, core_size: int, exact_up_to: int,
                            ceiling: bool, info: dict, timings: dict) -> np.ndarray | None:
    """The gate kept with its freshness floor lowered to the closest feasible φ*
    (:mod:`ctxselect.selection.solvers.freshness`), or None when the gate's other conditions
    cannot be met either (the gate is then dropped whole)."""
    loading = solver_loaded()  # its CP-SAT steps: OR-Tools' first import outside the time limit
    if loading:
        deadline += loading
        _add_timings(timings, {"load": loading})
    started = time.perf_counter()
    found = closest_freshness(problem, deadline=deadline, core_size=core_size, exact_up_to=exact_up_to,
                              ceiling=ceiling)
    floor = problem.packed.requirements.gate.min_freshness
    if found is None or found[0] >= floor:
        timings["freshness"] = time.perf_counter() - started
        if found is None:
            info["infeasible"].append('freshness_fallback "closest" does not apply: no selection meets the '
                                      "gate's other conditions either (the source minimums included), so the "
                                      "freshness floor is dropped with the gate")
        return None
    phi, proven = found
    lowered = with_freshness_floor(problem, phi - FRESHNESS_SLACK)
    result = solve_optimal(lowered, enforce_gate=True, enforce_sources=True, hint=hint,
                           time_limit=max(deadline - time.perf_counter(), 0.01), core_size=core_size,
                           exact_up_to=exact_up_to, ceiling=ceiling)
    timings["freshness"] = time.perf_counter() - started
    if result.status not in ("optimal", "feasible") or not satisfies(lowered, result.mask, ceiling=ceiling):
        return None
    info["relaxed"].append("gate")
    info["infeasible"].append(
        f"freshness {floor:.2f} cannot be met with the gate's other conditions: the floor is lowered to "
        f"{phi:.3f}, the freshest {'a selection meeting them can reach' if proven else 'found in the time limit'}")
    info.update(status=result.status, bound=result.bound, gate_on=False,
                reason="proven optimal under the lowered freshness floor" if result.status == "optimal" else
                "not proven optimal under the lowered freshness floor (time limit, or solved on a core)")
    return result.mask


def _add_timings(timings: dict, more: dict) -> None:
    for key, value in more.items():
        timings[key] = timings.get(key, 0.0) + value


def sources_met(problem: Problem, mask: np.ndarray) -> int:
    """Required chunks a selection holds: Σ_s min(its chunks from s, the minimum of s)."""
    packed = problem.packed
    counts = np.bincount(packed.source[mask], minlength=len(packed.source_names))
    return int(np.minimum(counts, packed.source_min).sum())


def _best_effort_notes(problem: Problem, mask: np.ndarray, proven: bool) -> list[str]:
    """What the best-effort tier keeps of each source minimum: as many required chunks as a
    selection can hold together (the most found, when the search was not proven)."""
    packed = problem.packed
    counts = np.bincount(packed.source[mask], minlength=len(packed.source_names))
    most = "as many as a selection can hold under the budget and the other constraints" if proven else (
        "the most found in the time limit")
    return [f"source `{name}`: {counts[k]} of the {packed.source_min[k]} required chunks are kept ({most})"
            for k, name in enumerate(packed.source_names) if counts[k] < packed.source_min[k]]


def _fallback(problem: Problem, mask: np.ndarray, gate_on: bool, sources_on: bool, info: dict,
              reason: str) -> tuple[np.ndarray, dict]:
    """The best baseline as the answer, with every enforced tier it does not meet in ``relaxed``."""
    broken = _broken_tiers(problem, mask, gate_on, sources_on, info["ceiling"])
    info["relaxed"].extend(t for t in broken if t not in info["relaxed"])
    info.update(status="fallback", bound=None, gate_on=gate_on and "gate" not in broken,
                ceiling=info["ceiling"] and "gate" not in broken,
                reason=reason + (f" (it does not meet: {', '.join(broken)})" if broken else ""))
    return mask, info


def _broken_tiers(problem: Problem, mask: np.ndarray, gate_on: bool, sources_on: bool, ceiling: bool) -> list[str]:
    """The enforced tiers (``gate``, its utilization ceiling included, and ``sources``) that
    ``mask`` does not satisfy."""
    out = []
    if (gate_on or ceiling) and not satisfies(problem, mask, enforce_gate=gate_on, enforce_sources=False,
                                              ceiling=ceiling):
        out.append("gate")
    if sources_on and not satisfies(problem, mask, enforce_gate=False, enforce_sources=True):
        out.append("sources")
    return out

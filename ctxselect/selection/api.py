"""``select``: choose the chunks that go into the context window."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping

from ctxselect._config import TOLERANCE
from ctxselect._runtime import pauses_collection
from ctxselect.errors import InputError
from ctxselect.features.compute import signal_options_of, signals as compute_signals
from ctxselect.model import validation as checks
from ctxselect.model.candidate import Candidate
from ctxselect.model.requirements import Requirements
from ctxselect.model.scores import Relevance, normalise_relevance
from ctxselect.model.tokens import TokenCounter
from ctxselect.packing import PackedCandidates, pack
from ctxselect.quality.report import QualityReport, report_for
from ctxselect.selection.constraints import context_conflicts
from ctxselect.selection.corroboration import OnUnresolved
from ctxselect.selection.diagnosis import after_capped, empty_reason
from ctxselect.selection.explain import exclusion_reasons, unresolved_entries
from ctxselect.selection.problem import ObjectiveWeights, Problem, build_problem, score
from ctxselect.selection.solvers.core import Reach
from ctxselect.selection.solvers.registry import BASELINES, Method, Order, assembly_order
from ctxselect.selection.solvers.tiers import SIMILARITY_SLACK, run_optimal, similarity_deadline
from ctxselect.selection.warmup import _load_once, load_for

__all__ = ["Selection", "select", "prepare"]

#: The library's logger (silent unless the application configures logging): INFO when a gate or a
#: source minimum is relaxed, a call falls back or comes back empty; DEBUG with each call's stage times.
logger = logging.getLogger("ctxselect")
logger.addHandler(logging.NullHandler())


@dataclass(frozen=True)
class Selection:
    """The chunks chosen for one query, and why.

    Attributes
    ----------
    ids : list of str
        Selected chunk ids in assembly order.
    method : str
    objective : float
        The objective F of the selection (:func:`ctxselect.selection.problem.score`).
    bound, gap : float or None
        For ``optimal``: a proven upper bound of F over every selection the model allows, and
        (bound − objective) / |bound|. None for the baselines.
    status : str
        ``optimal`` (proven), ``feasible`` (not proven: time limit, solved on a core of the
        candidates, the time limit or the pair budget cut the similarities: ``excluded`` says "not
        compared", or drift's cap or the claim join's budgets left pairs unexamined: the reason says which),
        ``fallback`` (the solver found nothing in time: the best baseline is returned),
        ``baseline``, or ``empty`` (nothing is selected: the reason counts why each
        candidate was left out, then gives the status the selector reached, e.g. "(optimal: proven
        optimal)").
    status_reason : str
    report : QualityReport
        The quality vector and gate of the selection.
    excluded : dict
        id -> reason, for every candidate left out.
    infeasible : list of str
        When no selection can satisfy the gate (or the required sources): each condition that
        cannot be met and why, then (gate relaxed) each gate condition the returned selection
        fails, by name, as ``inspect()`` of it reports. The selection then satisfies the remaining
        hard constraints, and the gate's utilization ceiling.
    relaxed : list of str
        Constraint tiers dropped to find a selection (``gate``, ``sources``).
    chunks : list
        The selected candidates themselves, in assembly order — the caller's own objects (dicts,
        Candidates ...) with ids of whatever type they had, when the candidates came as a list, a
        tuple or an iterator; the packed ``Candidate`` objects otherwise (``ids`` holds them as text).
    unresolved : list of dict
        Conflicts neither evidence nor source precedence decided: ``{"ids": [a, b], "values":
        [what a states, what b states], "outcome": ..., "selected": [those of a, b selected]}``,
        so the assembler can tell the model that its sources disagree (``on_unresolved``).
    timings : dict
        Seconds per stage: pack, signals, problem, baselines (when they ran: ``optimal`` makes them
        only when its search needs a hint or a fallback), model, solve, total; ``bound``: the bound of
        a cut problem, when it was computed (docs/selection.md); ``load``: kernels
        or OR-Tools a process's first optimizing calls loaded for their input (outside ``time_limit``).
        Wall clock, so not compared: equal calls give equal (``==``) selections.
    """

    ids: list[str]
    method: str
    objective: float
    bound: float | None
    gap: float | None
    status: str
    status_reason: str
    report: QualityReport
    excluded: dict[str, str]
    infeasible: list[str] = field(default_factory=list)
    relaxed: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict, compare=False)  # wall clock: equal calls differ
    unresolved: list[dict] = field(default_factory=list)
    chunks: list = field(default_factory=list, repr=False, compare=False)

    @property
    def tokens(self) -> int:
        return self.report.tokens_used

    def to_dict(self) -> dict[str, Any]:
        return {
            "ids": list(self.ids), "method": self.method, "objective": self.objective, "bound": self.bound,
            "gap": self.gap, "status": self.status, "status_reason": self.status_reason, "report": self.report.to_dict(),
            "excluded": dict(self.excluded), "infeasible": list(self.infeasible),
            "relaxed": list(self.relaxed), "unresolved": [dict(u) for u in self.unresolved],
            "timings": dict(self.timings),
        }


def prepare(
    candidates,
    requirements,
    query: str | None = None,
    *,
    weights: Mapping[str, float] | ObjectiveWeights | None = None,
    hard_conflict_severity: float = 1.0,
    exclude_outside_window: bool = True,
    resolve_by_corroboration: bool = True,
    on_unresolved: str | OnUnresolved = "drop_both",
    signal_options: Mapping[str, Any] | None = None,
    token_counter: TokenCounter | None = None,
    timings: dict | None = None,
    embeddings: Any = None,
    relevance: str | Relevance = "as_is",
    deadline: float | None = None,
    reach: Reach | None = None,
) -> Problem:
    """Pack candidates, compute their signals and build the selection problem (the first three
    stages of :func:`select`; useful to run several selectors on the same problem). Packed
    ``candidates`` keep the requirements given to :func:`ctxselect.pack`: ``requirements`` must then
    be None or equal them (else :class:`InputError`). ``deadline``
    (a ``time.perf_counter()`` instant) is when the whole call may end at the latest (:func:`select`
    passes its time limit and ``SIMILARITY_SLACK``): the cosine similarities then stop in time for
    the stages after them (``Problem.uncompared``). With ``reach`` (:func:`select` passes it to the
    optimizer), the cosine compares only the chunks a core may hold with every other
    (:func:`ctxselect.selection.solvers.core.reach`): the others are "not compared"."""
    timings = {} if timings is None else timings
    checks.number(hard_conflict_severity, "hard_conflict_severity", low=0.0, high=1.0)  # before any work
    for name, value in (("exclude_outside_window", exclude_outside_window),
                        ("resolve_by_corroboration", resolve_by_corroboration)):
        _PARAMETERS[name](value)
    on_unresolved = checks.parse_choice(OnUnresolved, on_unresolved, "on_unresolved")
    relevance = checks.parse_choice(Relevance, relevance, "relevance")
    query = checks.optional_text(query, "query")
    if deadline is not None:
        checks.number(deadline, "deadline")
    if reach is not None and not isinstance(reach, Reach):
        raise InputError(field="reach", expected="a selection.solvers.core.Reach", found=type(reach).__name__)
    options = signal_options_of(signal_options)
    if weights is not None and not isinstance(weights, ObjectiveWeights):
        checks.mapping(weights, "weights", "an object of objective weights")
    t0 = time.perf_counter()
    if isinstance(candidates, PackedCandidates):
        if embeddings is not None:
            raise InputError(field="embeddings", message="the candidates are already packed",
                             expected="embeddings given to pack()")
        if requirements is not None and Requirements.from_dict(requirements) != candidates.requirements:
            raise InputError(field="requirements", message="the candidates are already packed",
                             expected="requirements given to pack() (or none, or the same)")
        packed = candidates
    else:
        if relevance is not Relevance.AS_IS:  # raw scores read into [0, 1] (copies; the inputs stay)
            candidates = normalise_relevance(list(candidates) if isinstance(candidates, Iterator) else candidates,
                                             relevance)
        packed = pack(candidates, requirements, token_counter=token_counter, embeddings=embeddings)
    timings["pack"] = time.perf_counter() - t0
    spent = load_for(packed, options.get("similarity", "auto"), timings) if reach is not None else 0.0
    deadline = None if deadline is None else deadline + spent  # the optimizer's loading: outside its time limit
    t1 = time.perf_counter()
    if isinstance(weights, ObjectiveWeights):
        objective_weights = weights
    else:
        objective_weights = ObjectiveWeights.from_mapping({**packed.requirements.weights, **(weights or {})})
    if deadline is not None:
        options["deadline"] = similarity_deadline(deadline, packed.n)
    query_reach = None
    if reach is not None:  # the values, before the pairs: computed once, kept for the problem
        query_reach = options["reach"] = reach.of(packed, objective_weights, query, exclude_outside_window)
    sig = compute_signals(packed, query if objective_weights.uses_query else None, **options)  # its terms: in one scan
    t2 = time.perf_counter()
    problem = build_problem(packed, sig, objective_weights, query=query,
                            hard_conflict_severity=hard_conflict_severity,
                            exclude_outside_window=exclude_outside_window,
                            resolve_by_corroboration=resolve_by_corroboration, on_unresolved=on_unresolved,
                            values=None if query_reach is None else query_reach.values)
    t3 = time.perf_counter()
    timings.update(signals=t2 - t1, problem=t3 - t2)
    return problem


_PARAMETERS = {
    "time_limit": lambda v: checks.number(v, "time_limit", low=0.0, low_open=True),
    "core_size": lambda v: checks.integer(v, "core_size", low=1),
    "exact_up_to": lambda v: checks.integer(v, "exact_up_to", low=0),
    "mmr_lambda": lambda v: checks.number(v, "mmr_lambda", low=0.0, high=1.0),
    "enforce_gate": lambda v: checks.boolean(v, "enforce_gate"),
    "exclude_outside_window": lambda v: checks.boolean(v, "exclude_outside_window"),
    "resolve_by_corroboration": lambda v: checks.boolean(v, "resolve_by_corroboration"),
}


def _log(method: Method, status: str, reason: str, relaxed: list[str], infeasible: list[str],
         timings: dict[str, float], cut: bool = False) -> None:
    """What a call did, for the application's log (never its data: reasons quote no chunk outside
    the scopes, and no text is logged); ``cut``: the time limit or the pair budget cut the similarities."""
    if (relaxed or cut or status in ("fallback", "empty")) and logger.isEnabledFor(logging.INFO):
        logger.info("select(%s): %s (%s); relaxed: %s; %s", method.value, status, reason,
                    ", ".join(relaxed) or "nothing", "; ".join(infeasible) or "no condition unmet")
    if logger.isEnabledFor(logging.DEBUG):
        logger.debug("select(%s): %s in %.1f ms (%s)", method.value, status, 1e3 * timings.get("total", 0.0),
                     ", ".join(f"{k} {1e3 * v:.1f} ms" for k, v in timings.items() if k != "total"))


@pauses_collection  # the collector's full scans cost 20 % of a call at n = 50,000 (ctxselect._runtime)
def select(
    candidates: Iterable[Candidate | Mapping[str, Any]] | PackedCandidates,
    requirements: Requirements | Mapping[str, Any] | None = None,
    query: str | None = None,
    method: str | Method = "optimal",
    *,
    order: str | Order = "edges",
    enforce_gate: bool = True,
    time_limit: float = 1.0,
    weights: Mapping[str, float] | ObjectiveWeights | None = None,
    mmr_lambda: float = 0.7,
    core_size: int = 300,
    exact_up_to: int = 500,
    hard_conflict_severity: float = 1.0,
    exclude_outside_window: bool = True,
    resolve_by_corroboration: bool = True,
    on_unresolved: str | OnUnresolved = "drop_both",
    signal_options: Mapping[str, Any] | None = None,
    token_counter: TokenCounter | None = None,
    embeddings: Any = None,
    relevance: str | Relevance = "as_is",
) -> Selection:
    """Choose the candidates that go into the context window.

    Parameters
    ----------
    candidates : iterable of Candidate or dict, or PackedCandidates
    requirements : Requirements or dict
        Budget, required aspects and sources, caps, allowed scopes, conflict fields, freshness,
        gate thresholds and objective ``weights``. Packed ``candidates`` hold those given to
        :func:`ctxselect.pack`: then give none (or the same); others are an :class:`InputError`.
    query : str, optional
        The question's text, for query-aware objective terms.
    method : {"optimal", "greedy", "topk", "density", "mmr"}
    order : {"edges", "rank", "source", "chronological"}
        Assembly order; ``edges`` puts the strongest chunks at the start and the end of the
        window and the weakest in the middle.
    enforce_gate : bool
        ``optimal`` only: every gate condition becomes a constraint. When no selection can pass,
        the gate (then the required sources) is dropped, the best selection under the remaining
        hard constraints is returned, and ``infeasible`` says why.
    time_limit : float
        Seconds for the whole call of ``optimal``: packing, signals, baselines, solver runs and
        the report. The solver gets what is left after the stages before it, less a reserve for
        the report; on time-out the best solution so far is returned, or the best baseline
        (status ``fallback``, with every tier it does not meet listed in ``relaxed``). The cosine
        of embeddings stops early when all its pairs would not fit, leaving time for what follows:
        the chunks compared by then (the most promising first) are the only ones selectable, the
        others are excluded as "not compared", and the status is at best ``feasible`` with a bound
        for the whole problem. The rest of packing and signals is not interrupted: when it alone
        takes longer than the limit, the solver gets a grace of 8 % of it (at least 20 ms) on the
        core, and the status reason says the limit was spent. The baselines ignore it.
    weights : dict or ObjectiveWeights, optional
        Objective weights, overriding the requirements' ``weights``.
    mmr_lambda : float
        λ of ``mmr``: relevance against similarity to what is already selected.
    core_size, exact_up_to : int
        Up to ``exact_up_to`` eligible candidates ``optimal`` solves the whole problem (status
        ``optimal`` when proven); above it, a core of the ``core_size`` most promising ones
        (status ``feasible``, with a bound for the whole problem). On 40 generated queries of
        300–2,000 candidates the core reached the proven optimum on 39 and was 0.002 % below it
        on one, in 12–20 ms of model and solve against 13–70 ms (docs/selection.md). Raise
        ``exact_up_to`` to buy the proof with latency. With embeddings, the cosine compares only
        the chunks a core may hold with every other (the optimizer's reach: the best providers of
        required aspects and sources, the next ``core_size`` as the core ranks them, and twice
        those the LP relaxation takes; every pair when at most ``exact_up_to`` chunks fit); the
        others are excluded as "not compared: beyond the optimizer's reach", and the status is at
        best ``feasible``.
    hard_conflict_severity : float
        Contradictions at or above this severity (and all version conflicts) are never selected
        together.
    exclude_outside_window : bool
        Chunks outside their validity window at ``now`` are never selected.
    resolve_by_corroboration : bool
        Of two chunks that state different values for the same claim, drop the side fewer
        independent documents support (weighted by relevance × freshness); an even split goes to
        ``source_precedence``, then ``on_unresolved``. Older versions of a document give way to an
        eligible newer one.
    on_unresolved : {"drop_both", "keep_both", "keep_stronger"}
        What a conflict the evidence cannot decide becomes, when the requirements'
        ``source_precedence`` does not decide it either: both sides left out (the default), both
        kept eligible (neither forbidden nor penalised for the conflict; near-duplicates still give
        one of them), or the side with more support kept. Whatever the outcome, it is listed in
        ``Selection.unresolved`` with both values, so the model can be told that its sources
        disagree. The default was chosen on planted falsehoods: an edited copy of a real gold chunk
        reached the context in 0–3.6 % of queries with ``drop_both``, 23–39 % with ``keep_both``
        (the copy and its original are near-duplicates, of which one is kept: the copy, a hair
        more relevant) and 17–29 % with ``keep_stronger`` (docs/selection.md).
    signal_options : dict, optional
        Keyword arguments of :func:`ctxselect.signals` (thresholds, similarity kind ...).
    relevance : {"as_is", "minmax", "sigmoid", "rank"}
        How the candidates' ``relevance`` is read: as given, in [0, 1] (the default), or raw
        retriever scores normalised (:mod:`ctxselect.model.scores`: BM25 ``minmax``, cross-encoder
        logits ``sigmoid``, only the order ``rank``). ``Selection.chunks`` keeps the raw objects.
    token_counter : callable, optional
    embeddings : array_like, optional
        One (n, d) array, row ``i`` the embedding of candidate ``i`` (float32, float64 or
        integers), instead of an ``embedding`` on each candidate: see :func:`ctxselect.pack`.

    Returns
    -------
    Selection

    Raises
    ------
    InputError
        For bad candidates, requirements or arguments, naming what is wrong.
    """
    method = checks.parse_choice(Method, method, "method")
    order = checks.parse_choice(Order, order, "order")
    # checked, and as Python numbers (prepare() checks its own): np.float16(2.0) as the time limit made
    # the deadline perf_counter() + 2.0 in float16, infinite once the clock passed 65,504 s (18 h up)
    time_limit, core_size, exact_up_to, mmr_lambda, enforce_gate = (
        _PARAMETERS[name](value) for name, value in (
            ("time_limit", time_limit), ("core_size", core_size), ("exact_up_to", exact_up_to),
            ("mmr_lambda", mmr_lambda), ("enforce_gate", enforce_gate)))
    if method is Method.OPTIMAL:
        _load_once()  # OR-Tools and the compiled kernels: not inside the first call's time limit
    started = time.perf_counter()
    if requirements is None and not isinstance(candidates, PackedCandidates):
        raise InputError(field="requirements", expected="requirements (at least a token_budget)", found=None, has_found=True)
    timings: dict[str, float] = {}
    if isinstance(candidates, Iterator):
        candidates = list(candidates)  # the caller's objects, returned in Selection.chunks
    problem = prepare(candidates, requirements, query, weights=weights, hard_conflict_severity=hard_conflict_severity,
                      exclude_outside_window=exclude_outside_window,
                      resolve_by_corroboration=resolve_by_corroboration, on_unresolved=on_unresolved,
                      signal_options=signal_options, relevance=relevance,
                      token_counter=token_counter, timings=timings, embeddings=embeddings,
                      deadline=started + time_limit * (1 + SIMILARITY_SLACK) if method is Method.OPTIMAL else None,
                      reach=Reach(core_size, exact_up_to, enforce_gate) if method is Method.OPTIMAL else None)

    notes: dict[int, str] = {}
    infeasible: list[str] = []
    relaxed: list[str] = []
    bound = gap = None
    gate_on = False
    info: dict[str, Any] = {}
    if method is Method.OPTIMAL:
        mask, info = run_optimal(problem, enforce_gate=enforce_gate, time_limit=time_limit,
                                  deadline=started + timings.get("load", 0.0) + time_limit,  # loading aside
                                  core_size=core_size, exact_up_to=exact_up_to, timings=timings)
        status, reason = info["status"], info["reason"]
        infeasible, relaxed, gate_on = info["infeasible"], info["relaxed"], info["gate_on"]
    else:
        t0 = time.perf_counter()
        if method is Method.MMR:
            mask, notes = BASELINES[method](problem, mmr_lambda)
        else:
            mask, notes = BASELINES[method](problem)
        timings["baselines"] = time.perf_counter() - t0
        status, reason = "baseline", f"{method.value} baseline (no optimality claim)"

    finishing = time.perf_counter()
    objective = info["objective"] if method is Method.OPTIMAL else score(problem, mask)  # (run_optimal scored it)
    if method is Method.OPTIMAL and info.get("bound") is not None:
        bound = max(float(info["bound"]), objective)
        gap = (bound - objective) / max(abs(bound), TOLERANCE)
    positions = assembly_order(problem, mask, order)
    report = report_for(problem.packed, mask, positions, problem.signals.freshness, context_conflicts(problem, mask),
                        claim_readable=problem.signals.claim_readable)
    if "gate" in relaxed:  # the conditions given up, by name: what inspect() of this context fails
        infeasible = infeasible + [f"the selection returned does not meet {f.condition}: {f.message}"
                                   for f in report.failures]
    excluded = exclusion_reasons(problem, mask, enforce_gate=gate_on, notes=notes, ceiling=info.get("ceiling", False))
    status, reason = after_capped(status, reason, problem.signals.capped)  # a contradictions' bound that bound
    if not mask.any():  # never silently: the status says so, the reason counts why
        status, reason = "empty", f"{empty_reason(problem.n, excluded)} ({status}: {reason})"
    ended = time.perf_counter()
    timings.update(report=ended - finishing, total=ended - started)
    _log(method, status, reason, relaxed, infeasible, timings, cut=info.get("cut") or problem.signals.cut_by_pairs)
    return Selection(
        ids=[problem.packed.ids[i] for i in positions], method=method.value, objective=objective,
        bound=bound, gap=gap, status=status, status_reason=reason, report=report, excluded=excluded,
        infeasible=infeasible, relaxed=relaxed, timings=timings, unresolved=unresolved_entries(problem, mask),
        chunks=[(candidates if isinstance(candidates, (list, tuple)) else problem.packed.candidates)[i]
                for i in positions],
    )

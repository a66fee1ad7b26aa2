"""What the exact models read from a Problem, defined once for CP-SAT (:mod:`.cpsat`) and the
branch and bound (:mod:`.exact`): the integer coefficients, the pairs never selected together,
the clusters and the penalised pairs of a core."""

from __future__ import annotations

import math

import numpy as np

from ctxselect._config import ROW_SCALE, SOLVER_SCALE, TOLERANCE
from ctxselect.model.weights import relative_weights
from ctxselect.selection.constraints import group_members
from ctxselect.selection.problem import Problem, agreement_covered

__all__ = ["scaled", "scaled_array", "homogeneous", "conflict_fields", "forbidden_pairs", "forbidden_array",
           "cluster_parts", "cluster_members", "penalty_pairs", "penalty_arrays", "one_value_groups", "gate_rows"]


def scaled_array(values: np.ndarray) -> np.ndarray:
    """Objective coefficients: ``values`` rounded to 1 / SOLVER_SCALE, as int64."""
    return np.rint(np.asarray(values, dtype=np.float64) * SOLVER_SCALE).astype(np.int64)


def scaled(values: np.ndarray) -> list[int]:
    """:func:`scaled_array` as a list of integers (the CP-SAT proto's coefficients)."""
    return scaled_array(values).tolist()


def homogeneous(values: np.ndarray) -> list[int]:
    """Integer coefficients proportional to ``values``, the largest of magnitude ``ROW_SCALE``.

    Gate rows that are homogeneous (Σ c_i x_i ≥ 0 and the like) hold under any positive scaling; a
    fixed 1e-6 scale rounded relevances of 1e-7 to zero and lost the condition. Signs are kept, so
    the row means the same after rounding, up to 1e-9 of its largest coefficient."""
    values = np.asarray(values, dtype=np.float64)
    peak = float(np.abs(values).max()) if values.size else 0.0
    if peak == 0.0:
        return [0] * len(values)
    return np.rint(values / peak * ROW_SCALE).astype(np.int64).tolist()


def conflict_fields(problem: Problem, enforce_gate: bool) -> tuple[bool, range | tuple]:
    """Whether every listed conflict is hard (the gate forbids any contradiction), and the conflict
    fields whose selected chunks must agree on one value."""
    forbid_all = enforce_gate and problem.packed.requirements.gate.max_contradiction_density <= 0
    return forbid_all, (range(len(problem.packed.field_names)) if forbid_all else problem.hard_fields)


def one_value_groups(core: np.ndarray, codes: np.ndarray, groups: np.ndarray | None = None):
    """The chunks of ``core`` that must agree on their code, group by group (e.g. per document):
    ``(members, their codes, the distinct codes)`` for each group with two codes or more, by group
    number. One sort by (group, code) finds the groups that have two codes; only those are gathered."""
    present = core[codes[core] >= 0]
    values = codes[present]
    if groups is None:
        distinct = np.unique(values)
        return [(present, values, distinct)] if len(distinct) >= 2 else []
    live = groups[present] >= 0
    present, values = present[live], values[live]
    if not len(present):
        return []
    group_of = groups[present]
    order = np.lexsort((values, group_of))
    by_group, by_code = group_of[order], values[order]
    starts = np.concatenate(([True], by_group[1:] != by_group[:-1])).nonzero()[0]
    first_code = np.concatenate(([True], by_code[1:] != by_code[:-1]))
    first_code[starts] = True  # a group's first code is new in it
    stops = np.concatenate((starts[1:], [len(order)]))
    out = []
    for k in (np.add.reduceat(first_code, starts, dtype=np.int64) >= 2).nonzero()[0].tolist():
        members = present[group_of == by_group[starts[k]]]
        out.append((members, codes[members], by_code[starts[k]:stops[k]][first_code[starts[k]:stops[k]]]))
    return out


def _forbidden_positions(problem: Problem, var_of: np.ndarray, forbid_all: bool, fields) -> tuple:
    """:func:`forbidden_pairs` as listed: two arrays of positions, duplicates kept."""
    con = problem.gate_conflicts
    hard = np.ones(len(con), dtype=bool) if forbid_all else np.zeros(len(con), dtype=bool)
    pair_i = np.concatenate([problem.hard_i, con.i[hard]])
    pair_j = np.concatenate([problem.hard_j, con.j[hard]])
    in_core = (var_of[pair_i] >= 0) & (var_of[pair_j] >= 0)
    pair_i, pair_j = pair_i[in_core], pair_j[in_core]
    rest = ~agreement_covered(problem.packed, pair_i, pair_j, fields)
    return pair_i[rest], pair_j[rest]


def forbidden_pairs(problem: Problem, var_of: np.ndarray, forbid_all: bool, fields) -> set:
    """Pairs (positions, i < j as listed) of the core never selected together that agreeing on one
    value per field / document does not already forbid."""
    pair_i, pair_j = _forbidden_positions(problem, var_of, forbid_all, fields)
    return set(zip(pair_i.tolist(), pair_j.tolist()))


def forbidden_array(problem: Problem, var_of: np.ndarray, forbid_all: bool, fields) -> np.ndarray:
    """:func:`forbidden_pairs` as the keys i·max(n, 1) + j (int64), sorted: the order of
    ``sorted(forbidden_pairs(...))``, without a Python set."""
    pair_i, pair_j = _forbidden_positions(problem, var_of, forbid_all, fields)
    return np.unique(pair_i.astype(np.int64) * max(problem.n, 1) + pair_j)


def cluster_members(problem: Problem, var_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`cluster_parts` one after the other: (their variables, the size of each part)."""
    if not problem.groups:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    members, cluster = group_members(problem)  # built once per problem
    live = var_of[members] >= 0
    members, cluster = var_of[members[live]], cluster[live]
    sizes = np.bincount(cluster, minlength=len(problem.groups))
    return members[sizes[cluster] > 1], sizes[sizes > 1]


def cluster_parts(problem: Problem, var_of: np.ndarray) -> list[np.ndarray]:
    """The near-duplicate clusters' members in the core, as variables, cluster by cluster (those
    with two or more: at most one of each is selected). O(n) in NumPy."""
    members, sizes = cluster_members(problem, var_of)
    return np.split(members, sizes.cumsum()[:-1]) if len(sizes) else []


def _live_penalties(problem: Problem, var_of: np.ndarray, fields) -> tuple:
    """The penalised pairs of the core (positions, penalty) that agreement does not keep apart."""
    pen_i, pen_j, pen_p = problem.pair_i, problem.pair_j, problem.pair_penalty
    live = (var_of[pen_i] >= 0) & (var_of[pen_j] >= 0)
    live[live] = ~agreement_covered(problem.packed, pen_i[live], pen_j[live], fields)  # never both: no penalty
    return pen_i[live], pen_j[live], pen_p[live]


def penalty_pairs(problem: Problem, var_of: np.ndarray, fields, forbidden: set) -> list[tuple[int, int, float]]:
    """The penalised pairs of the core that may be selected together, as (variable, variable,
    penalty): agreement and the forbidden pairs already keep the others apart."""
    pen_i, pen_j, pen_p = _live_penalties(problem, var_of, fields)
    return [(int(var_of[a]), int(var_of[c]), p) for a, c, p in
            zip(pen_i.tolist(), pen_j.tolist(), pen_p.tolist()) if (a, c) not in forbidden]


def penalty_arrays(problem: Problem, var_of: np.ndarray, fields, forbidden: np.ndarray) -> tuple:
    """:func:`penalty_pairs` as arrays (variables, variables, penalties), ``forbidden`` given as
    :func:`forbidden_array`'s keys."""
    pen_i, pen_j, pen_p = _live_penalties(problem, var_of, fields)
    if len(forbidden):
        keys = pen_i.astype(np.int64) * max(problem.n, 1) + pen_j
        at = np.minimum(np.searchsorted(forbidden, keys), len(forbidden) - 1)
        keep = forbidden[at] != keys
        pen_i, pen_j, pen_p = pen_i[keep], pen_j[keep], pen_p[keep]
    return var_of[pen_i], var_of[pen_j], pen_p


def gate_rows(problem: Problem, core: np.ndarray) -> dict:
    """The gate's rows over the core with the gate enforced: ``nonempty`` (an empty context fails
    the gate), ``coverage`` (the required aspects' integer weights and the least covered weight,
    or None), ``fresh`` (Σ c_i x_i ≥ 0, or None) and ``stale`` (Σ c_i x_i ≤ 0, or None)."""
    packed = problem.packed
    gate = packed.requirements.gate
    aspect_weights = relative_weights(packed.aspect_weights[: problem.n_required])
    rows: dict = {"nonempty": gate.min_policy_admissibility > 0 or gate.min_freshness > 0 or gate.min_coverage > 0,
                  "coverage": None, "fresh": None, "stale": None}
    if aspect_weights.size and gate.min_coverage > 0:
        weights = homogeneous(aspect_weights)  # Σ ω_a y_a ≥ ρ Σ ω_a holds under any scaling
        rows["coverage"] = (weights, math.ceil(gate.min_coverage * sum(weights) * (1 - TOLERANCE)))
    if gate.min_freshness > 0:
        rows["fresh"] = homogeneous(packed.relevance[core] * (problem.signals.freshness[core] - gate.min_freshness))
    if gate.max_stale_risk is not None:
        rows["stale"] = homogeneous((~packed.valid_now[core]).astype(np.float64) - gate.max_stale_risk)
    return rows

"""Brute force over every subset (numpy over the 2^n subsets), the reference twin of the optimizer.

It reads the problem's inputs (values, pairs, groups, eligibility, requirements) and evaluates
the constraints and the objective on its own, without the library's checks."""

import math

import numpy as np


def all_subsets(n):
    codes = np.arange(2 ** n, dtype=np.int64)
    return ((codes[:, None] >> np.arange(n)) & 1).astype(bool)


def naive_objective(problem, X):
    total = X @ problem.value
    if problem.aspect_gain.size:
        covered = (X.astype(np.int64) @ problem.covers.astype(np.int64)) > 0
        total = total + covered @ problem.aspect_gain
    for i, j, p in zip(problem.pair_i, problem.pair_j, problem.pair_penalty):
        total = total - p * (X[:, i] & X[:, j])
    return total


def naive_feasible(problem, X, *, gate_on, sources_on):
    packed = problem.packed
    reqs = packed.requirements
    gate = reqs.gate
    ok = ~(X & ~problem.eligible).any(axis=1)
    used = X.astype(np.int64) @ packed.tokens
    ok &= used <= packed.budget
    for i, j in zip(problem.hard_i, problem.hard_j):
        ok &= ~(X[:, i] & X[:, j])
    for group in problem.groups:
        ok &= X[:, group].sum(axis=1) <= 1
    count = X.sum(axis=1)
    for s in range(len(packed.source_names)):
        members = X[:, packed.source == s].sum(axis=1)
        ok &= members <= packed.source_max[s]
        if sources_on:
            ok &= members >= packed.source_min[s]
    if reqs.max_chunks is not None:
        ok &= count <= reqs.max_chunks
    if gate_on:
        if gate.max_token_utilization is not None:
            ok &= used <= math.floor(gate.max_token_utilization * packed.budget + 1e-9)
        ok &= used >= math.ceil(gate.min_token_utilization * packed.budget - 1e-9)
        ok &= count >= 1
        n_req = problem.n_required
        if n_req:
            weights = packed.aspect_weights[:n_req]
            covered = (X.astype(np.int64) @ problem.covers[:, :n_req].astype(np.int64)) > 0
            ok &= covered @ weights >= gate.min_coverage * weights.sum() - 1e-9
        r = packed.relevance
        f = problem.signals.freshness
        with np.errstate(invalid="ignore", divide="ignore"):
            phi = np.where(X @ r > 0, (X @ (r * f)) / (X @ r), (X @ f) / np.maximum(count, 1))
        ok &= phi >= gate.min_freshness - 1e-9
        con = problem.signals.contradictions
        if gate.max_contradiction_density <= 0:
            for i, j in zip(con.i, con.j):
                ok &= ~(X[:, i] & X[:, j])
        else:
            conflicts = np.zeros(len(X))
            for i, j in zip(con.i, con.j):
                conflicts += X[:, i] & X[:, j]
            ok &= conflicts <= gate.max_contradiction_density * count * (count - 1) / 2 + 1e-9
        if gate.max_stale_risk is not None:
            stale = X @ (~packed.valid_now).astype(np.int64)
            ok &= stale <= gate.max_stale_risk * count + 1e-9
    return ok


def brute_force(problem, *, enforce_gate=True):
    """(best objective, tiers relaxed) over every subset, relaxing gate then sources as select() does."""
    X = all_subsets(problem.n)
    objective = naive_objective(problem, X)
    tiers = [("gate", True, True), ("sources", False, True), ("none", False, False)]
    if not enforce_gate:
        tiers = tiers[1:]
    relaxed = []
    for name, gate_on, sources_on in tiers:
        ok = naive_feasible(problem, X, gate_on=gate_on, sources_on=sources_on)
        if ok.any():
            return float(objective[ok].max()), relaxed, (X, ok, objective)
        relaxed.append("gate" if name == "gate" else "sources")
    raise AssertionError("the empty set is always feasible")

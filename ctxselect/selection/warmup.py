"""Loading what ``select()`` runs — OR-Tools and the compiled kernels — once per process, before a
call's clock starts: :func:`warm_up` for an application's start-up, and the same step that the
first optimizing ``select()`` takes itself."""

from __future__ import annotations

import threading
import time

import numpy as np

from ctxselect.features.compute import signals as compute_signals
from ctxselect.features.similarity import minhash_pairs, text_signatures
from ctxselect.packing import pack
from ctxselect.selection.problem import ObjectiveWeights, build_problem, marginal_gains
from ctxselect.selection.solvers.core import upper_bound
from ctxselect.selection.solvers.cpsat import load_solver
from ctxselect.selection.solvers.exact import load_exact
from ctxselect.selection.solvers.registry import BASELINES, Method

__all__ = ["warm_up"]

_LOADED = False
_LOADING = threading.Lock()  # one thread loads; a concurrent first call waits for it


def warm_up() -> float:
    """Load now what the first :func:`select` of a process would load: OR-Tools and every compiled
    kernel a call with text, a question, claims, a conflict field, versions or embeddings runs.

    Call it once where the application starts (a server's start-up, a worker's initializer), so
    that no user request pays for it. ``select()`` does the same itself before its first
    optimizing call's clock starts (the result is never a fallback for it), but that call's wall
    time then includes the loading: 1-1.5 s with Numba's on-disk cache warm on a shared 2-core
    machine (Numba's import and first start-up 0.7-0.8 s of it), half a minute with the cache cold
    (docs/deployment.md warms it at build time; benchmarks/first_call.py measures it). Safe from
    several threads (one loads, the others wait for it); later calls return at once.

    Kernels that only run on very large inputs (the parallel variants, from 32 MB of text) still
    load on their first use.

    Returns
    -------
    float
        Seconds this call spent loading (0.0 when everything was loaded before).
    """
    if _LOADED:
        return 0.0
    started = time.perf_counter()
    _load_once()
    return time.perf_counter() - started


def _load_once() -> None:
    """Once per process, before the first optimal call's clock starts: import OR-Tools and load
    (or compile) the kernels a call uses, on a tiny query with text, a question naming a year,
    claims, a conflict field, versions and embeddings. Without it the first call of a process spent
    0.5-1 s of its ``time_limit`` loading code (50 s with an empty kernel cache) and returned the
    fallback baseline where later calls prove the optimum."""
    global _LOADED
    if _LOADED:
        return
    with _LOADING:
        if not _LOADED:
            _load_kernels()
            _LOADED = True


def _load_kernels() -> None:
    """:func:`_load_once`'s work, run once."""
    load_solver()
    load_exact()  # the branch and bound that solves small models before CP-SAT
    texts = ["The river flooded 3,559 homes in the northern valley district in March 2021 says the report",
             "The river flooded 4,100 homes in the northern valley district in March 2021 says the report"]
    for embeddings in (None, [[1.0, 0.0], [0.9, 0.1]]):
        chunks = [{"id": f"w{k}", "source": "s", "tokens": 5, "relevance": 0.5, "text": t, "doc_id": "d",
                   "version": str(k), "fields": {"f": k}, "timestamp": 1.0e9, "title": "River floods",
                   **({"embedding": embeddings[k]} if embeddings else {})} for k, t in enumerate(texts)]
        packed = pack(chunks, {"token_budget": 10, "conflict_fields": ["f"], "now": 1.1e9})
        weights = ObjectiveWeights.from_mapping(packed.requirements.weights)
        question = "floods in 2021?"  # its terms found in the signatures' pass (and not: embeddings)
        problem = build_problem(packed, compute_signals(packed, question), weights, query=question)
    upper_bound(problem, problem.capacity(True))  # the core's bound kernel
    minhash_pairs(text_signatures(texts)[0], 0.5, exhaustive=False)  # LSH banding (n >= 634 only)
    for method in (Method.GREEDY, Method.DENSITY, Method.MMR):  # the optimizer's hints, and MMR for warm_up()
        BASELINES[method](problem)
    marginal_gains(problem, np.arange(problem.n), np.zeros(problem.aspect_gain.size, dtype=bool), np.zeros(problem.n))

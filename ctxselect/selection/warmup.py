"""Loading what ``select()`` runs — OR-Tools and the compiled kernels — once per process, before a
call's clock starts: :func:`warm_up` for an application's start-up, and the same step that the
first optimizing ``select()`` takes itself."""

from __future__ import annotations

import gc
import importlib
import threading
import time
from enum import Enum

import numpy as np

from ctxselect.features.compute import signals as compute_signals
from ctxselect.features.similarity import load_cosine, minhash_pairs, minhash_route, text_signatures
from ctxselect.packing import pack
from ctxselect.selection.problem import ObjectiveWeights, build_problem, marginal_gains
from ctxselect.selection.solvers.core import upper_bound
from ctxselect.selection.solvers.cpsat import load_solver
from ctxselect.selection.solvers.exact import load_exact
from ctxselect.selection.solvers.hints import Baselines
from ctxselect.selection.solvers.registry import BASELINES, Method

__all__ = ["warm_up", "load_for"]


class _Part(Enum):
    """What a first call may load, apart: :data:`BASE` before any optimizing ``select()``'s clock
    starts, the others when its input needs them (:func:`load_for`)."""

    BASE = "the kernels of every call: text, a question, claims, conflict fields, versions; the branch and bound"
    EMBEDDINGS = "the cosine's kernels"
    PAIRS = "MinHash's all-pairs kernel in parallel (minhash_route 'parallel': 201-632 texts)"
    LSH = "MinHash's banding (minhash_route 'lsh': 633 texts on)"
    SOLVER = "OR-Tools (warm_up() only: a first CP-SAT solve imports it outside its time limit)"
    MMR = "the MMR baseline (select(method='mmr'), which warms nothing)"
    MODULES = "select()'s own modules (api, report, explanations, tiers): warm_up() only, 4-5 ms"


#: The part of each way :func:`~ctxselect.features.similarity.minhash_pairs` compares beyond BASE's (serial).
_ROUTES = {"parallel": _Part.PAIRS, "lsh": _Part.LSH}
_LOADED: set = set()  # the parts loaded in this process
_LOADING = threading.Lock()  # one thread loads; a concurrent first call waits for it


def warm_up() -> float:
    """Load now what the first :func:`select` of a process would load: OR-Tools, every compiled
    kernel a call with text, a question, claims, a conflict field, versions or embeddings runs, and
    the modules of ``select()`` and ``inspect()``.

    Call it once where the application starts (a server's start-up, a worker's initializer), so
    that no user request pays for it. Without it, an optimizing ``select()`` loads what its own
    input runs (the kernels of text and the branch and bound before its clock starts; the
    cosine's, MinHash's parallel pairs and banding when the input needs them, OR-Tools when its
    first CP-SAT solve does, the time they take not counted against its ``time_limit`` and
    reported as ``timings["load"]``): its wall time then includes the loading, about 0.5 s for 50
    candidates with text and Numba's on-disk cache warm on
    a 2-core machine (benchmarks/first_call.py measures it), half a minute with the cache cold
    (docs/deployment.md warms it at build time). Safe from several threads (one loads, the others
    wait for it); later calls return at once.

    Kernels that only run on very large inputs (the parallel text kernels, from 32 MB of text)
    still load on their first use.

    When it loaded anything it ends with a full garbage collection (~50 ms): the objects the loading
    made (Numba's types and code) are scanned there, not by a full collection an early request
    would otherwise trigger (measured: a 50-text call's 8-10 ms became 45-58 ms, the second or third call
    after it).

    Returns
    -------
    float
        Seconds this call spent loading (0.0 when everything was loaded before), the collection
        aside.
    """
    spent = _load(set(_Part))
    if spent:
        gc.collect()
    return spent


def _load_once() -> None:
    """Once per process, before the first optimal call's clock starts: load (or compile) the kernels
    every call runs, on a tiny query with text, a question naming a year, claims, a conflict field
    and versions. Without it the first call of a process spent 0.5-1 s of its ``time_limit``
    loading code (50 s with an empty kernel cache) and returned the fallback baseline where later
    calls prove the optimum."""
    _load({_Part.BASE})


def load_for(packed, similarity: str = "auto", timings: dict | None = None) -> float:
    """Load the parts an optimizing call on ``packed`` runs beyond :func:`_load_once`'s (the cosine
    with embeddings; MinHash's parallel all-pairs kernel from 201 texts, its banding from 633); the
    seconds spent (0.0 when all were loaded, else also ``timings["load"]``), which
    :func:`ctxselect.select` does not count against its time limit. ``similarity``: the call's
    ``signal_options`` choice. OR-Tools is imported by the first CP-SAT solve, outside the limit
    too (:func:`ctxselect.selection.solvers.cpsat.solver_loaded`): the branch and bound proves most
    small problems without it."""
    parts = {_Part.BASE}
    if packed.embedding_data is not None and similarity in ("auto", "cosine"):  # signals()' choice of "auto"
        parts.add(_Part.EMBEDDINGS)
    elif similarity != "none" and (part := _ROUTES.get(minhash_route(packed.n))) is not None:
        parts.add(part)
    spent = _load(parts)
    if spent and timings is not None:
        timings["load"] = spent
    return spent


def _load(parts: set) -> float:
    """Load ``parts`` not loaded yet, once per process; the seconds spent."""
    if parts <= _LOADED:
        return 0.0
    started = time.perf_counter()
    with _LOADING:
        for part in _Part:  # BASE first: the others reuse its problem
            if part in parts and part not in _LOADED:
                _LOADERS[part]()
                _LOADED.add(part)
    return time.perf_counter() - started


def _tiny_problem(embeddings: bool):
    """A tiny query's problem, through pack, the signals and the problem's build: text, a question
    naming a year, claims, a conflict field, versions; with ``embeddings``, 2-d embeddings too."""
    texts = ["The river flooded 3,559 homes in the northern valley district in March 2021 says the report",
             "The river flooded 4,100 homes in the northern valley district in March 2021 says the report"]
    vectors = [[1.0, 0.0], [0.9, 0.1]]
    chunks = [{"id": f"w{k}", "source": "s", "tokens": 5, "relevance": 0.5, "text": t, "doc_id": "d",
               "version": str(k), "fields": {"f": k}, "timestamp": 1.0e9, "title": "River floods",
               **({"embedding": vectors[k]} if embeddings else {})} for k, t in enumerate(texts)]
    packed = pack(chunks, {"token_budget": 10, "conflict_fields": ["f"], "now": 1.1e9})
    weights = ObjectiveWeights.from_mapping(packed.requirements.weights)
    question = "floods in 2021?"  # its terms found in the signatures' pass (and not: embeddings)
    return build_problem(packed, compute_signals(packed, question), weights, query=question)


def _load_base() -> None:
    load_exact()  # the branch and bound that solves small models before CP-SAT
    problem = _tiny_problem(embeddings=False)
    upper_bound(problem, problem.capacity(True))  # the core's bound kernel
    for method in Baselines.METHODS:  # the optimizer's hints
        BASELINES[method](problem)
    marginal_gains(problem, np.arange(problem.n), np.zeros(problem.aspect_gain.size, dtype=bool), np.zeros(problem.n))


def _load_mmr() -> None:
    BASELINES[Method.MMR](_tiny_problem(embeddings=False))


_LOADERS = {
    _Part.BASE: _load_base,
    _Part.EMBEDDINGS: lambda: (_tiny_problem(embeddings=True), load_cosine()),
    _Part.PAIRS: lambda: minhash_pairs(np.repeat(text_signatures(["a b c d", "a b c e"])[0], 101, axis=0), 0.5,
                                       exhaustive=True),  # 202 rows: SERIAL_PAIRS or more, the parallel kernel
    _Part.LSH: lambda: minhash_pairs(text_signatures(["a b c d", "a b c e"])[0], 0.5, exhaustive=False),
    _Part.SOLVER: load_solver,
    _Part.MMR: _load_mmr,
    # the first select() after warm_up() imported them (50 texts: 12-14 against 7-8 ms for the next new ones)
    _Part.MODULES: lambda: importlib.import_module("ctxselect.selection.api"),
}

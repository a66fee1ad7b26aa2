"""Start-up: ``import ctxselect`` loads no heavy optional machinery (OR-Tools and the pandas it
brings, plotting, the command line's rich/typer, threadpoolctl); each is imported on first use."""

import json
import subprocess
import sys

HEAVY = ("ortools", "pandas", "matplotlib", "rich", "typer", "threadpoolctl", "ctxselect.cli")


def _loaded_after(code: str) -> list[str]:
    probe = f"import json, sys\n{code}\nprint(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=300)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_import_ctxselect_loads_no_heavy_module():
    assert _loaded_after("import ctxselect") == []


def test_the_solver_and_the_blas_limit_load_them_on_first_use():
    code = """
import numpy as np
import ctxselect
cands = [{"id": f"c{i}", "source": "s", "relevance": 0.5 + i / 20, "tokens": 3, "text": f"text {i}"} for i in range(6)]
assert ctxselect.select(cands, {"token_budget": 7}, method="greedy").ids
assert "ortools" not in sys.modules  # a baseline needs no solver
ctxselect.select(cands, {"token_budget": 7}, embeddings=np.eye(6))
assert "ortools" not in sys.modules  # the branch and bound proved it
ctxselect.select(cands, {"token_budget": 7}, weights={"relevance": 1e6, "coverage": 1e6})  # beyond the
# branch and bound's floats: CP-SAT's, and OR-Tools imported
"""
    loaded = _loaded_after(code)
    from ctxselect._config import COSINE_PRODUCTS

    assert "ortools" in loaded
    assert ("threadpoolctl" in loaded) == (COSINE_PRODUCTS == "float32")  # the BLAS limit: float32 products only
    assert "matplotlib" not in loaded and "ctxselect.cli" not in loaded
    assert "pandas" not in loaded  # OR-Tools' compiled layer only: its cp_model front end imports pandas (0.4 s)


def test_the_public_names_load_on_first_use():
    """``import ctxselect`` imports no NumPy or Numba (PEP 562 attributes); the first public
    name a program touches loads its module, and every name of ``__all__`` resolves."""
    assert json.loads(subprocess.run(
        [sys.executable, "-c", "import json, sys, ctxselect; print(json.dumps([m for m in ('numpy', 'numba') "
                               "if m in sys.modules]))"],
        capture_output=True, text=True, check=True, timeout=300).stdout) == []
    import ctxselect

    for name in ctxselect.__all__:
        value = getattr(ctxselect, name)
        assert value is not None and name in dir(ctxselect)
        defined_in = getattr(value, "__module__", None)
        assert defined_in is None or defined_in == ctxselect._EXPORTS[name], (name, defined_in)
    try:
        ctxselect.no_such_name
    except AttributeError as error:
        assert "no_such_name" in str(error)
    else:
        raise AssertionError("an unknown name must raise AttributeError")


def test_warm_up_loads_every_kernel_a_select_runs():
    """In a fresh process, after ``warm_up()`` no ``select()`` of any method, with text, a question,
    claims, conflict fields, versions or embeddings, at n = 40 and 700 (LSH banding), loads or
    compiles a kernel (Numba's ``_compile_for_args`` is the path of both), nor one at n = 5,200
    (the claim kernels on a copied sub-buffer); a second ``warm_up()``
    returns 0.0, and two threads warming up at once both come back."""
    code = """
import json, sys, threading
from numba.core import dispatcher
loaded = []
original = dispatcher.Dispatcher._compile_for_args
def spy(self, *args, **kwargs):
    loaded.append(self.py_func.__name__)
    return original(self, *args, **kwargs)
dispatcher.Dispatcher._compile_for_args = spy
import ctxselect
from ctxselect.evaluate.generate import generate_queries
spent = []
threads = [threading.Thread(target=lambda: spent.append(ctxselect.warm_up())) for _ in range(2)]
for t in threads: t.start()
for t in threads: t.join()
warmed = len(loaded)
loaded.clear()
for dim in (0, 16):
    for n in (40, 700):
        q = generate_queries(queries=1, candidates=n, seed=n + dim, embedding_dim=dim)[0]
        for method in ctxselect.Method:
            assert ctxselect.select(q.candidates, q.requirements, q.query, method=method).ids
q = generate_queries(queries=1, candidates=5200, seed=1)[0]  # claims among the redundant pairs only
assert ctxselect.select(q.candidates, q.requirements, q.query).ids
print(json.dumps({"spent": spent, "again": ctxselect.warm_up(), "warmed": warmed, "later": loaded}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["later"] == []
    assert result["warmed"] > 10 and len(result["spent"]) == 2 and max(result["spent"]) > 0
    assert result["again"] == 0.0


def test_warm_up_ends_with_a_full_collection_of_what_it_made():
    """``warm_up()``'s loading makes many objects (Numba's) and leaves the collector's older
    generations due (counts (300, 11, 10) here): the first full collection would fall on an early
    request (45 ms of a 50 ms call, measured). It collects them itself when it loaded anything, so
    the counts start from zero; a second call, with nothing to load, does not collect."""
    code = """
import gc, json
import ctxselect
full = gc.get_stats()[2]["collections"]
spent = ctxselect.warm_up()
after = (gc.get_count(), gc.get_stats()[2]["collections"] - full)
again = ctxselect.warm_up()
print(json.dumps({"spent": spent, "counts": after[0], "full": after[1], "again": again,
                  "full_again": gc.get_stats()[2]["collections"] - full - after[1]}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["spent"] > 0 and result["full"] >= 1 and result["counts"][1:] == [0, 0]
    assert result["again"] == 0.0 and result["full_again"] == 0


def test_after_warm_up_a_first_select_imports_no_module():
    """``warm_up()`` imports the modules ``select()`` and ``inspect()`` run (the first call after it
    imported select()'s own, 4-5 ms of a 50-text call), and says how long it took, counted once."""
    code = """
import json, sys, time
import ctxselect
wall = time.perf_counter()
spent = ctxselect.warm_up()
wall = time.perf_counter() - wall
before = set(sys.modules)
cands = [{"id": f"c{i}", "source": f"s{i % 4}", "relevance": 0.1 + (i % 17) / 20, "tokens": 40 + i % 30,
          "text": f"District {i % 9} counted {1000 + 37 * i} homes flooded in {2000 + i % 20}"} for i in range(50)]
for method in ctxselect.Method:
    assert ctxselect.select(cands, {"token_budget": 400, "max_per_source": 4}, "homes flooded in 2010?",
                            method=method).ids
ctxselect.inspect(cands[:5], {"token_budget": 400})
new = sorted(set(sys.modules) - before)
print(json.dumps({"spent": spent, "wall": wall, "again": ctxselect.warm_up(), "new": new}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert [m for m in result["new"] if m.startswith("ctxselect")] == []
    assert 0 < result["spent"] <= result["wall"] and result["again"] == 0.0  # its time counted once


def test_a_first_select_loads_what_its_input_runs_outside_its_clock():
    """Without ``warm_up()``, a fresh process's first optimizing ``select()`` loads only the kernels
    its input runs, each before its clock starts or under ``load_for`` (whose time is not counted
    against ``time_limit`` and is reported as ``timings["load"]``): never inside the signals or the
    solve. Text at n = 40 does not load the cosine's kernels; embeddings then load them, 700 texts
    MinHash's banding, 300 its parallel all-pairs kernel; candidates without text load nothing
    more (their empty buffer is read-only like the others: no second compiled version). OR-Tools,
    when the first query's CP-SAT solve imports it, is loading too."""
    code = """
import json, sys, traceback
from numba.core import dispatcher
loads = []
original = dispatcher.Dispatcher._compile_for_args
def spy(self, *args, **kwargs):
    stack = [frame.filename for frame in traceback.extract_stack()]
    loads.append([self.py_func.__name__, any(f.endswith("warmup.py") for f in stack)])
    return original(self, *args, **kwargs)
dispatcher.Dispatcher._compile_for_args = spy
import ctxselect
from ctxselect.evaluate.generate import generate_queries
out = []
for n, dim in ((40, 0), (40, 16), (700, 0), (300, 0), (40, -1), (40, 0)):
    q = generate_queries(queries=1, candidates=n, seed=n + dim, embedding_dim=max(dim, 0))[0]
    cands = q.candidates if dim >= 0 else [{**c.to_dict(), "text": ""} for c in q.candidates]  # -1: no text
    loads.clear()
    sel = ctxselect.select(cands, q.requirements, q.query)
    out.append({"n": n, "dim": dim, "loads": list(loads), "load": sel.timings.get("load", 0.0),
                "model": sel.timings.get("model", 0.0),
                "ortools": "ortools" in sys.modules, "status": sel.status})
print(json.dumps(out))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=600)
    runs = json.loads(out.stdout.strip().splitlines()[-1])
    for run in runs:
        outside = [name for name, warming in run["loads"] if not warming]
        assert outside == [], (run["n"], run["dim"], outside)
        assert run["status"] != "fallback"
    first, cosine, lsh, pairs, textless, again = runs
    names = [[name for name, _ in run["loads"]] for run in runs]
    assert len(names[0]) > 10  # BASE: before the clock
    assert (first["load"] > 0) == first["ortools"]  # OR-Tools imported by a CP-SAT solve: loading, outside the clock
    assert not first["ortools"] or first["model"] < first["load"]  # (not inside CP-SAT's model building)
    assert "_unit_rows" in names[1] and "_unit_rows" not in names[0] and cosine["load"] > 0
    assert "_band_keys" in names[2] and "_band_keys" not in names[0] and lsh["load"] > 0
    assert "_all_pairs_above" in names[3] and pairs["load"] > 0  # 201-632 texts: MinHash's parallel pairs
    assert names[4] == [] and names[5] == [] and again["load"] == 0.0  # no text: the kernels BASE loaded

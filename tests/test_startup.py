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
"""
    loaded = _loaded_after(code)
    assert "ortools" in loaded and "threadpoolctl" in loaded
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

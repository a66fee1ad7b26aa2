"""Cached kernels load without Numba's compiler set-up (ctxselect._kernel_cache), and everything Numba
does afterwards in the process still works: linking a loaded kernel into new code, compiling a kernel's
new signature, the user's own Numba code."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ctxselect import _kernel_cache

SELECT = """
import sys, numpy as np, ctxselect
chunks = [{"id": f"c{i}", "source": f"s{i % 3}", "tokens": 30 + i % 7, "relevance": 0.2 + (i % 11) / 20,
           "text": f"District {i % 5} counted {100 + 13 * i} homes flooded in March {2000 + i % 9}"} for i in range(40)]
result = ctxselect.select(chunks, {"token_budget": 250, "max_per_source": 3}, "homes flooded in 2004?")
print(result.status, result.ids)
"""

LOADED = SELECT + """
from numba.core import imputils
from numba.core.registry import cpu_target
from ctxselect._kernel_cache import FAST_LOAD, _LazyLinkingLibrary
from ctxselect.kernels.pairs import _freshness
context = cpu_target.target_context
print(FAST_LOAD, imputils.builtin_registry in context._registries)
args = (np.full(3, 0.1), np.array([0.0, 1.0, 2.0]), np.array([True, True, False]), np.ones(3, bool), 0.5, False)
expected = _freshness(*args).tolist()
library = _freshness.overloads[_freshness.signatures[0]].library
pending = getattr(library, "_pending_bitcode", None) is not None  # its bitcode not parsed yet
print(sum(_freshness._cache_hits.values()), type(library) is _LazyLinkingLibrary, pending)
if sys.argv[1] == "after":
    from numba import njit

    @njit
    def calls_the_kernel(decay, age, dated, valid, missing, zero):  # links the loaded kernel's bitcode in
        return _freshness(decay, age, dated, valid, missing, zero) * 2.0

    @njit(cache=True)
    def users_own(words):  # needs the registries the fast load left out (strings, lists)
        return len(" ".join(words).split(" "))

    print(calls_the_kernel(*args).tolist() == [2.0 * x for x in expected], library._pending_bitcode is None)
    new_signature = _freshness(args[0], np.arange(3), *args[2:])  # int ages: compiled in this process
    print(new_signature.tolist() == expected, len(_freshness.signatures), users_own(["a b", "c"]))
    print(imputils.builtin_registry in context._registries)
"""


def _run(cache: str, *args: str, script: str = LOADED) -> list[str]:
    """The script run as a file in a new process (Numba caches only functions of a file)."""
    path = Path(cache).parent / f"script_{len(list(Path(cache).parent.glob('script_*')))}.py"
    path.write_text(script)
    env = {**os.environ, "CTXSELECT_CACHE_DIR": cache, "NUMBA_CACHE_DIR": cache}
    done = subprocess.run([sys.executable, str(path), *args], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.splitlines()


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory):
    """A cache directory the kernels were compiled into, and what select() returned there."""
    cache = str(tmp_path_factory.mktemp("kernels"))
    return cache, _run(cache, script=SELECT)[0]


@pytest.mark.skipif(not _kernel_cache.FAST_LOAD, reason="this Numba's internals differ: kernels load as Numba does")
def test_a_fresh_process_loads_cached_kernels_without_installing_numbas_registries(warm_cache):
    cache, compiled = warm_cache
    lines = _run(cache, "only")
    assert lines[0] == compiled  # the same selection from the loaded machine code
    assert lines[1] == "True False"  # loaded the fast way; no registry installed
    assert lines[2] == "1 True True"  # from the disk cache, its bitcode not parsed


@pytest.mark.skipif(not _kernel_cache.FAST_LOAD, reason="this Numba's internals differ: kernels load as Numba does")
def test_numba_compiles_as_usual_after_kernels_were_loaded_the_fast_way(warm_cache):
    cache, compiled = warm_cache
    lines = _run(cache, "after")
    assert lines[:3] == [compiled, "True False", "1 True True"]
    assert lines[3] == "True True"  # linked into new code: the bitcode parsed then, the result right
    assert lines[4] == "True 2 3"  # the kernel's float32 signature compiled; the user's string code ran
    assert lines[5] == "True"  # compiling installed the registries


def test_kernels_load_as_numba_loads_them_where_its_internals_differ(warm_cache):
    """With FAST_LOAD off (what an unexpected Numba gives), KernelCache is Numba's FunctionCache."""
    cache, compiled = warm_cache
    script = "import ctxselect._kernel_cache as k; k.FAST_LOAD = False\n" + LOADED
    lines = _run(cache, "only", script=script)
    assert lines[0] == compiled
    assert lines[1] == "False True"  # Numba's load_overload refreshed the context
    assert lines[2] == "1 False False"

"""Numba's compiled kernels are cached outside the installed package, or not at all; and the
package imports with the JIT disabled (kernels run as Python)."""

import os
import subprocess
import sys
from pathlib import Path

import ctxselect

PACKAGE = Path(ctxselect.__file__).resolve().parent
SCRIPT = ("import ctxselect, ctxselect._config as j; print(j.CACHE_DIR); "
          "print(ctxselect.select([{'id': 'a', 'source': 's', 'tokens': 5, 'relevance': .5, 'text': 'one two three four'},"
          " {'id': 'b', 'source': 's', 'tokens': 5, 'relevance': .4, 'text': 'one two three four'}],"
          " {'token_budget': 100}).ids)")


def _run(cache_dir: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CTXSELECT_CACHE_DIR": cache_dir}
    return subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300)


def _package_cache_files() -> set:
    return {p for p in PACKAGE.rglob("*") if p.suffix in (".nbi", ".nbc")}


def test_kernels_cache_in_the_chosen_directory_never_in_the_package(tmp_path):
    before = _package_cache_files()
    done = _run(str(tmp_path / "cache"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(tmp_path / "cache"), "['a']"]
    assert list((tmp_path / "cache").rglob("*.nbi")), "no kernel was cached in CTXSELECT_CACHE_DIR"
    assert _package_cache_files() <= before  # nothing new inside the installed package


# One small kernel, compiled without a disk cache: a whole select() compiled every kernel from
# scratch (93 s of a 638 s suite on 2026-12-02's machine), which the test above already does.
ONE_KERNEL = ("import numpy as np, ctxselect._config as j; from ctxselect.kernels.pairs import _freshness; "
              "print(j.CACHE_DIR); print(_freshness(np.zeros(2), np.ones(2), np.ones(2, bool), np.ones(2, bool), "
              "0.5, False).tolist())")


def test_an_unusable_cache_directory_means_no_disk_cache_and_one_warning(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    before = _package_cache_files()
    env = {**os.environ, "CTXSELECT_CACHE_DIR": str(blocker / "cache")}
    done = subprocess.run([sys.executable, "-c", ONE_KERNEL], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["None", "[1.0, 1.0]"]  # the kernel compiled and ran
    assert done.stderr.count("no writable cache directory") == 1
    assert _package_cache_files() <= before and not list(tmp_path.rglob("*.nbi"))  # cached nowhere


def test_the_package_imports_with_the_jit_disabled(tmp_path):
    env = {**os.environ, "NUMBA_DISABLE_JIT": "1", "CTXSELECT_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=300,
                          cwd=str(PACKAGE.parent))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "['a']"


TWIN_SCRIPT = """
import sys
import numpy as np
from ctxselect.kernels import words as m
from ctxselect.packing import text_buffer
buf, off = text_buffer(["hello world foo bar baz"] * 3)
kernel = m._signatures_serial if sys.argv[1] == "serial" else m._signatures
kernel(buf, off, 3, np.empty((3, 128), dtype=np.uint64))
overload = kernel.overloads[kernel.signatures[0]]
parfors = None if overload.metadata is None else len(overload.metadata["parfors"])
print(kernel.py_func.__qualname__, parfors, sum(kernel._cache_hits.values()))
"""


def test_a_parallel_kernel_never_loads_its_serial_twins_cache_entry(tmp_path):
    """The serial twin compiled and cached first; the parallel kernel in a new process must compile
    its own parallel code (one parfor), not load the twin's entry (they once shared one)."""
    env = {**os.environ, "CTXSELECT_CACHE_DIR": str(tmp_path / "cache")}

    def run(variant: str) -> list[str]:
        done = subprocess.run([sys.executable, "-c", TWIN_SCRIPT, variant], env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout.split()

    assert run("serial") == ["_signatures_serial", "0", "0"]
    assert run("parallel") == ["_signatures", "1", "0"]  # compiled here, with its parfor
    names = sorted(p.name.split("-")[0] for p in (tmp_path / "cache").rglob("*.nbi"))
    assert "words._signatures" in names and "words._signatures_serial" in names


def test_integer_products_only_where_numba_compiles_for_this_cpu_and_they_are_asked_for():
    """CTXSELECT_COSINE_PRODUCTS=float32, the JIT disabled, another NUMBA_CPU_NAME or any
    NUMBA_CPU_FEATURES (one with VNNI turned off aborted the process in LLVM) mean the float32 GEMM;
    auto is int8 where int8 is chosen, and int16 is int16 there; an unknown value warns, naming the
    valid ones, and chooses as auto does."""
    code = "import ctxselect._config as c; print(c.COSINE_PRODUCTS)"

    def int16(**env):
        out = subprocess.run([sys.executable, "-W", "always", "-c", code], env={**os.environ, **env},
                             capture_output=True, text=True, timeout=300)
        return out.stdout.strip(), out.stderr

    auto, _ = int16()
    assert auto in ("int8", "float32")
    assert int16(CTXSELECT_COSINE_PRODUCTS="int8")[0] == auto
    assert int16(CTXSELECT_COSINE_PRODUCTS="int16")[0] == ("int16" if auto == "int8" else "float32")
    for env in ({"CTXSELECT_COSINE_PRODUCTS": "float32"}, {"NUMBA_DISABLE_JIT": "1"}, {"NUMBA_CPU_NAME": "generic"},
                {"NUMBA_CPU_FEATURES": "-avx512vnni"},
                {"CTXSELECT_COSINE_PRODUCTS": "int16", "NUMBA_DISABLE_JIT": "1"}):
        assert int16(**env)[0] == "float32", env
    value, warned = int16(CTXSELECT_COSINE_PRODUCTS="int4")
    assert value == auto and "'int4' is not one of auto, int8, int16, float32" in warned

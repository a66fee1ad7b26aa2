"""The one place where Numba compilation options are set, and where compiled code is cached.

Serial kernels use :data:`serial`, parallel kernels :data:`parallel`. Machine code is cached on disk
so a fresh process loads it instead of compiling, but never inside the installed package (a
reinstall or ``pip uninstall`` would leave the files behind, and site-packages may be read-only):

1. ``CTXSELECT_CACHE_DIR`` when set (an empty value turns the disk cache off). When that
   directory exists but cannot be written (a cache warmed into a container image whose file
   system is read-only at run time), it is used **read-only**: kernels found there are loaded,
   the others compile in memory and are not saved (:data:`CACHE_READ_ONLY`);
2. else the user's cache directory (``~/.cache/ctxselect/numba`` on Linux);
3. else a per-user folder in the temporary directory;
4. else no disk cache: kernels compile once per process, and one warning says so.

Only ctxselect's own kernels are routed there; other Numba code in the process keeps Numba's own
settings. To warm the cache in a container image, run ``ctxselect bench`` on any dump (for
example ``ctxselect gen``'s) once at build time with ``CTXSELECT_CACHE_DIR`` pointing into the image
(docs/deployment.md).
"""

from __future__ import annotations

import os
import tempfile
import types
import warnings
from pathlib import Path

from numba import njit
from numba.core import config as numba_config
from numba.core import caching
from numba.misc.appdirs import AppDirs

from ctxselect._kernel_cache import KernelCache, LoadOnlyCache

__all__ = ["CACHE_DIR", "CACHE_READ_ONLY", "serial", "parallel", "serial_sums", "parallel_sums", "serial_twin",
           "TOLERANCE", "SIMILARITY_EPSILON", "SOLVER_SCALE", "ROW_SCALE", "SERIAL_BYTES", "SERIAL_PAIRS",
           "COSINE_PRODUCTS"]

#: The one float slack for comparing a value with a threshold (gate conditions, ties between
#: objectives, capacity from a utilization ceiling, the optimality gap's denominator).
TOLERANCE = 1e-9
#: Slack for similarities and severities against their thresholds (they are computed in float32
#: or read as given; a pair exactly at a threshold must count).
SIMILARITY_EPSILON = 1e-12
#: CP-SAT's objective coefficients are rounded to 1 / SOLVER_SCALE.
SOLVER_SCALE = 1_000_000
#: Homogeneous gate rows (Σ c_i x_i ≥ 0) are scaled so their largest coefficient is ROW_SCALE.
ROW_SCALE = 10**9
#: Below these sizes the serial kernel twins run (a parallel launch costs more than the work):
#: text bytes for the per-text kernels (MinHash signatures, query terms, claim keys), candidate
#: pairs for the all-pairs estimate. Text: 32 MB (~60,000 chunks of 500 bytes), because a parallel
#: region waits for its slowest thread, and on a shared machine one of the two cores is often busy:
#: select() at n = 2,000 took 164 ms with parallel text kernels and 77 ms serial, 299 vs 186 ms with
#: a busy loop on one core; at 20,000, 871 vs 812 and 763 vs 669 ms (2026-12-01, this 2-core machine).
#: Pairs: 24 texts took 4.3 ms to compare in parallel, 0.1 ms serially.
SERIAL_BYTES = 32_000_000
SERIAL_PAIRS = 20_000

_PACKAGE_DIR = str(Path(__file__).resolve().parent)

#: ``CTXSELECT_COSINE_PRODUCTS``: how cosine tiles are multiplied. ``auto`` (the default) and ``int8``: as
#: int8 products screened and checked with AVX-512 VNNI (:mod:`ctxselect.kernels.products`) where Numba
#: compiles for a CPU that has it, else OpenBLAS's float32 GEMM; ``int16``: int16 products there (a
#: narrower screen at half the speed); ``float32``: always the GEMM.
COSINE_PRODUCTS_CHOICES = ("auto", "int8", "int16", "float32")


def _cosine_products() -> str:
    """How cosine tiles are multiplied (``features.tiles.Tiles``' kind): the integer kind asked for (int8
    under ``auto``) when the JIT is on and Numba compiles for this host's CPU (``NUMBA_CPU_NAME`` unset or
    ``host``, ``NUMBA_CPU_FEATURES`` unset: a feature turned off there would not compile), which has
    AVX-512 VNNI and BW; else ``float32``. Another value of the variable: a warning naming the valid
    ones, and ``auto``."""
    choice = os.environ.get("CTXSELECT_COSINE_PRODUCTS", "auto")
    if choice not in COSINE_PRODUCTS_CHOICES:
        warnings.warn(f"ctxselect: CTXSELECT_COSINE_PRODUCTS={choice!r} is not one of "
                      f"{', '.join(COSINE_PRODUCTS_CHOICES)}; using 'auto'", RuntimeWarning, stacklevel=2)
        choice = "auto"
    if (choice == "float32" or numba_config.DISABLE_JIT or numba_config.CPU_NAME not in (None, "host")
            or numba_config.CPU_FEATURES is not None):  # NUMBA_CPU_FEATURES: what Numba compiles for, not the host
        return "float32"
    try:
        from llvmlite import binding

        features = binding.get_host_cpu_features()
    except (RuntimeError, OSError):  # no feature list on this platform: the GEMM
        return "float32"
    if not all(features.get(name, False) for name in ("avx512vnni", "avx512bw", "avx512f")):
        return "float32"
    return "int8" if choice == "auto" else choice


#: How cosine tiles are multiplied (:func:`_cosine_products`), read once at import.
COSINE_PRODUCTS = _cosine_products()


def _writable(path: str) -> bool:
    try:
        os.makedirs(path, exist_ok=True)
        tempfile.TemporaryFile(dir=path).close()
        return True
    except OSError:
        return False


def _cache_dir() -> tuple[str | None, bool]:
    """The first usable directory of the module docstring's list (or None), and whether it is
    used read-only."""
    if "CTXSELECT_CACHE_DIR" in os.environ:
        chosen = os.environ["CTXSELECT_CACHE_DIR"]
        if not chosen:
            return None, False
        if _writable(chosen):
            return chosen, False
        return (chosen, True) if os.path.isdir(chosen) and os.access(chosen, os.R_OK | os.X_OK) else (None, False)
    user = os.path.join(AppDirs("ctxselect", appauthor=False).user_cache_dir, "numba")
    if _writable(user):
        return user, False
    try:  # raises when no temporary directory is usable (a read-only container)
        temporary = tempfile.gettempdir()
    except OSError:
        return None, False
    shared = os.path.join(temporary, f"ctxselect-numba-{os.getuid() if hasattr(os, 'getuid') else 'user'}")
    return (shared, False) if _writable(shared) else (None, False)


#: Where ctxselect's compiled kernels are cached (None: no disk cache in this process), and
#: whether that directory is only read (an existing ``CTXSELECT_CACHE_DIR`` that cannot be written).
CACHE_DIR, CACHE_READ_ONLY = _cache_dir()


class _CtxselectCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Caches the kernels of ctxselect's own source files under :data:`CACHE_DIR`."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = os.path.join(CACHE_DIR, self.get_suitable_cache_subpath(py_file))

    def get_cache_path(self) -> str:
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        if CACHE_DIR is None or not os.path.abspath(py_file).startswith(_PACKAGE_DIR + os.sep):
            return None
        locator = cls(py_func, py_file)
        if CACHE_READ_ONLY or locator._cache_path in _ENSURED:
            return locator  # loads what is there (LoadOnlyCache never saves); or a folder checked already
        try:
            locator.ensure_cache_path()
        except OSError:
            return None
        _ENSURED.add(locator._cache_path)
        return locator


#: Cache folders made and found writable in this process: the kernels of one source file share one,
#: and checking it again for each of ~90 kernels (a stat, a temporary file) took about 5 ms of the
#: imports (the kernel modules: 34 -> 29 ms).
_ENSURED: set = set()


def _jit(**options):
    """``njit(**options)`` whose kernels are cached in :data:`CACHE_DIR` as ``njit(cache=True)`` would, by
    :class:`~ctxselect._kernel_cache.KernelCache` (load-only where the directory is read-only)."""
    decorate = njit(**options)
    if CACHE_DIR is None:
        return decorate
    cache = LoadOnlyCache if CACHE_READ_ONLY else KernelCache

    def cached(func):
        kernel = decorate(func)
        if hasattr(kernel, "py_func"):  # with NUMBA_DISABLE_JIT=1 it is the function
            kernel._cache = cache(kernel.py_func)  # what Dispatcher.enable_caching() does, with our class
        return kernel

    return cached


if CACHE_DIR is not None and _CtxselectCacheLocator not in caching.CacheImpl._locator_classes:
    caching.CacheImpl._locator_classes.insert(0, _CtxselectCacheLocator)
elif CACHE_DIR is None:
    warnings.warn("ctxselect: no writable cache directory (set CTXSELECT_CACHE_DIR); Numba kernels "
                  "will be compiled in every process", RuntimeWarning, stacklevel=2)

serial = _jit(nogil=True)
parallel = _jit(nogil=True, parallel=True)
#: Kernels whose float sums may be reordered (into SIMD lanes): the same compiled kernel gives the same
#: sum for the same input, which may differ from a sequential sum in the last bits.
parallel_sums = _jit(nogil=True, parallel=True, fastmath={"reassoc", "nsz"})
serial_sums = _jit(nogil=True, fastmath={"reassoc", "nsz"})
#: A small helper inlined into its callers in Numba's IR: no call, so no reference counts of its arrays.
inlined = _jit(nogil=True, inline="always")


def serial_twin(kernel, name: str, jit=None):
    """A serial compilation (``jit``, default :data:`serial`) of a ``parallel`` kernel, under its own name.

    Numba's on-disk cache keys a function by its module, qualified name and first line, not by
    ``parallel``: compiling the same Python function twice (``serial(kernel.py_func)``) shared one
    cache entry, so whichever variant compiled first was loaded for both and the "parallel" kernel
    ran on one thread. The twin is a copy of the function with its own ``__qualname__``.
    """
    func = getattr(kernel, "py_func", kernel)  # with NUMBA_DISABLE_JIT=1 the kernel is the function
    twin = types.FunctionType(func.__code__, func.__globals__, name, func.__defaults__, func.__closure__)
    twin.__qualname__ = name
    twin.__module__ = func.__module__
    twin.__doc__ = func.__doc__
    return (serial if jit is None else jit)(twin)

"""Test layout: tests/ mirrors the package (tests/model/ for ctxselect/model/, ...), each folder a
package (``__init__.py``), so test modules import their helpers by package path::

    from tests.conftest import EXAMPLES
    from tests.strategies import candidate_lists          # every hypothesis strategy
    from tests.naive.select import brute_force            # the plain-Python twins

tests/ itself is also put on sys.path, so ``from strategies import ...`` keeps working.

With ``NUMBA_DISABLE_JIT=1`` (the CI step that runs the kernel tests interpreted, so coverage
sees the kernel bodies) Numba's decorators return the plain function, which has no ``py_func``;
ctxselect.kernels.minhash reads ``_signatures.py_func`` at import, so the package would not import
at all (tests/test_config.py::test_the_package_imports_with_the_jit_disabled records it as an
expected failure). Only in that mode, and before ctxselect is imported, the decorators are wrapped
so the returned function carries ``py_func`` (itself), which is what the jitted dispatcher's
``py_func`` is: the same Python body.
"""

import functools
import os
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
EXAMPLES = ROOT / "examples"
DATA = TESTS / "data"
sys.path.insert(0, str(TESTS))

JIT_DISABLED = os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0")


def _give_plain_functions_a_py_func() -> None:
    import numba

    def keep_py_func(decorator):
        @functools.wraps(decorator)
        def wrapped(*args, **kwargs):
            if len(args) == 1 and callable(args[0]) and not kwargs:  # @njit without options
                func = decorator(args[0])
                if not hasattr(func, "py_func"):
                    func.py_func = func
                return func
            inner = decorator(*args, **kwargs)

            def apply(func):
                out = inner(func)
                if not hasattr(out, "py_func"):
                    out.py_func = out
                return out
            return apply
        return wrapped

    numba.njit = keep_py_func(numba.njit)
    numba.jit = keep_py_func(numba.jit)


if JIT_DISABLED and "ctxselect" not in sys.modules:
    _give_plain_functions_a_py_func()

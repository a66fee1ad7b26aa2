"""Test layout: tests/ mirrors the package (tests/model/ for ctxselect/model/, ...), each folder a
package (``__init__.py``), so test modules import their helpers by package path::

    from tests.conftest import EXAMPLES
    from tests.strategies import candidate_lists          # every hypothesis strategy
    from tests.naive.select import brute_force            # the plain-Python twins

tests/ itself is also put on sys.path, so ``from strategies import ...`` keeps working.

"""

import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
EXAMPLES = ROOT / "examples"
DATA = TESTS / "data"
sys.path.insert(0, str(TESTS))

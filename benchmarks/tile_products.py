"""One cosine tile by each route of ``features.tiles.Tiles`` on one thread: OpenBLAS's float32 GEMM,
the int16 and the int8 products (AVX-512 VNNI), 472 rows x 2,048 columns x 384 (a reach's tile at
2,000 x 384), the minimum of 30 products, three rounds alternating. The int8 route's tile is bits (the
screen's comparison in the kernel, since b526670); the float32 and int16 tiles are values. No route's
extraction of the pairs is timed.

    python benchmarks/tile_products.py

Behind docs/benchmarks.md's micro-benchmark figures.
"""

from __future__ import annotations

import time

import numpy as np
from threadpoolctl import threadpool_limits

from ctxselect._config import COSINE_PRODUCTS
from ctxselect.features.tiles import Tiles

ROWS, COLUMNS, DIM = 472, 2_048, 384


def main() -> None:
    rng = np.random.default_rng(0)
    unit = rng.standard_normal((COLUMNS, DIM)).astype(np.float32)
    unit /= np.linalg.norm(unit, axis=1, keepdims=True)
    kinds = ("float32",) if COSINE_PRODUCTS == "float32" else ("float32", "int16", "int8")
    best: dict[str, float] = {}
    with threadpool_limits(1):
        for _ in range(3):
            for kind in kinds:
                products = Tiles(unit, ROWS, COLUMNS, np.float32(0.85), kind=kind, serial=True)
                ready = products.rows(np.arange(ROWS))
                for _ in range(30):
                    start = time.perf_counter()
                    products.product(ready, 0, COLUMNS)
                    best[kind] = min(best.get(kind, np.inf), time.perf_counter() - start)
    print(", ".join(f"{kind} {1e3 * value:.2f} ms" for kind, value in best.items()))


if __name__ == "__main__":
    main()

"""The cosine's integer routes on anisotropic embeddings (a shared direction, as sentence encoders give:
cosines 0.70-0.80 here), where int8's screen (~0.01-0.02 above each cosine) lets through pairs that int16's
would not: 20,000 x 384, a 1,250-row reach (as ``select()``'s optimizer compares) cut at 0.8, int8
against int16, CPU time, the minimum of three alternating runs; and the route each call ended on.

    python benchmarks/anisotropic_cosine.py

Needs a CPU with AVX-512 VNNI (``ctxselect._config.COSINE_PRODUCTS`` not ``float32``). Behind
docs/signals.md's "int8 products" figures.
"""

from __future__ import annotations

import time

import numpy as np

from ctxselect._config import COSINE_PRODUCTS
from ctxselect.features import similarity
from ctxselect.features.tiles import Tiles

N, D, REACH, CUT, RUNS = 20_000, 384, 1_250, 0.8, 3


def embeddings(share: float, seed: int = 11) -> np.ndarray:
    """Rows ``share`` of one direction and the rest noise, one in 50 with a near copy."""
    rng = np.random.default_rng(seed)
    common = rng.normal(size=D)
    emb = share * common / np.linalg.norm(common) + (1 - share) * rng.normal(size=(N, D)) / np.sqrt(D)
    emb[1::50] = emb[::50] + 0.02 * rng.normal(size=(N // 50, D)) / np.sqrt(D)
    return emb


def main() -> None:
    if COSINE_PRODUCTS == "float32":
        raise SystemExit("integer products need the JIT and AVX-512 VNNI")
    made: list[Tiles] = []

    def tiles(*args, **kwargs):  # the call's Tiles, kept to read the route it ended on
        made.append(Tiles(*args, **kwargs))
        return made[-1]

    similarity.Tiles = tiles
    priority = np.random.default_rng(12).random(N)
    for share in (0.62, 0.645):
        emb = embeddings(share)
        unit = emb / np.linalg.norm(emb, axis=1, keepdims=True)
        sample = (unit[:300] @ unit[300:600].T).ravel()
        print(f"share {share}: cosines p5 / p50 / p95 {np.percentile(sample, [5, 50, 95]).round(3).tolist()}")
        cpu: dict[str, list[float]] = {"int16": [], "int8": []}
        for _ in range(RUNS):
            for kind in cpu:
                similarity.COSINE_PRODUCTS = kind
                start = time.process_time()
                i, _, _, _ = similarity.cosine_pairs_until(emb, CUT, priority=priority, most=REACH, chain=0.95)
                cpu[kind].append(time.process_time() - start)
                last = made[-1]
                print(f"  {kind}: {1e3 * cpu[kind][-1]:.0f} ms CPU, {len(i):,} pairs, ended on {last.kind} "
                      f"({last.in_vain:,} of {last.entries:,} int8 entries screened in vain)")
        print("  min: " + ", ".join(f"{kind} {1e3 * min(v):.0f} ms" for kind, v in cpu.items()))


if __name__ == "__main__":
    main()

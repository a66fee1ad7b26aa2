"""The default token counter against real BPEs on the shipped multilingual samples: the error table
documented in ctxselect/model/tokens.py and docs/tokens.md is recomputed here, and a budget of CJK
text holds against the real count within the documented error.

The real counts come from ``bpe-openai``, whose wheel holds OpenAI's cl100k_base and o200k_base
vocabularies (cl100k_base byte-for-byte tiktoken's file: same SHA-256), so nothing is downloaded.
``python tests/model/test_token_accuracy.py`` prints both tables.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

from ctxselect.model import tokens
from ctxselect.model.tokens import WORD, default_token_counter

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "multilingual_samples.jsonl"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "tokens.md"
ENCODINGS = ("cl100k_base", "o200k_base")
CJK = ("Chinese", "Japanese")


def samples() -> list[dict]:
    return [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines() if line.strip()]


def before(text: str) -> int:
    """The counter as it was before per-character counting: ceil(1.3 x words)."""
    return max(1, math.ceil(1.3 * len(WORD.findall(text))))


def _error(estimate: int, real: int) -> int:
    return round(100 * (estimate / real - 1))


def _span(errors: list[int]) -> str:
    low, high = min(errors), max(errors)
    return f"{low:+d}%" if low == high else f"{low:+d}% .. {high:+d}%"


def measured_rows() -> list[tuple[str, int, str, str, str]]:
    """(language, texts, error vs cl100k_base, vs o200k_base, the old counter's vs cl100k_base)."""
    bpe = pytest.importorskip("bpe_openai")
    encodings = {name: bpe.get_encoding(name) for name in ENCODINGS}
    by_language: dict[str, list[str]] = {}
    for row in samples():
        by_language.setdefault(row["language"], []).append(row["text"])
    rows = []
    for language, texts in by_language.items():
        real = {name: [len(enc.encode_ordinary(t)) for t in texts] for name, enc in encodings.items()}
        mine = [default_token_counter(t) for t in texts]
        old = [before(t) for t in texts]
        cells = [_span([_error(e, r) for e, r in zip(mine, real[name])]) for name in ENCODINGS]
        was = "same" if mine == old else _span([_error(e, r) for e, r in zip(old, real["cl100k_base"])])
        rows.append((language, len(texts), *cells, was))
    return rows


HEADER = ("language", "texts", "cl100k_base", "o200k_base", "before (cl100k_base)")


def rst_table(rows) -> str:
    cells = [HEADER] + [tuple(str(c) for c in row) for row in rows]
    widths = [max(len(r[k]) for r in cells) for k in range(len(HEADER))]
    rule = "  ".join("=" * w for w in widths)
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join([rule, line(cells[0]), rule, *(line(r) for r in cells[1:]), rule])


def markdown_table(rows) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def test_the_documented_error_table_is_the_measured_one():
    rows = measured_rows()
    assert rst_table(rows) in tokens.__doc__, "\n" + rst_table(rows)
    assert markdown_table(rows) in DOCS.read_text(encoding="utf-8"), "\n" + markdown_table(rows)


def _documented_undercount(language: str) -> float:
    """The documented worst error against cl100k_base for ``language``, as a fraction (negative: too low)."""
    for line in DOCS.read_text(encoding="utf-8").splitlines():
        if line.startswith(f"| {language} |"):
            return int(line.split("|")[3].split("..")[0].strip().rstrip("%")) / 100
    raise AssertionError(f"{language} is not in docs/tokens.md")


def test_a_cjk_budget_holds_against_the_real_bpe_within_the_documented_error():
    bpe = pytest.importorskip("bpe_openai")
    import ctxselect

    enc = bpe.get_encoding("cl100k_base")
    texts = [(row["language"], row["text"]) for row in samples() if row["language"] in CJK]
    # sentences as chunks, as a splitter would cut them
    chunks = [(lang, s + "。") for lang, text in texts for s in text.split("。") if s.strip()]
    candidates = [{"id": f"c{k}", "text": t, "relevance": 1 - k / len(chunks)} for k, (_, t) in enumerate(chunks)]
    real = {f"c{k}": len(enc.encode_ordinary(t)) for k, (_, t) in enumerate(chunks)}
    assert sum(real.values()) > 300
    worst = min(_documented_undercount(lang) for lang in CJK)
    for budget in (60, 120, 250):
        for method in ("greedy", "optimal"):
            chosen = ctxselect.select(candidates, {"token_budget": budget}, method=method).ids
            assert chosen
            used = sum(real[c] for c in chosen)
            assert used <= budget / (1 + worst), (budget, method, used)
    # the old counter saw a tenth of the tokens: its budgets let ten times as many through
    assert sum(before(t) for _, t in chunks) < 0.1 * sum(real.values())


if __name__ == "__main__":
    measured = measured_rows()
    print(rst_table(measured), markdown_table(measured), sep="\n\n", file=sys.stdout)

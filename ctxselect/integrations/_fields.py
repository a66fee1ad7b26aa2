"""The one mapping of a framework's document to a ctxselect candidate, shared by the components."""

from __future__ import annotations

from typing import Any, Mapping, Optional


def candidate(k: int, n: int, doc_id: Any, text: str, meta: Optional[Mapping[str, Any]], score: Any,
              keys: Mapping[str, str], default_source: Optional[str]) -> dict[str, Any]:
    """Document ``k`` of ``n`` as a candidate: id ``"<k>:<doc_id>"`` (unique even when documents
    share an id), its text, relevance ``score`` or, when it is None, the rank's (1 for the first,
    falling linearly), and the source, timestamp, scope and token count that ``meta`` holds under
    ``keys``. A document whose meta names no source gets ``default_source``, or, when that is None,
    none (ctxselect's ``DEFAULT_SOURCE``, which source rules refuse with an error naming it)."""
    meta = meta or {}
    out: dict[str, Any] = {"id": f"{k}:{doc_id}", "text": text,
                           "relevance": 1.0 - k / max(n, 1) if score is None else score, "rank": k + 1}
    source = meta.get(keys["source"], default_source)
    if source is not None:
        out["source"] = source
    for name in ("timestamp", "scope", "tokens"):
        if meta.get(keys[name]) is not None:
            out[name] = meta[keys[name]]
    return out


def position(candidate_id: str) -> int:
    """The input position a selected candidate id stands for."""
    return int(candidate_id.split(":", 1)[0])

"""Self-consistency under paraphrase (shared seed 003): issue each query again, slightly
reworded, and compare the chosen sets. Wide disagreement means the selection is unstable — a
finding that needs no labels.

A query's paraphrases come from its dump line, ``"paraphrases": [...]``, each either

- a string: the question reworded, selected from the same candidates (measures the selector's
  stability under rewording: only query-aware terms of the objective can move it), or
- an object ``{"query": "...", "candidates": [...]}``: the reworded question with the candidates
  *its* retrieval returned (logged), so the whole retrieve-and-select path is measured; chunk ids
  must name the same chunks across the two retrievals.

or, for queries without them and only when asked (``paraphrases="builtin"``), from three built-in
perturbations of the question's text (:func:`builtin_paraphrases`): case and punctuation folded
("What is the refund window?" → "what is the refund window"), stopwords dropped ("refund window"),
and a request prefix ("Can you tell me: What is the refund window?"); duplicates and copies of
the original are dropped, and a query without text gets none. They are a weak probe: the
selectors read the question mostly through its content terms, which the first two leave unchanged
(docs/evaluation.md gives the measured values); logged paraphrases are the real measurement.

A query's self-consistency is the mean, over its paraphrases, of the Jaccard similarity
(:func:`ctxselect.evaluate.labelled.self_consistency`) of the selection and the paraphrase's
selection by the same method; None when it has no paraphrase.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Mapping, Sequence

from ctxselect.errors import InputError
from ctxselect.model import validation as checks
from ctxselect.model.candidate import Candidate, coerce_candidates
from ctxselect.model.io import Query
from ctxselect.model.tokens import WORD
from ctxselect.text.words import STOPWORDS

__all__ = ["Paraphrases", "Paraphrase", "builtin_paraphrases", "paraphrases_of", "FIELD", "REQUEST_PREFIX"]

FIELD = "paraphrases"
REQUEST_PREFIX = "Can you tell me: "


class Paraphrases(str, Enum):
    """Where ``bench`` takes paraphrases from."""

    DUMP = "dump"        # the dump's ``paraphrases`` only (queries without them get none)
    BUILTIN = "builtin"  # the dump's, else the built-in perturbations
    NONE = "none"        # no self-consistency


@dataclass(frozen=True)
class Paraphrase:
    """One rewording of a query: its text and, when its own retrieval was logged, its candidates."""

    query: str
    candidates: list[Candidate] | None = None


def builtin_paraphrases(text: str) -> list[str]:
    """The built-in perturbations of a question (see the module docstring), without duplicates
    or copies of ``text``; empty for a question without words."""
    words = WORD.findall(text)
    if not words:
        return []
    folded = " ".join(words).lower()
    keywords = " ".join(w for w in folded.split() if w not in STOPWORDS)
    out: list[str] = []
    for candidate in (folded, keywords, REQUEST_PREFIX + text.strip()):
        if candidate and candidate != text and candidate not in out:
            out.append(candidate)
    return out


def _from_dump(query: Query) -> list[Paraphrase] | None:
    raw = query.extra.get(FIELD)
    if raw is None:
        return None
    if not isinstance(raw, list):
        raise InputError(query_id=query.query_id, field=FIELD, expected="a list of strings or "
                         "{query, candidates} objects", found=raw, has_found=True)
    out = []
    for k, item in enumerate(raw):
        where = f"{FIELD}[{k}]"
        if isinstance(item, str):  # its text checked as select() checks a query's, named as the paraphrase
            out.append(Paraphrase(_text(item, where, query)))
            continue
        if not isinstance(item, Mapping) or not isinstance(item.get("query"), str) or set(item) - {"query", "candidates"}:
            raise InputError(query_id=query.query_id, field=where, expected="a string or an object with "
                             "a string query and optional candidates", found=item, has_found=True)
        cands = item.get("candidates")
        if cands is not None:
            if not isinstance(cands, list) or not cands:
                raise InputError(query_id=query.query_id, field=f"{where}.candidates",
                                 expected="a non-empty list of candidates", found=cands, has_found=True)
            try:
                cands = coerce_candidates(cands)
            except InputError as err:  # names the candidate and its field; here the paraphrase too
                raise err.located(query_id=f"{query.query_id} ({where})") from None
        out.append(Paraphrase(_text(item["query"], f"{where}.query", query), cands))
    return out


def _text(value: str, where: str, query: Query) -> str:
    try:
        return checks.text(value, where)
    except InputError as err:
        raise err.located(query_id=query.query_id) from None


def paraphrases_of(query: Query, mode: str | Paraphrases = Paraphrases.DUMP) -> list[Paraphrase]:
    """The paraphrases of ``query`` under ``mode`` (see :class:`Paraphrases`).

    Raises
    ------
    InputError
        Naming the query and the paraphrase, when the dump's ``paraphrases`` cannot be read.
    """
    mode = Paraphrases(mode)
    if mode is Paraphrases.NONE:
        return []
    given = _from_dump(query)
    if given is not None:
        return given
    if mode is Paraphrases.BUILTIN:
        return [Paraphrase(text) for text in builtin_paraphrases(query.query)]
    return []


def consistency_of(query: Query, ids: Sequence[str], paraphrases: Sequence[Paraphrase], method: str,
                   options: Mapping[str, Any]) -> float | None:
    """The mean Jaccard similarity of ``ids`` and each paraphrase's selection by ``method``."""
    if not paraphrases:
        return None
    from ctxselect.evaluate.labelled import self_consistency
    from ctxselect.selection.api import select

    values = []
    for k, p in enumerate(paraphrases):
        cands = query.candidates if p.candidates is None else p.candidates
        try:  # (a paraphrase's own candidates meet the requirements' source rule only here)
            chosen = select(cands, query.requirements, p.query, method, **options).ids
        except InputError as err:  # named as _from_dump names it: the query and the paraphrase
            raise err.located(query_id=f"{query.query_id} ({FIELD}[{k}])") from None
        values.append(self_consistency(ids, chosen))
    return sum(values) / len(values)

"""Chunks' titles as the claim join reads them: ``(title, section)`` from each candidate's ``extra``,
read lazily (:func:`claim_titles`; re-exported by :mod:`ctxselect.text.claims`)."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["claim_titles"]


class _Titles(Sequence):
    """Candidates' (title, section), read from ``extra`` only when asked for."""

    def __init__(self, candidates):
        self._candidates = candidates

    def __len__(self) -> int:
        return len(self._candidates)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        return (self._candidates[k].extra.get("title"), self._candidates[k].extra.get("section"))


def claim_titles(candidates) -> Sequence:
    """The ``titles`` argument of :func:`ctxselect.text.claims.find_claim_conflicts` for candidates:
    each one's ``(title, section)`` from its ``extra`` (``None`` where absent), read lazily — only for
    the chunks whose claims join another's.

    Parameters
    ----------
    candidates : sequence of Candidate

    Returns
    -------
    Sequence of (str or None, str or None)
    """
    return _Titles(candidates)

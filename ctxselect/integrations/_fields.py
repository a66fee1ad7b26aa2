"""The one mapping of a framework's document to a ctxselect candidate, and the one call of
:func:`ctxselect.select` over a framework's documents, shared by the components."""

from __future__ import annotations

import inspect
import threading
from typing import Any, Callable, Mapping, Optional, Sequence

from ctxselect.errors import InputError
from ctxselect.selection.api import Selection, select

#: What each component passes to :func:`ctxselect.select` itself; ``select_options`` may hold any other keyword.
_OWN = ("candidates", "requirements", "query", "method")
#: The keywords ``select_options`` may hold, read from :func:`ctxselect.select`'s signature.
SELECT_OPTIONS = tuple(name for name in inspect.signature(select).parameters if name not in _OWN)


def check_select_options(options: Any) -> dict[str, Any]:
    """``options`` checked as keyword arguments of :func:`ctxselect.select` that a component passes on:
    a key it does not take, or one the component passes itself, is an :class:`InputError` listing the
    valid ones."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise InputError(field="select_options", expected="a dict of select() options", found=options)
    for key in options:
        if key not in SELECT_OPTIONS:
            name = key if isinstance(key, str) else type(key).__name__
            raise InputError(field=f"select_options.{name}", message="not a select() option the component passes on",
                             expected="one of " + ", ".join(SELECT_OPTIONS))
    return dict(options)


class LastSelection:
    """The :class:`ctxselect.Selection` of this thread's last call of one component: a component shared
    between threads never shows one thread another's. Copied, deep-copied or pickled, it starts empty."""

    def __init__(self) -> None:
        self._local = threading.local()

    def get(self) -> Optional[Selection]:
        """This thread's last selection, or None."""
        return getattr(self._local, "value", None)

    def set(self, selection: Optional[Selection]) -> None:
        """Record ``selection`` as this thread's last."""
        self._local.value = selection

    def __copy__(self) -> "LastSelection":
        return LastSelection()

    def __deepcopy__(self, memo: dict) -> "LastSelection":
        return LastSelection()

    def __reduce__(self) -> tuple:
        return (LastSelection, ())


def refuse(noun: str, k: int, field: str, expected: str, found: Any) -> InputError:
    """The error for item ``k`` (a ``noun``) whose ``field`` is not ``expected``: it names the type found,
    never the value (which may be a document's text)."""
    return InputError(f"{noun} #{k}: expected {expected}, found {type(found).__name__}", field=field)


def items(values: Any, noun: str, field: str, kind: type, expected: str) -> list:
    """``values`` (any iterable) as a list, each a ``kind``; else an :class:`InputError` naming the item."""
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__"):
        plural = expected.split(" ", 1)[-1] + "s"  # "a haystack Document": "haystack Documents"
        raise InputError(field=field, message=f"expected an iterable of {plural}, found {type(values).__name__}")
    out = list(values)
    for k, value in enumerate(out):
        if not isinstance(value, kind):
            raise refuse(noun, k, field, expected, value)
    return out


def candidate(k: int, n: int, doc_id: Any, text: str, meta: Optional[Mapping[str, Any]], score: Any,
              keys: Mapping[str, str], default_source: Optional[str]) -> dict[str, Any]:
    """Document ``k`` of ``n`` as a candidate: id ``"<k>:<doc_id>"`` (unique even when documents
    share an id), its text, relevance ``score`` or, when it is None, the rank's (1 for the first,
    falling linearly), and the source, timestamp, scope and token count that ``meta`` holds under
    ``keys``. A document whose meta names no source gets ``default_source``, or, when that is None,
    none (ctxselect's ``DEFAULT_SOURCE``, which source rules refuse with an error naming it)."""
    if meta is None:
        meta = {}
    elif not isinstance(meta, Mapping):
        raise refuse("document", k, "metadata", "a dict", meta)
    try:
        cid = f"{k}:{doc_id}"
    except Exception:  # an id whose __format__ (or __str__) raises or returns no text
        raise refuse("document", k, "id", "an id that formats as text", doc_id) from None
    out: dict[str, Any] = {"id": cid, "text": text,
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


def choose(items: Sequence[Any], to_candidate: Callable[[int, int, Any], dict[str, Any]], requirements: Mapping[str, Any],
           token_budget: int, query: str, method: str, options: Mapping[str, Any]) -> tuple[Selection, list]:
    """:func:`ctxselect.select` over a framework's ``items`` (``to_candidate(k, n, item)`` maps
    each, as :func:`candidate` does): the selection, and the chosen items in assembly order."""
    candidates = [to_candidate(k, len(items), item) for k, item in enumerate(items)]
    selection = select(candidates, {**requirements, "token_budget": token_budget}, query, method,
                       **check_select_options(options))
    return selection, [items[position(cid)] for cid in selection.ids]

"""The candidate chunk: what a retriever returned for one query."""

from __future__ import annotations

import math
from dataclasses import MISSING, dataclass, field
from dataclasses import fields as dc_fields
from operator import itemgetter
from typing import Any, Iterable, Mapping

import numpy as np

from ctxselect.errors import InputError
from ctxselect.model import embeddings as vectors
from ctxselect.model import validation as checks
from ctxselect.model.counting import count_tokens
from ctxselect.model.embeddings import MAX_EMBEDDING_ABS  # noqa: F401  (its home before embeddings.py)
from ctxselect.model.scores import AS_IS_EXPECTED
from ctxselect.model.times import EARLIEST_SECONDS, LATEST_SECONDS, to_epoch_seconds, to_iso
from ctxselect.model.tokens import TokenCounter, batch_counted, get_token_counter, resolve_token_counter

__all__ = ["Candidate", "coerce_candidates", "coerce_with_embeddings", "coerce_columns", "DEFAULT_SOURCE"]

#: The source of a candidate that names none. No source rule may apply to it (``pack`` refuses a
#: candidate without a source when the requirements have one), and it never matches a question's
#: words (a source name matches only with four or more letters and digits).
DEFAULT_SOURCE = "-"

#: Claim types whose every value is valid (a float must also be finite).
_PLAIN_CLAIMS = frozenset({str, int, bool})
#: Candidate keys that are not claims: a conflict field cannot be named after one of them.
RESERVED_KEYS = ("id", "source", "relevance", "tokens", "text", "rank", "timestamp", "valid_from",
                 "valid_to", "doc_id", "version", "scope", "aspects", "fields", "embedding")


def _field_value(value: Any, name: str) -> Any:
    value = checks.plain_scalar(value)  # NumPy's bools and numbers as Python's: np.int64(3) is the claim 3
    if value is not None and not isinstance(value, (str, int, float, bool)):
        raise InputError(field=name, expected="a string, number, boolean or null", found=value)
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(field=name, expected="a finite number", found=value)
    return value


@dataclass(frozen=True)
class Candidate:
    """One retrieved chunk.

    Parameters
    ----------
    id : str
        Identity of the chunk, unique within a query.
    source : str or None
        Where the chunk came from (``policy``, ``procedure``, a domain, a collection). ``None``
        means none is known: it becomes :data:`DEFAULT_SOURCE`, which source rules refuse
        (``required_sources``, ``max_per_source``, ``source_decay``, ``source_precedence``).
    relevance : float
        Retriever or reranker score normalised to [0, 1].
    tokens : int
        Token count (> 0). :meth:`from_dict` counts it from ``text`` when absent.
    text : str
        The chunk's text.
    rank : int, optional
        Retrieval rank, when known.
    timestamp, valid_from, valid_to : float, optional
        UTC epoch seconds (any accepted time form is converted): when the content was written or
        last verified, and an explicit validity window.
    doc_id, version : str, optional
        The same ``doc_id`` with different versions is a version conflict.
    scope : str, optional
        Policy label; the chunk is admissible iff it is in the query's allowed scopes.
    aspects : tuple of str
        The required answer aspects this chunk covers.
    fields : dict
        Structured claims (scalars; NumPy's kept as Python's: np.int64(3) is 3) for contradiction detection.
    embedding : array_like of float, optional
        Dense vector for redundancy: a list, tuple or 1-d NumPy array of real numbers (any float or
        integer dtype; booleans and text are refused), finite and at most ``1e100`` in size. Kept
        as a read-only float64 array.
    extra : dict
        Every other key of the input (``title``, ``author`` ...), kept for round trips. Article
        000's shape, with conflict fields as top-level keys, is read from here too.
    """

    id: str
    source: str
    relevance: float
    tokens: int
    text: str = ""
    rank: int | None = None
    timestamp: float | None = None
    valid_from: float | None = None
    valid_to: float | None = None
    doc_id: str | None = None
    version: str | None = None
    scope: str | None = None
    aspects: tuple[str, ...] = ()
    fields: Mapping[str, Any] = field(default_factory=dict)
    embedding: np.ndarray | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        for f in dc_fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if isinstance(mine, np.ndarray) or isinstance(theirs, np.ndarray):
                if mine is None or theirs is None or not np.array_equal(mine, theirs):
                    return False
            elif mine != theirs:
                return False
        return True

    def __post_init__(self) -> None:
        try:
            self._normalise()
        except InputError as err:
            raise err.located(candidate_id=self.id if isinstance(self.id, str) else None) from None

    def _normalise(self) -> None:
        """Check and normalise every field, in the order of the class (each validator returns a
        value already in normal form, what a JSON reader gives, after a few cheap checks)."""
        d = self.__dict__  # a frozen dataclass keeps its fields here (object.__setattr__ sets them here too)
        d["id"] = checks.label(d["id"], "id")
        d["source"] = DEFAULT_SOURCE if d["source"] is None else checks.label(d["source"], "source")
        value = d["relevance"]
        if not (value.__class__ is float and 0.0 <= value <= 1.0):  # the common case, as number() decides it
            try:
                d["relevance"] = checks.number(value, "relevance", low=0.0, high=1.0)
            except InputError as err:  # name the option that reads raw scores
                err.expected = AS_IS_EXPECTED
                Exception.__init__(err, err._render())
                raise
        d["tokens"] = checks.integer(d["tokens"], "tokens", low=1)
        d["text"] = checks.text(d["text"], "text")
        if d["rank"] is not None:
            d["rank"] = checks.integer(d["rank"], "rank", low=0)
        for name in ("timestamp", "valid_from", "valid_to"):
            value = d[name]  # epoch seconds as a float: kept, as to_epoch_seconds would keep it
            if value is not None and not (value.__class__ is float and EARLIEST_SECONDS <= value < LATEST_SECONDS):
                d[name] = to_epoch_seconds(value, name)
        if self.valid_from is not None and self.valid_to is not None and self.valid_from > self.valid_to:
            raise InputError(field="valid_to", expected="a time not before valid_from",
                             found=self.valid_to)
        for name in ("doc_id", "version", "scope"):
            if d[name] is not None:
                d[name] = checks.label(d[name], name)
        d["aspects"] = checks.string_list(d["aspects"], "aspects")
        claims = checks.mapping(d["fields"], "fields", "an object of scalar claims")
        if claims.__class__ is dict and all(claim is None or claim.__class__ in _PLAIN_CLAIMS or (
                claim.__class__ is float and claim - claim == 0.0) for claim in claims.values()):  # x - x: 0.0 if finite
            d["fields"] = dict(claims)
        else:
            d["fields"] = {k: _field_value(v, f"fields.{k}") for k, v in claims.items()}
        if self.embedding is not None:
            d["embedding"] = vectors.vector(self.embedding)
        d["extra"] = dict(checks.mapping(d["extra"], "extra", "an object"))

    # -- construction from plain data --------------------------------------------------------
    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        *,
        token_counter: TokenCounter | None = None,
        default_relevance: float | None = None,
    ) -> "Candidate":
        """Build a candidate from a dict with the dump's field names.

        Parameters
        ----------
        data : mapping
            ``id`` and ``relevance`` are required (``relevance`` may be left out when
            ``default_relevance`` is given); ``source`` defaults to :data:`DEFAULT_SOURCE`;
            ``tokens`` is counted from ``text`` when absent; unknown keys go to :attr:`extra`.
        token_counter : callable, str or tokenizer, optional
            Counts tokens of ``text`` (any form :func:`ctxselect.model.tokens.resolve_token_counter`
            accepts); defaults to :func:`ctxselect.get_token_counter`.
        default_relevance : float, optional
            Relevance for candidates that carry none (article 000's inspector uses 1.0).

        Raises
        ------
        InputError
            Naming the candidate id and the field.
        """
        return cls._from_data(data, resolve_token_counter(token_counter), default_relevance, with_embedding=True)

    @classmethod
    def _from_data(cls, data, token_counter, default_relevance, *, with_embedding: bool) -> "Candidate":
        """:meth:`from_dict`; without ``with_embedding`` a dict's ``embedding`` is left for the
        caller to check with every other candidate's at once (:func:`coerce_with_embeddings`)."""
        if data.__class__ is not dict:  # (a dict is a Mapping: the isinstance checks cost microseconds)
            if isinstance(data, Candidate):
                return data
            if not isinstance(data, Mapping):
                raise InputError(expected="a candidate object", found=data, has_found=True)
        cid = data.get("id")
        try:
            return cls._from_mapping(data, token_counter, default_relevance, with_embedding)
        except InputError as err:
            located = cid if isinstance(cid, str) else str(cid) if isinstance(cid, int) and abs(cid) < 2**63 else None
            raise err.located(candidate_id=located) from None

    @classmethod
    def _from_mapping(cls, data, token_counter, default_relevance, with_embedding=True) -> "Candidate":
        if data.get("id") is None:
            raise InputError(field="id", expected="a non-empty string", message="missing required field")
        values = {k: v for k, v in data.items() if k in _KNOWN and v is not None}
        extra = {k: v for k, v in data.items() if k not in _KNOWN}
        if not with_embedding:
            values.pop("embedding", None)
        values.setdefault("source", None)  # DEFAULT_SOURCE
        if "relevance" not in values:
            if default_relevance is None:
                raise InputError(field="relevance", expected="a number in [0, 1]",
                                 message="missing required field")
            values["relevance"] = default_relevance
        if "tokens" not in values:
            body = values.get("text")
            if not isinstance(body, str) or not body.strip():
                raise InputError(field="tokens", message="missing required field",
                                 expected="a positive integer, or a non-empty text to count it from")
            if len(body) > checks.MAX_TEXT_CHARS:  # refused before it is counted (50 MB: 2 s and 0.8 GB)
                checks.text(body, "text")
            values["tokens"] = count_tokens(token_counter or get_token_counter(), body)  # its errors: InputErrors
        if cls is not Candidate:
            return cls(**values, extra=extra)
        cand = object.__new__(cls)  # as Candidate(**values, extra=extra), without __init__'s keyword handling
        fields = cand.__dict__
        fields.update(_UNSET)
        fields.update(values)
        fields["extra"] = extra
        cand.__post_init__()
        return cand

    def to_dict(self) -> dict[str, Any]:
        """The candidate as a dump record (times as ISO-8601 UTC, unset fields left out)."""
        out: dict[str, Any] = {"id": self.id, "source": self.source, "relevance": self.relevance,
                               "tokens": self.tokens}
        if self.source == DEFAULT_SOURCE:
            del out["source"]
        if self.text:
            out["text"] = self.text
        for name in ("rank", "doc_id", "version", "scope"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        for name in ("timestamp", "valid_from", "valid_to"):
            value = getattr(self, name)
            if value is not None:
                out[name] = to_iso(value)
        if self.aspects:
            out["aspects"] = list(self.aspects)
        if self.fields:
            out["fields"] = dict(self.fields)
        if self.embedding is not None:
            out["embedding"] = self.embedding.tolist()
        for key, value in self.extra.items():
            out.setdefault(key, value)
        return out

    def claim(self, name: str) -> Any:
        """The value of claim ``name``: from :attr:`fields`, else a top-level key (article 000's
        shape); ``None`` when absent.

        Raises
        ------
        InputError
            When the top-level key holds a list or an object: a claim is a scalar, and a nested
            value would otherwise be ignored without a word.
        """
        if name in self.fields:
            return self.fields[name]
        value = self.extra.get(name)
        if value is None:
            return None
        try:
            return _field_value(value, name)
        except InputError as err:
            raise err.located(candidate_id=self.id) from None


#: The keys of a candidate dict read into :class:`Candidate`'s fields (every other key is ``extra``).
_KNOWN = frozenset(f.name for f in dc_fields(Candidate)) - {"extra"}
#: Every field in the class's order, with its default (the required ones None, always given; the
#: ``fields`` default is replaced by a new dict in ``_normalise``, never kept).
_UNSET = {f.name: None if f.default is MISSING and f.default_factory is MISSING
          else (f.default if f.default is not MISSING else f.default_factory()) for f in dc_fields(Candidate)}


def coerce_candidates(candidates: Iterable[Candidate | Mapping[str, Any]], *, token_counter: TokenCounter | None = None,
                      default_relevance: float | None = None) -> list[Candidate]:
    """Turn dicts or candidates into validated candidates; ids must be unique (as :func:`coerce_columns`)."""
    return coerce_columns(candidates, token_counter=token_counter, default_relevance=default_relevance)[0]


def coerce_with_embeddings(candidates: Iterable[Candidate | Mapping[str, Any]], *, embeddings: Any = None,
                           token_counter: TokenCounter | None = None, default_relevance: float | None = None,
                           ) -> tuple[list[Candidate], np.ndarray | None]:
    """Validated candidates and their embedding matrix (:func:`coerce_columns` without columns)."""
    return coerce_columns(candidates, embeddings=embeddings, token_counter=token_counter,
                          default_relevance=default_relevance)[:2]


def coerce_columns(candidates: Iterable[Candidate | Mapping[str, Any]], columns: tuple[str, ...] = (), *,
                   embeddings: Any = None, token_counter: TokenCounter | None = None,
                   default_relevance: float | None = None, keep_rows: bool = False,
                   ) -> tuple[list[Candidate], np.ndarray | tuple[np.ndarray, ...] | None, list[tuple]]:
    """Validated candidates, their embedding matrix and the fields ``columns`` of every candidate.

    Parameters
    ----------
    candidates : iterable of Candidate or dict
    columns : tuple of str
        Candidate fields to return as columns (``packing._COLUMNS``).
    embeddings : array_like, optional
        One (n, d) array, row ``i`` for candidate ``i`` (:func:`ctxselect.model.embeddings.matrix`),
        the only copy: no candidate may carry an embedding, and none keeps one.
    token_counter, default_relevance
        As for :meth:`Candidate.from_dict`.
    keep_rows : bool
        Validated Candidates' own rows as they are (:func:`~ctxselect.model.embeddings.held_rows`).

    Returns
    -------
    candidates : list of Candidate
    matrix : read-only float64 array (n, d), the rows (``keep_rows``), or None
        Without ``embeddings``, the candidates' own embeddings checked together
        (:func:`ctxselect.model.embeddings.stack`: all or none, one dimension, finite); a
        candidate built here from a dict holds its row of the matrix, not a copy.
    columns : list of tuple
        Per name of ``columns``, that field of each candidate, read in one pass with their ids.

    Raises
    ------
    InputError
        Naming the first offending candidate and field.
    """
    if isinstance(candidates, (str, bytes, Mapping)) or not hasattr(candidates, "__iter__"):
        raise InputError(field="candidates", expected="a list of candidates", found=candidates, has_found=True)
    candidates = list(candidates)
    counter = resolve_token_counter(token_counter) or get_token_counter()
    counter = batch_counted(counter, (item["text"] for item in candidates if isinstance(item, Mapping)
                                      and item.get("tokens") is None and isinstance(item.get("text"), str)
                                      and len(item["text"]) <= checks.MAX_TEXT_CHARS and item["text"].strip()))
    validated = set(map(type, candidates)) <= {Candidate}  # all validated already (the common case): no per-item step
    out, raw, built = (candidates, None, None) if validated else _built(candidates, counter, default_relevance)
    read = itemgetter(*columns, "id", "embedding")  # one pass over the candidates' fields (see Returns)
    table = list(zip(*map(read, map(vars, out)))) if out else [()] * (len(columns) + 2)
    ids, raw, table = table[-2], table[-1] if validated else raw, table[:-2]
    if validated and len(set(ids)) < len(ids):
        seen: set[str] = set()
        for cid in ids:
            if cid in seen:
                raise _duplicate(cid)
            seen.add(cid)
    if embeddings is not None:
        given = vectors.first_given(raw)
        if given is not None:
            raise InputError(candidate_id=ids[given], field="embedding",
                             message="embeddings given both on the candidates and as `embeddings`",
                             expected="one or the other")
        return out, vectors.matrix(embeddings, ids), table
    if keep_rows and validated and (rows := vectors.held_rows(raw)) is not None:  # each checked when built
        return out, rows, table
    matrix = vectors.stack(raw, ids)
    if matrix is not None and built is not None:
        for i, cand in enumerate(out):
            if built[i]:
                object.__setattr__(cand, "embedding", matrix[i])
    return out, matrix, table


def _duplicate(cid: str) -> InputError:
    return InputError(candidate_id=cid, field="id", message="duplicate candidate id",
                      expected="ids unique within a query")


def _built(candidates: list[Any], counter: TokenCounter, default_relevance: float | None,
           ) -> tuple[list[Candidate], list[Any], list[bool]]:
    """Each item as a validated candidate (a dict is built, a candidate kept), with its embedding
    as given (dicts: not yet checked) or as held, and whether it was built here; ids unique."""
    out: list[Candidate] = []
    raw: list[Any] = []
    built: list[bool] = []
    seen: set[str] = set()
    for index, item in enumerate(candidates):
        try:
            cand = Candidate._from_data(item, counter, default_relevance, with_embedding=False)
        except InputError as err:
            raise err.located(candidate_index=index) from None
        if cand.id in seen:
            raise _duplicate(cand.id)
        seen.add(cand.id)
        out.append(cand)
        ours = cand is not item  # built here from a dict, its embedding not yet checked
        built.append(ours)
        raw.append(item.get("embedding") if ours else cand.embedding)
    return out, raw, built

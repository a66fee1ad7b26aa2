"""Plain-Python twins of packing: a candidate dict checked field by field through the validators,
one interner call per value, one list per column (the code before the fast paths of
``Candidate._normalise``, ``coerce_with_embeddings`` and ``pack``). Tests compare the library's
results and error messages with these."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import fields as dc_fields

import numpy as np

from ctxselect.errors import InputError
from ctxselect.model import embeddings as vectors
from ctxselect.model import validation as checks
from ctxselect.model.candidate import DEFAULT_SOURCE, Candidate
from ctxselect.model.requirements import Requirements
from ctxselect.model.scores import AS_IS_EXPECTED
from ctxselect.model.times import SECONDS_PER_DAY, to_epoch_seconds
from ctxselect.model.tokens import batch_counted, get_token_counter, resolve_token_counter

NO_CODE = -1
UNLIMITED = np.iinfo(np.int64).max // 4
_SCALARS = (str, int, float, bool)


# -- the validators, every check in turn (validation.py before its fast first lines) ---------------

def _fail(field, expected, value):
    return InputError(field=field, expected=expected, found=value, has_found=True)


def _as_int(value):
    return int(value) if isinstance(value, numbers.Integral) and not isinstance(value, (int, bool)) else value


def naive_text(value, field, *, allow_empty=True, limit=checks.MAX_TEXT_CHARS):
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise _fail(field, "a string" if allow_empty else "a non-empty string", value)
    if len(value) > limit:
        raise _fail(field, f"at most {limit:,} characters", f"{len(value):,} characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as err:
        raise InputError(field=field, expected="valid Unicode text",
                         found=f"a lone surrogate at character {err.start}") from None
    return value


def naive_label(value, field):
    value = _as_int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        if abs(value) > checks.MAX_COUNT:
            raise _fail(field, f"a string, or an integer of at most {checks.MAX_COUNT:,} in size", value)
        return str(value)
    return naive_text(value, field, allow_empty=False, limit=checks.MAX_LABEL_CHARS)


def naive_integer(value, field, *, low=None, high=checks.MAX_COUNT):
    value = _as_int(value)
    if (checks.is_number(value) and not isinstance(value, int) and math.isfinite(float(value))
            and float(value).is_integer()):
        value = int(value)
    if (not isinstance(value, int) or isinstance(value, bool)
            or (low is not None and value < low) or value > high):
        expected = "an integer" if low is None else ("a positive integer" if low == 1 else f"an integer >= {low}")
        raise _fail(field, f"{expected} up to {high:,}", value)
    return value


def naive_string_list(value, field):
    if isinstance(value, str) or not isinstance(value, (list, tuple, set, frozenset)):
        raise _fail(field, "a list of strings", value)
    return tuple(naive_label(item, f"{field}[{i}]") for i, item in enumerate(value))


def naive_mapping(value, field, expected):
    if not isinstance(value, Mapping):
        raise _fail(field, expected, value)
    for key in value:
        if not isinstance(key, str) or not key:
            raise _fail(field, expected + " with non-empty string keys", key)
    return value


def _field_value(value, name):
    if isinstance(value, (np.bool_, np.integer, np.floating)):  # NumPy's scalars as Python's
        value = value.item() if not isinstance(value, np.floating) else float(value)
    if value is not None and not isinstance(value, _SCALARS):
        raise InputError(field=name, expected="a string, number, boolean or null", found=value)
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(field=name, expected="a finite number", found=value)
    return value


def _normalise(v: dict) -> dict:
    """Every field through its validator, in the class's order (``v``: all fields, set in place
    as each is checked)."""
    v["id"] = naive_label(v["id"], "id")
    v["source"] = DEFAULT_SOURCE if v["source"] is None else naive_label(v["source"], "source")
    try:
        v["relevance"] = checks.number(v["relevance"], "relevance", low=0.0, high=1.0)
    except InputError as err:
        err.expected = AS_IS_EXPECTED
        Exception.__init__(err, err._render())
        raise
    v["tokens"] = naive_integer(v["tokens"], "tokens", low=1)
    v["text"] = naive_text(v["text"], "text")
    if v["rank"] is not None:
        v["rank"] = naive_integer(v["rank"], "rank", low=0)
    for name in ("timestamp", "valid_from", "valid_to"):
        if v[name] is not None:
            v[name] = to_epoch_seconds(v[name], name)
    if v["valid_from"] is not None and v["valid_to"] is not None and v["valid_from"] > v["valid_to"]:
        raise InputError(field="valid_to", expected="a time not before valid_from", found=v["valid_to"])
    for name in ("doc_id", "version", "scope"):
        if v[name] is not None:
            v[name] = naive_label(v[name], name)
    v["aspects"] = naive_string_list(v["aspects"], "aspects")
    claims = naive_mapping(v["fields"], "fields", "an object of scalar claims")
    v["fields"] = {k: _field_value(x, f"fields.{k}") for k, x in claims.items()}
    if v["embedding"] is not None:
        v["embedding"] = vectors.vector(v["embedding"])
    v["extra"] = dict(naive_mapping(v["extra"], "extra", "an object"))
    return v


_DEFAULTS = {"text": "", "rank": None, "timestamp": None, "valid_from": None, "valid_to": None,
             "doc_id": None, "version": None, "scope": None, "aspects": (), "fields": {},
             "embedding": None, "extra": {}}


def naive_candidate(given: dict) -> Candidate:
    """A candidate of the fields ``given`` (as ``Candidate(**given)``), checked by the naive path."""
    values = {**_DEFAULTS, **given}
    try:
        _normalise(values)
    except InputError as err:
        cid = values["id"]
        raise err.located(candidate_id=cid if isinstance(cid, str) else None) from None
    cand = object.__new__(Candidate)
    cand.__dict__.update({f.name: values[f.name] for f in dc_fields(Candidate)})
    return cand


def naive_from_data(data, token_counter, default_relevance) -> Candidate:
    """``Candidate._from_data`` without the embedding (left for the matrix), naively."""
    if isinstance(data, Candidate):
        return data
    if not isinstance(data, Mapping):
        raise InputError(expected="a candidate object", found=data, has_found=True)
    cid = data.get("id")
    try:
        if data.get("id") is None:
            raise InputError(field="id", expected="a non-empty string", message="missing required field")
        known = {f.name for f in dc_fields(Candidate)} - {"extra"}
        values = {k: v for k, v in data.items() if k in known and v is not None}
        extra = {k: v for k, v in data.items() if k not in known}
        values.pop("embedding", None)
        values.setdefault("source", None)
        if "relevance" not in values:
            if default_relevance is None:
                raise InputError(field="relevance", expected="a number in [0, 1]", message="missing required field")
            values["relevance"] = default_relevance
        if "tokens" not in values:
            body = values.get("text")
            if not isinstance(body, str) or not body.strip():
                raise InputError(field="tokens", message="missing required field",
                                 expected="a positive integer, or a non-empty text to count it from")
            values["tokens"] = (token_counter or get_token_counter())(body)
        return naive_candidate({**values, "extra": extra})
    except InputError as err:
        located = cid if isinstance(cid, str) else (str(cid) if isinstance(cid, int) else None)
        raise err.located(candidate_id=located) from None


def naive_coerce(candidates, embeddings=None, token_counter=None, default_relevance=None):
    """``coerce_with_embeddings``, one item at a time."""
    if isinstance(candidates, (str, bytes, Mapping)) or not hasattr(candidates, "__iter__"):
        raise InputError(field="candidates", expected="a list of candidates", found=candidates, has_found=True)
    candidates = list(candidates)
    counter = resolve_token_counter(token_counter) or get_token_counter()
    counter = batch_counted(counter, (item["text"] for item in candidates if isinstance(item, Mapping)
                                      and item.get("tokens") is None and isinstance(item.get("text"), str)
                                      and item["text"].strip()))
    out, raw, built, seen = [], [], [], set()
    for index, item in enumerate(candidates):
        try:
            cand = naive_from_data(item, counter, default_relevance)
        except InputError as err:
            raise err.located(candidate_index=index) from None
        if cand.id in seen:
            raise InputError(candidate_id=cand.id, field="id", message="duplicate candidate id",
                             expected="ids unique within a query")
        seen.add(cand.id)
        out.append(cand)
        ours = cand is not item
        built.append(ours)
        raw.append(item.get("embedding") if ours else cand.embedding)
    ids = [c.id for c in out]
    if embeddings is not None:
        given = next((i for i, value in enumerate(raw) if value is not None), None)
        if given is not None:
            raise InputError(candidate_id=ids[given], field="embedding",
                             message="embeddings given both on the candidates and as `embeddings`",
                             expected="one or the other")
        return out, vectors.matrix(embeddings, ids)
    matrix = vectors.stack(raw, ids)
    if matrix is not None:
        for i, cand in enumerate(out):
            if built[i]:
                object.__setattr__(cand, "embedding", matrix[i])
    return out, matrix


def _kind(value):
    return 0 if isinstance(value, str) else (1 if isinstance(value, bool) else 2)


class _Interner:
    def __init__(self, initial=()):
        self.codes, self.values = {}, []
        for value in initial:
            self.code(value)

    def code(self, value):
        if value is None:
            return NO_CODE
        key = (_kind(value), value)
        if key not in self.codes:
            self.codes[key] = len(self.values)
            self.values.append(value)
        return self.codes[key]


def _claim(cand, name):
    if name in cand.fields:
        return cand.fields[name]
    value = cand.extra.get(name)
    if value is None:
        return None
    try:
        return _field_value(value, name)
    except InputError as err:
        raise err.located(candidate_id=cand.id) from None


def naive_pack(candidates, requirements, *, embeddings=None, token_counter=None, default_relevance=None) -> dict:
    """``pack``'s result as a dict of its fields, built one candidate and one value at a time."""
    reqs = Requirements.from_dict(requirements)
    cands, matrix = naive_coerce(candidates, embeddings, token_counter, default_relevance)
    rules = [name for name, value in (("required_sources", reqs.required_sources),
                                      ("max_per_source", reqs.max_per_source not in (None, {})),
                                      ("source_decay", reqs.source_decay),
                                      ("source_precedence", reqs.source_precedence)) if value]
    for cand in cands if rules else ():
        if cand.source == DEFAULT_SOURCE:
            raise InputError(candidate_id=cand.id, field="source", message="missing required field",
                             expected=f"a source name, since the requirements set {rules[0]}")
    n, now = len(cands), reqs.reference_time()
    sources, scopes = _Interner(reqs.required_sources), _Interner(reqs.allowed_scopes or ())
    n_allowed = len(scopes.values)
    docs, versions, aspects = _Interner(), _Interner(), _Interner(reqs.required_aspects)
    source = [sources.code(c.source) for c in cands]
    scope = [scopes.code(c.scope) for c in cands]
    doc = [docs.code(c.doc_id) for c in cands]
    version = [versions.code(c.version) for c in cands]
    aspect_codes = [[aspects.code(a) for a in c.aspects] for c in cands]
    aspect_matrix = np.zeros((n, len(aspects.values)), dtype=bool)
    for i, codes in enumerate(aspect_codes):
        for code in codes:
            aspect_matrix[i, code] = True
    aspect_weights = [0.0] * len(aspects.values)
    for k, weight in enumerate(reqs.required_aspects.values()):
        aspect_weights[k] = weight
    field_names = tuple(reqs.conflict_fields)
    field_values = np.full((n, len(field_names)), NO_CODE, dtype=np.int32)
    value_names = []
    for f, name in enumerate(field_names):
        interner = _Interner()
        for i, c in enumerate(cands):
            field_values[i, f] = interner.code(_claim(c, name))
        value_names.append(tuple(interner.values))
    admissible = [True] * n if reqs.allowed_scopes is None else [0 <= s < n_allowed for s in scope]
    has_ts = [c.timestamp is not None for c in cands]
    timestamp = [c.timestamp or 0.0 for c in cands]
    valid_from = [-math.inf if c.valid_from is None else c.valid_from for c in cands]
    valid_to = [math.inf if c.valid_to is None else c.valid_to for c in cands]
    age_days = np.where(has_ts, np.maximum((now - np.array(timestamp)) / SECONDS_PER_DAY, 0.0), 0.0)
    source_min = [0] * len(sources.values)
    for k, minimum in enumerate(reqs.required_sources.values()):
        source_min[k] = minimum
    source_max = [UNLIMITED] * len(sources.values)
    if isinstance(reqs.max_per_source, int):
        source_max = [reqs.max_per_source] * len(sources.values)
    elif reqs.max_per_source:
        for name, cap in reqs.max_per_source.items():
            code = sources.codes.get((_kind(name), name))
            if code is not None:
                source_max[code] = cap
    return {
        "ids": tuple(c.id for c in cands),
        "tokens": np.array([c.tokens for c in cands], dtype=np.int64),
        "relevance": np.array([c.relevance for c in cands], dtype=np.float64),
        "rank": np.array([NO_CODE if c.rank is None else c.rank for c in cands], dtype=np.int64),
        "has_timestamp": np.array(has_ts, dtype=bool),
        "timestamp": np.array(timestamp, dtype=np.float64),
        "valid_from": np.array(valid_from, dtype=np.float64),
        "valid_to": np.array(valid_to, dtype=np.float64),
        "source": np.array(source, dtype=np.int32),
        "source_names": tuple(sources.values),
        "scope": np.array(scope, dtype=np.int32),
        "scope_names": tuple(scopes.values),
        "admissible": np.array(admissible, dtype=bool),
        "doc": np.array(doc, dtype=np.int32),
        "doc_names": tuple(docs.values),
        "version": np.array(version, dtype=np.int32),
        "version_names": tuple(versions.values),
        "aspects": aspect_matrix,
        "aspect_names": tuple(aspects.values),
        "aspect_weights": np.array(aspect_weights, dtype=np.float64),
        "field_values": field_values,
        "field_names": field_names,
        "field_severity": np.array(list(reqs.conflict_fields.values()), dtype=np.float64),
        "field_value_names": tuple(value_names),
        "embeddings": matrix,
        "decay": np.array([reqs.decay_for(c.source) for c in cands], dtype=np.float64),
        "age_days": np.array(age_days, dtype=np.float64),
        "valid_now": (np.array(valid_from) <= now) & (now <= np.array(valid_to)),
        "source_min": np.array(source_min, dtype=np.int64),
        "source_max": np.array(source_max, dtype=np.int64),
        "budget": reqs.token_budget,
        "now": now,
        "requirements": reqs,
        "candidates": tuple(cands),
    }


def naive_text_buffer(texts, lower=True):
    """Each text lower-cased and encoded on its own, then joined."""
    encoded = [(t.lower() if lower else t).encode("utf-8", "surrogatepass") for t in texts]
    offsets = [0]
    for e in encoded:
        offsets.append(offsets[-1] + len(e))
    buf = b"".join(encoded)
    return np.frombuffer(buf or b"\0", dtype=np.uint8), np.array(offsets, dtype=np.int64)

"""What a query requires of its context: budget, aspects, sources, policy, freshness, the gate.

Every accepted key is declared once in :data:`REQUIREMENT_PARAMETERS` (name, validator, default,
meaning); :meth:`Requirements.from_dict` reads a dump's ``requirements`` object, or the config dict
of article 000's inspector, through that table. An unknown key is an error that lists the valid
ones, so a typo never silently turns a constraint off.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Mapping

from ctxselect.errors import InputError
from ctxselect.model import validation as checks
from ctxselect.model.candidate import RESERVED_KEYS
from ctxselect.model.times import epoch_now, to_epoch_seconds
from ctxselect.model.weights import ObjectiveWeights

__all__ = ["GateThresholds", "Requirements", "REQUIREMENT_PARAMETERS", "GATE_PARAMETERS"]


def _optional(validator: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    return lambda value, name: None if value is None else validator(value, name)


def _fraction(value: Any, name: str) -> float:
    return checks.number(value, name, low=0.0, high=1.0)


# name -> (validator, default, meaning). Defaults are the gate of article 000.
GATE_PARAMETERS: dict[str, tuple[Callable[[Any, str], Any], Any, str]] = {
    "min_coverage": (_fraction, 0.80, "weighted aspect coverage must reach this"),
    "min_token_utilization": (_fraction, 0.10, "tokens used / budget must reach this"),
    "max_token_utilization": (_optional(_fraction), 0.90,
                              "tokens used / budget must not exceed this; the selector keeps below it too "
                              "(null: no ceiling)"),
    "max_source_starvation": (_fraction, 0.0, "share of required sources below their minimum"),
    "max_contradiction_density": (_fraction, 0.0, "conflicting pairs / all pairs"),
    "min_freshness": (_fraction, 0.70, "relevance-weighted freshness must reach this"),
    "min_policy_admissibility": (_fraction, 1.0, "share of admissible chunks must reach this"),
    "max_stale_risk": (_optional(_fraction), None, "share of chunks outside their validity window (off when null)"),
}


@dataclass(frozen=True)
class GateThresholds:
    """The pre-inference gate (article 000): each condition is configurable.

    The defaults are ρ ≥ 0.80, 0.10 ≤ τ ≤ 0.90, δ ≤ 0, κ ≤ 0, φ ≥ 0.70, π = 1; ``max_stale_risk``
    is off unless set. The gate is one truth: ``inspect()`` judges a context by these thresholds,
    and ``select()`` with ``enforce_gate=True`` keeps to the same ones (the 0.90 ceiling included:
    the selector leaves 10 % of the budget unused by default; ``max_token_utilization=None`` or
    1.0 lets it use the whole budget, for the verdict too).
    """

    min_coverage: float = 0.80
    min_token_utilization: float = 0.10
    max_token_utilization: float | None = 0.90
    max_source_starvation: float = 0.0
    max_contradiction_density: float = 0.0
    min_freshness: float = 0.70
    min_policy_admissibility: float = 1.0
    max_stale_risk: float | None = None

    def __post_init__(self) -> None:
        for name, (validator, _default, _meaning) in GATE_PARAMETERS.items():
            object.__setattr__(self, name, validator(getattr(self, name), f"gate.{name}"))
        if self.min_token_utilization > self.utilization_ceiling:
            raise InputError(field="gate.max_token_utilization",
                             expected=f"a value >= min_token_utilization ({self.min_token_utilization:g}); "
                                      "unset, the ceiling is 0.9",
                             found=self.utilization_ceiling)

    @property
    def utilization_ceiling(self) -> float:
        """The gate's τ_max: ``max_token_utilization``, or 1.0 (no ceiling) when it is None."""
        return 1.0 if self.max_token_utilization is None else self.max_token_utilization

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "GateThresholds":
        checks.mapping(data, "gate", "an object of gate thresholds")
        unknown = sorted(set(data) - set(GATE_PARAMETERS))
        if unknown:
            raise InputError(field=f"gate.{unknown[0]}", message="unknown gate threshold",
                             expected="one of " + ", ".join(GATE_PARAMETERS))
        return cls(**data)


def _source_minimums(value: Any, name: str) -> dict[str, int]:
    if isinstance(value, Mapping):
        checks.mapping(value, name, "a list of sources or an object source -> minimum count")
        return {k: checks.integer(v, f"{name}.{k}", low=1) for k, v in value.items()}
    return {s: 1 for s in checks.string_list(value, name)}


def _per_source_maximum(value: Any, name: str) -> int | dict[str, int] | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        checks.mapping(value, name, "an integer or an object source -> maximum count")
        return {k: checks.integer(v, f"{name}.{k}", low=0) for k, v in value.items()}
    return checks.integer(value, name, low=1)


def _conflict_fields(value: Any, name: str) -> dict[str, float]:
    if isinstance(value, Mapping):
        checks.mapping(value, name, "a list of field names or an object field -> severity")
        out = {k: checks.number(v, f"{name}.{k}", low=0.0, high=1.0, low_open=True)
               for k, v in value.items()}
    else:
        out = {f: 1.0 for f in checks.string_list(value, name)}
    for field_name in out:
        if field_name in RESERVED_KEYS:
            raise InputError(field=f"{name}.{field_name}",
                             message=f"`{field_name}` is a candidate key, not a claim",
                             expected="the name of a claim under a candidate's `fields` (or a "
                                      "top-level key that is not a candidate key)")
    return out


def _source_decay(value: Any, name: str) -> dict[str, float]:
    checks.mapping(value, name, "an object source -> decay per day")
    return {k: checks.number(v, f"{name}.{k}", low=0.0) for k, v in value.items()}


def _source_precedence(value: Any, name: str) -> dict[str, float]:
    """Sources' trust: an ordered list (the first most trusted) or source -> trust weight (≥ 0)."""
    if isinstance(value, Mapping):
        checks.mapping(value, name, "a list of sources, most trusted first, or an object source -> trust weight")
        return {k: checks.number(v, f"{name}.{k}", low=0.0, high=checks.MAX_WEIGHT) for k, v in value.items()}
    sources = list(dict.fromkeys(checks.string_list(value, name)))
    return {s: float(len(sources) - k) for k, s in enumerate(sources)}


def _choice(*options: str) -> Callable[[Any, str], str]:
    def validate(value: Any, name: str) -> str:
        if value not in options:
            raise InputError(field=name, expected="one of " + ", ".join(options), found=value,
                             has_found=True)
        return value
    return validate


def _scopes(value: Any, name: str) -> tuple[str, ...] | None:
    """The allowed scopes as a duplicate-free tuple in first-seen order (a set in meaning)."""
    return None if value is None else tuple(dict.fromkeys(checks.string_list(value, name)))


def _now(value: Any, name: str) -> float | None:
    return None if value is None else to_epoch_seconds(value, name)


def _weights(value: Any, name: str) -> dict[str, float]:
    """The weights given (the others keep select()'s defaults), checked by the check select() runs:
    an unknown name is refused here, where the dump line or the requirements file is known."""
    checks.mapping(value, name, "an object of objective weights")
    given = ObjectiveWeights.from_mapping(value)
    return {k: getattr(given, k) for k in value}


# name -> (validator, default, meaning)
REQUIREMENT_PARAMETERS: dict[str, tuple[Callable[[Any, str], Any], Any, str]] = {
    "token_budget": (lambda v, n: checks.integer(v, n, low=1), None,
                     "token budget B of the retrieved-context layer (required, > 0)"),
    "required_aspects": (lambda v, n: checks.weighted_names(v, n, weight="weight", default=1.0), {},
                         "aspects the answer needs: a list, or aspect -> weight"),
    "required_sources": (_source_minimums, {}, "sources the context needs: a list, or source -> minimum count"),
    "max_per_source": (_per_source_maximum, None, "maximum chunks per source: one integer, or source -> maximum"),
    "max_chunks": (_optional(lambda v, n: checks.integer(v, n, low=1)), None, "maximum chunks in total"),
    "allowed_scopes": (_scopes, None, "scopes the caller may see (null: every chunk is admissible)"),
    "conflict_fields": (_conflict_fields, {}, "claim fields whose differing values conflict: a list, or field -> severity"),
    "version_conflicts": (checks.boolean, True,
                          "same doc_id with a different version is a conflict"),
    "version_conflict_severity": (lambda v, n: checks.number(v, n, low=0.0, high=1.0, low_open=True), 1.0,
                                  "severity of a version conflict"),
    "now": (_now, None, "reference time (null: the current time)"),
    "decay_lambda": (lambda v, n: checks.number(v, n, low=0.0), 0.01, "freshness decay per day"),
    "half_life_days": (_optional(lambda v, n: checks.number(v, n, low=1e-300)), None,
                       "freshness half-life in days; overrides decay_lambda when set"),
    "source_decay": (_source_decay, {}, "per-source decay per day, overriding decay_lambda"),
    "missing_timestamp": (_choice("fresh", "stale"), "fresh",
                          "freshness of a chunk without timestamp: fresh = 1, stale = 0"),
    "contradictions": (_choice("fields", "all"), "fields",
                       "what the gate's contradiction density counts: fields (conflict fields and versions, "
                       "article 000's definition) or all (free-text claim conflicts too, which fields lists "
                       "beside it)"),
    "freshness_fallback": (_choice("drop", "closest"), "drop",
                           "when no selection meeting the gate's other conditions reaches min_freshness: drop "
                           "the floor, or lower it to the freshest those selections can reach"),
    "source_precedence": (_source_precedence, {},
                          "which source wins a conflict evidence cannot decide: a list, most trusted first, "
                          "or source -> trust weight"),
    "gate": (None, None, "gate thresholds (object); the flat keys min_coverage ... are accepted too"),
    "weights": (_weights, {}, "objective weights, used by select()"),
}

_ALIASES = {"budget": "token_budget"}


@dataclass(frozen=True)
class Requirements:
    """What one query requires of its context.

    Build it with keyword arguments or :meth:`from_dict`; the accepted keys, their defaults and
    meaning are listed in :data:`REQUIREMENT_PARAMETERS` (and in docs/dump-format.md).
    Article 000's config (``required_sources`` with ``min_chunks_by_source``) is accepted too.
    """

    token_budget: int
    required_aspects: Mapping[str, float] = field(default_factory=dict)
    required_sources: Mapping[str, int] = field(default_factory=dict)
    max_per_source: int | Mapping[str, int] | None = None
    max_chunks: int | None = None
    allowed_scopes: tuple[str, ...] | None = None
    conflict_fields: Mapping[str, float] = field(default_factory=dict)
    version_conflicts: bool = True
    version_conflict_severity: float = 1.0
    now: float | None = None
    decay_lambda: float = 0.01
    half_life_days: float | None = None
    source_decay: Mapping[str, float] = field(default_factory=dict)
    missing_timestamp: str = "fresh"
    contradictions: str = "fields"
    freshness_fallback: str = "drop"
    source_precedence: Mapping[str, float] = field(default_factory=dict)
    gate: GateThresholds = field(default_factory=GateThresholds)
    weights: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name, (validator, _default, _meaning) in REQUIREMENT_PARAMETERS.items():
            if validator is not None:
                object.__setattr__(self, name, validator(getattr(self, name), name))
        if isinstance(self.gate, Mapping):
            object.__setattr__(self, "gate", GateThresholds.from_dict(self.gate))
        elif not isinstance(self.gate, GateThresholds):
            raise InputError(field="gate", expected="an object of gate thresholds", found=self.gate)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Requirements":
        """Read requirements from a dump's ``requirements`` object or article 000's config.

        Raises
        ------
        InputError
            For a missing budget, an unknown key (listing the valid ones) or a bad value.
        """
        if isinstance(data, Requirements):
            return data
        if not isinstance(data, Mapping):
            raise InputError(field="requirements", expected="an object", found=data, has_found=True)
        values: dict[str, Any] = {}
        gate: dict[str, Any] = {}
        minimums = None
        given: dict[str, str] = {}
        for key, value in data.items():
            name = _ALIASES.get(key, key)
            if name in given:
                raise InputError(field=f"requirements.{key}",
                                 message=f"`{key}` and `{given[name]}` both given; they name one requirement",
                                 expected="one of them")
            given[name] = key
            if name in GATE_PARAMETERS:
                gate[name] = value
            elif name == "min_chunks_by_source":
                minimums = value
            elif name in REQUIREMENT_PARAMETERS:
                values[name] = value
            else:
                valid = sorted([*REQUIREMENT_PARAMETERS, *GATE_PARAMETERS, "min_chunks_by_source", *_ALIASES])
                raise InputError(field=f"requirements.{key}", message="unknown requirement",
                                 expected="one of " + ", ".join(valid))
        if values.get("token_budget") is None:
            raise InputError(field="requirements.token_budget", message="missing required field",
                             expected="a positive integer")
        if minimums is not None:
            sources = _source_minimums(values.get("required_sources", []), "required_sources")
            checks.mapping(minimums, "min_chunks_by_source", "an object source -> minimum count")
            for source in sources:
                if source in minimums:
                    sources[source] = checks.integer(minimums[source], f"min_chunks_by_source.{source}", low=1)
            values["required_sources"] = sources
        if gate:
            nested = values.get("gate") or {}
            checks.mapping(nested, "gate", "an object of gate thresholds")
            twice = sorted(set(nested) & set(gate))
            if twice:
                raise InputError(field=f"requirements.{twice[0]}",
                                 message=f"`{twice[0]}` given both at the top level and in `gate`",
                                 expected="each gate threshold given once")
            values["gate"] = {**nested, **gate}
        try:
            return cls(**values)
        except InputError as err:
            raise err if err.field else err.located(field="requirements") from None

    # -- derived values ------------------------------------------------------------------
    def decay_for(self, source: str) -> float:
        """Freshness decay per day for chunks of ``source``."""
        if source in self.source_decay:
            return self.source_decay[source]
        if self.half_life_days is not None:
            return math.log(2.0) / self.half_life_days
        return self.decay_lambda

    def admits(self, scope: str | None) -> bool:
        """Whether a chunk of ``scope`` is admissible: every chunk when ``allowed_scopes`` is null,
        else only a scope in the *set* of allowed scopes (never by position or list length)."""
        return self.allowed_scopes is None or (scope is not None and scope in self.allowed_scopes)

    def reference_time(self) -> float:
        """``now`` as epoch seconds, or the current time when unset."""
        return self.now if self.now is not None else epoch_now()

    def to_dict(self) -> dict[str, Any]:
        """The requirements as a dump object (only what differs from the defaults)."""
        out: dict[str, Any] = {"token_budget": self.token_budget}
        defaults = Requirements(token_budget=1)
        for name in REQUIREMENT_PARAMETERS:
            if name in ("token_budget", "gate"):
                continue
            value = getattr(self, name)
            if value != getattr(defaults, name):
                out[name] = list(value) if isinstance(value, tuple) else (dict(value) if isinstance(value, Mapping) else value)
        gate = {k: v for k, v in asdict(self.gate).items() if v != getattr(GateThresholds(), k)}
        if gate:
            out["gate"] = gate
        return out

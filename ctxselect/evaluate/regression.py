"""The release gate: a bench result against a saved one, with paired confidence intervals and
thresholds that fail the run.

Article 003's point is that these metrics run whenever retrieval, chunking or ranking changes,
and a change that lowers quality is blocked. :func:`compare` pairs the queries of a new bench
result with those of a saved one (``ctxselect bench --json``), per method and metric, and gives
the mean change with a 95 % confidence interval from a **paired bootstrap over queries** (2,000
resamples of the paired query set, fixed seed, percentile interval). :func:`check` applies the
rules:

* ``--fail-under METRIC=VALUE``: the new mean of METRIC is below VALUE (whatever its direction);
* ``--max-drop METRIC=DELTA``: the mean moved the worse way by more than DELTA (the point
  estimate: higher is better for all metrics but :data:`LOWER_IS_BETTER`);
* with a baseline and no ``--max-drop``, the default rule: a *significant* drop (the whole
  interval on the worse side) of the objective, the gate pass rate or gold recall.

A rule names one metric for every method of the run (``recall=0.5``) or one method
(``optimal.recall=0.5``). Methods are paired by name; when each result holds exactly one method
and the names differ (``--methods greedy`` against an ``optimal`` baseline), those two are paired.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from ctxselect.errors import InputError, plain_reason
from ctxselect.model import validation as checks
from ctxselect.model.files import read_small_file
from ctxselect.quality.vector import METRIC_NAMES

__all__ = ["pairs", "METRICS", "LOWER_IS_BETTER", "Rule", "Delta", "parse_rule", "compare", "check", "DEFAULT_RULES",
           "record_values"]

GOLD_METRICS = ("recall", "all_gold", "precision", "distractors", "middle_third")
#: The articles' metrics of a record (ctxselect.evaluate.bench_metrics): key -> (record field, key in it or None).
ARTICLE_METRICS = {"quality_score": ("quality_score", None), "relevance_weighted": ("relevance", "weighted"),
                   "self_consistency": ("self_consistency", None), "density": ("labelled", "density"),
                   "map": ("labelled", "ap"), "recall@20": ("labelled", "recall@20"),
                   "recall@50": ("labelled", "recall@50"), "recall@200": ("labelled", "recall@200")}
#: Every metric a rule can name: per query, from a bench record.
METRICS = ("objective", "gate_pass", "tokens", "latency", *METRIC_NAMES, *GOLD_METRICS, *ARTICLE_METRICS)
#: Metrics where lower is better (a "drop" is a rise).
LOWER_IS_BETTER = frozenset({"tokens", "latency", "utilization_risk", "source_starvation", "contradiction_density",
                             "contradiction_density_weighted", "stale_risk", "distractors", "middle_third"})
#: The default gate with a baseline and no --max-drop: a significant drop of these.
DEFAULT_RULES = ("objective", "gate_pass", "recall")
RESAMPLES = 2000
#: The default rule needs at least this many paired queries to call a drop significant.
MIN_SIGNIFICANT = 5
CONFIDENCE = 0.95


def _raw_value(record: Mapping[str, Any], metric: str) -> tuple[str, Any, bool]:
    """Where ``metric`` lives in a record, its raw value, and whether it may be absent (null): gold
    metrics when ``gold`` is null, the articles' metrics (a result from before them)."""
    if metric in ("objective", "tokens", "latency"):
        return metric, record.get(metric), False
    if metric in METRIC_NAMES:
        return f"metrics.{metric}", record["metrics"].get(metric), False
    if metric in GOLD_METRICS:
        gold = record.get("gold")
        return f"gold.{metric}", None if gold is None else gold.get(metric), gold is None
    name, key = ARTICLE_METRICS[metric]
    value = record.get(name)
    if key is None:
        return name, value, True
    return f"{name}.{key}", value.get(key) if isinstance(value, dict) else None, True


def record_values(record: Mapping[str, Any], metric: str) -> float | None:
    """One query's value of ``metric`` in a bench record (a dict of ``BenchResult.to_dict()``),
    None when it has none (a gold metric of a query without gold; an articles' metric of a result
    from before them, or without gold / paraphrases). Read where :func:`_raw_value` finds it."""
    if metric == "gate_pass":
        return float(bool(record["passed"]))
    _, value, optional = _raw_value(record, metric)
    if optional:
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    return float(value)


@dataclass(frozen=True)
class Rule:
    """``[METHOD.]METRIC=VALUE`` of ``--fail-under`` (kind ``under``) or ``--max-drop`` (``drop``)."""

    kind: str
    metric: str
    value: float
    method: str | None = None

    def __str__(self) -> str:
        option = "--fail-under" if self.kind == "under" else "--max-drop"
        return f"{option} {self.method + '.' if self.method else ''}{self.metric}={self.value:g}"


def parse_rule(text: str, kind: str) -> Rule:
    """``[METHOD.]METRIC=VALUE`` as a :class:`Rule` (``kind``: ``under`` or ``drop``).

    Raises
    ------
    InputError
        Naming the option, with the valid metrics when the metric is unknown.
    """
    option = "--fail-under" if kind == "under" else "--max-drop"
    name, sep, number = str(text).partition("=")
    if not sep:
        raise InputError(field=option, expected="METRIC=VALUE or METHOD.METRIC=VALUE", found=text)
    method, _, metric = name.strip().rpartition(".")
    method, metric = method.strip(), metric.strip()
    if metric not in METRICS:
        raise InputError(field=option, message=f"unknown metric {metric!r}", expected="one of " + ", ".join(METRICS))
    if kind == "under" and metric in LOWER_IS_BETTER:
        raise InputError(field=option, message=f"{metric} is better lower: a floor on it would fail good runs",
                         expected=f"--max-drop {metric}=DELTA against a baseline")
    try:
        value = float(number)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or (kind == "drop" and value < 0):
        raise InputError(field=option, expected="a finite number" + (" >= 0" if kind == "drop" else ""),
                         found=number.strip())
    if method:
        from ctxselect.model.validation import parse_choice
        from ctxselect.selection.solvers.registry import Method

        method = parse_choice(Method, method, option).value
    return Rule(kind=kind, metric=metric, value=value, method=method or None)


@dataclass(frozen=True)
class Delta:
    """The change of one metric of one method, over the queries both results hold."""

    method: str
    baseline_method: str
    metric: str
    queries: int
    baseline: float
    new: float
    change: float
    low: float
    high: float

    @property
    def worse_by(self) -> float:
        """How far the mean moved the worse way (negative: it improved)."""
        return self.change if self.metric in LOWER_IS_BETTER else -self.change

    @property
    def significantly_worse(self) -> bool:
        """The whole confidence interval lies on the worse side of zero (beyond rounding), over at
        least :data:`MIN_SIGNIFICANT` paired queries (with fewer the interval is a point)."""
        tol = 1e-9 * max(1.0, abs(self.baseline))
        if self.queries < MIN_SIGNIFICANT:
            return False
        if math.isnan(self.low) or math.isnan(self.high):  # no interval: never a pass by default
            return True
        return self.low > tol if self.metric in LOWER_IS_BETTER else self.high < -tol

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "baseline_method": self.baseline_method, "metric": self.metric,
                "queries": self.queries, "baseline": self.baseline, "new": self.new, "change": self.change,
                "ci95": [self.low, self.high], "significantly_worse": self.significantly_worse}


def pairs(ours: Sequence[str], theirs: Sequence[str]) -> list[tuple[str, str]]:
    """(new method, baseline method) pairs: by name, or the two when each run holds one method."""
    ours, theirs = list(ours), list(theirs)
    if len(ours) == 1 and len(theirs) == 1:
        return [(ours[0], theirs[0])]
    return [(m, m) for m in ours if m in theirs]


def _bootstrap(diff: np.ndarray, seed: int = 0) -> tuple[float, float]:
    if diff.size == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    step = max(1, min(RESAMPLES, 2_000_000 // diff.size))  # memory O(step x n), not O(RESAMPLES x n)
    means = np.concatenate([diff[rng.integers(0, diff.size, size=(min(step, RESAMPLES - k), diff.size))].mean(axis=1)
                            for k in range(0, RESAMPLES, step)])
    tail = (1 - CONFIDENCE) / 2
    return float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail))


def compare(new: Mapping[str, Any], baseline: Mapping[str, Any], metrics: Sequence[str] = METRICS) -> list[Delta]:
    """The change of every metric of every paired method, on the queries both results hold
    (matched by query id); a metric with no paired value (gold metrics without gold) is left out.

    Raises
    ------
    InputError
        When the results share no method or no query.
    """
    paired = pairs(new.get("methods", []), baseline.get("methods", []))
    if not paired:
        raise InputError(field="--baseline", message="the baseline holds none of the methods of this run",
                         expected="a bench result of the same methods, found " + ", ".join(baseline.get("methods", [])))
    index = {(r["method"], r["query_id"]): r for r in baseline.get("records", [])}
    out: list[Delta] = []
    paired_any = False
    for ours, theirs in paired:
        rows = [(r, index[(theirs, r["query_id"])]) for r in new.get("records", [])
                if r["method"] == ours and (theirs, r["query_id"]) in index]
        paired_any |= bool(rows)
        for metric in metrics:
            values = [(record_values(a, metric), record_values(b, metric)) for a, b in rows]
            values = [(a, b) for a, b in values if a is not None and b is not None]
            if not values:
                continue
            a, b = np.array(values, dtype=np.float64).T
            low, high = _bootstrap(a - b)
            out.append(Delta(method=ours, baseline_method=theirs, metric=metric, queries=len(values),
                             baseline=float(b.mean()), new=float(a.mean()), change=float((a - b).mean()),
                             low=low, high=high))
    if not paired_any:
        raise InputError(field="--baseline", message="the baseline and this run share no query id",
                         expected="a bench result of the same dumps")
    return out


def _means(new: Mapping[str, Any], method: str, metric: str) -> float | None:
    values = [record_values(r, metric) for r in new.get("records", []) if r["method"] == method]
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None


def check(new: Mapping[str, Any], rules: Sequence[Rule], deltas: Sequence[Delta] | None = None) -> list[str]:
    """Every rule the new result breaks, one line each naming method, metric and numbers; with
    ``deltas`` (a baseline) and no ``drop`` rule, the default rule (:data:`DEFAULT_RULES`)."""
    broken: list[str] = []
    methods = list(new.get("methods", []))
    for rule in rules:
        if rule.method is not None and rule.method not in methods:
            broken.append(f"{rule}: the run has no method {rule.method}")
            continue
        for method in [rule.method] if rule.method else methods:
            if rule.kind == "under":
                mean = _means(new, method, rule.metric)
                if mean is None:
                    broken.append(f"{rule}: {method} has no value of {rule.metric} (no query with gold?)")
                elif mean < rule.value:
                    broken.append(f"{rule}: {method} {rule.metric} = {mean:.4g}, under {rule.value:g}")
            else:
                if deltas is None:
                    broken.append(f"{rule}: needs --baseline")
                    continue
                matching = [d for d in deltas if d.method == method and d.metric == rule.metric]
                if not matching:
                    broken.append(f"{rule}: the baseline has no paired value of {rule.metric} for {method} "
                                  "(another method, an older result, or no query with gold)")
                for d in matching:
                    if d.worse_by > rule.value:
                        broken.append(f"{rule}: {method} {rule.metric} {d.baseline:.4g} -> {d.new:.4g} "
                                      f"(worse by {d.worse_by:.4g} on {d.queries} queries; 95 % CI of the change "
                                      f"[{d.low:.4g}, {d.high:.4g}])")
    if deltas is not None and not any(r.kind == "drop" for r in rules):
        for d in deltas:
            if d.metric in DEFAULT_RULES and d.significantly_worse:
                broken.append(f"significant drop of {d.method} {d.metric} against the baseline's {d.baseline_method}: "
                              f"{d.baseline:.4g} -> {d.new:.4g} (95 % CI of the change [{d.low:.4g}, {d.high:.4g}], "
                              f"{d.queries} queries)")
    return broken


#: The largest baseline file read (a bench result of ~100,000 records).
MAX_BASELINE_BYTES = 512 * 1024 * 1024
#: The largest size of a baseline's value: their sums stay finite (1e308 made the interval NaN, which passed).
MAX_RECORD_VALUE = 1e12
#: What each key every record must hold is, as an error says it (the numbers' domains are in _DOMAINS).
_RECORD_KEYS = {"query_id": (str, "a string"), "method": (str, "a method name"), "passed": (bool, "true or false"),
                "metrics": (dict, "an object of the quality metrics")}
#: The domain of each value a rule reads, by metric: (lowest, highest, whole number); every other metric
#: (the quality vector, the gold shares, the articles' metrics) is a share in [0, 1].
_DOMAINS = {"objective": (-MAX_RECORD_VALUE, MAX_RECORD_VALUE, False), "tokens": (0, MAX_RECORD_VALUE, True),
            "latency": (0, MAX_RECORD_VALUE, False), "distractors": (0, MAX_RECORD_VALUE, True)}
_SHARE = (0.0, 1.0, False)
#: Rounding a share may carry past 1 (a ratio of float sums) without being a wrong value.
_SHARE_SLACK = 1e-9


def _expected(low: float, high: float, whole: bool) -> str:
    if (low, high, whole) == _SHARE:
        return "a number in [0, 1]"
    if low < 0:
        return f"a finite number of at most {high:g} in size"
    return f"{'an integer' if whole else 'a number'} >= 0 of at most {high:g}"


def _check_record(record: Mapping[str, Any], where: str) -> None:
    """Every value a rule can read (:data:`METRICS`) in its domain; InputError naming the field."""
    for key, (kind, expected) in _RECORD_KEYS.items():
        value = record.get(key)
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise InputError(field=f"{where}.{key}", expected=expected, found=value, has_found=True)
    for name in ("gold", "labelled", "relevance"):
        if record.get(name) is not None and not isinstance(record[name], dict):
            raise InputError(field=f"{where}.{name}", expected="null or an object", found=record[name],
                             has_found=True)
    for metric in METRICS:
        if metric == "gate_pass":  # `passed`, checked above
            continue
        field, value, optional = _raw_value(record, metric)
        if value is None and optional:
            continue
        low, high, whole = _DOMAINS.get(metric, _SHARE)
        slack = _SHARE_SLACK if high == 1.0 else 0.0
        number = float(value) if checks.is_number(value) and abs(value) <= 2 * MAX_RECORD_VALUE else math.nan
        if not (low <= number <= high + slack) or (whole and not number.is_integer()):
            raise InputError(field=f"{where}.{field}", expected=_expected(low, high, whole), found=value,
                             has_found=True)


def load_result(path) -> dict[str, Any]:
    """A saved ``ctxselect bench --json`` result, checked record by record.

    Every value a rule reads must lie in its domain: ``objective`` a finite number of at most
    :data:`MAX_RECORD_VALUE` in size, ``tokens`` (and ``gold.distractors``) a whole number >= 0,
    ``latency`` a number >= 0, ``passed`` true or false, and every share (``metrics``, the other
    ``gold`` metrics, ``quality_score``, ``relevance.weighted``, ``self_consistency``,
    ``labelled``'s ``density``, ``ap`` and ``recall@K``) a number in [0, 1]; a bool is no number.

    Raises
    ------
    InputError
        Naming the file (and the record and field) when it cannot be read or is not a bench result;
        malformed JSON with its line and column; a path that is not a regular file (a FIFO, a device)
        or larger than :data:`MAX_BASELINE_BYTES` (:func:`ctxselect.model.files.read_small_file`).
    """
    import json

    text = read_small_file(path, limit=MAX_BASELINE_BYTES, what="baseline", option="--baseline",
                           expected="a bench result file (ctxselect bench --json)")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(file=str(path), line=err.lineno, field="--baseline",
                         message=f"malformed JSON at column {err.colno} ({err.msg})",
                         expected="the output of ctxselect bench --json") from None
    except (RecursionError, ValueError) as err:  # too deep, or an integer too long to read
        reason = "JSON nested too deeply" if isinstance(err, RecursionError) else plain_reason(err)
        raise InputError(file=str(path), field="--baseline", message=reason,
                         expected="the output of ctxselect bench --json") from None
    if not isinstance(data, dict) or not isinstance(data.get("methods"), list) or not isinstance(data.get("records"), list):
        raise InputError(file=str(path), field="--baseline", expected="an object with methods and records "
                         "(ctxselect bench --json)", found=data, has_found=True)
    from ctxselect.model.validation import parse_choice
    from ctxselect.selection.solvers.registry import Method

    methods = []
    for k, name in enumerate(data["methods"]):
        if not isinstance(name, str):
            raise InputError(file=str(path), field=f"methods[{k}]", expected="a method name", found=name,
                             has_found=True)
        try:
            methods.append(parse_choice(Method, name, f"methods[{k}]").value)
        except InputError as err:
            raise err.located(file=str(path)) from None
    data["methods"] = methods
    seen: set[tuple[str, str]] = set()
    for k, record in enumerate(data["records"]):
        if not isinstance(record, dict):
            raise InputError(file=str(path), field=f"records[{k}]", expected="an object", found=record, has_found=True)
        try:
            _check_record(record, f"records[{k}]")
        except InputError as err:
            raise err.located(file=str(path)) from None
        if record["method"] not in methods:
            raise InputError(file=str(path), field=f"records[{k}].method", expected="one of the result's methods",
                             found=record["method"])
        key = (record["method"], record["query_id"])
        if key in seen:  # the comparison pairs one record per method and query
            raise InputError(file=str(path), field=f"records[{k}]", message=f"a second record of {key[0]} for "
                             f"query {key[1]!r}", expected="one record per method and query")
        seen.add(key)
    return data

"""The release gate (issue 16.1): a bench result against a saved one, paired bootstrap intervals,
--fail-under / --max-drop rules and the default rule; --by groups (16.2)."""

import numpy as np
import pytest

import ctxselect
from ctxselect.evaluate import regression as rg
from ctxselect.evaluate.bench import MISSING, group_value


def _record(query_id, method, objective=1.0, passed=True, recall=None, tokens=100):
    metrics = {m: 0.5 for m in rg.METRIC_NAMES}
    gold = None if recall is None else {"recall": recall, "all_gold": float(recall == 1), "precision": 0.5,
                                        "distractors": 1.0, "middle_third": 0.0}
    return {"query_id": query_id, "method": method, "objective": objective, "passed": passed, "metrics": metrics,
            "tokens": tokens, "latency": 0.01, "gold": gold, "ids": [], "status": "optimal"}


def _result(method, objectives, passed=None, recalls=None):
    passed = passed or [True] * len(objectives)
    recalls = recalls or [None] * len(objectives)
    return {"methods": [method], "records": [_record(f"q{k}", method, o, p, r)
                                             for k, (o, p, r) in enumerate(zip(objectives, passed, recalls))]}


def naive_interval(diff, resamples=rg.RESAMPLES, seed=0):
    """The bootstrap written out: resample the paired differences with the same generator."""
    rng = np.random.default_rng(seed)
    means = [float(np.mean(diff[rng.integers(0, len(diff), size=(resamples, len(diff)))[k]]))
             for k in range(resamples)]
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def test_changes_are_paired_by_query_and_the_interval_is_the_bootstrap():
    base = _result("optimal", [1.0, 2.0, 3.0, 4.0])
    new = _result("optimal", [1.5, 2.0, 2.0, 4.5])
    new["records"].reverse()  # order does not matter: pairs by query id
    new["records"].append(_record("only-new", "optimal", 100.0))  # unpaired: left out
    (delta,) = [d for d in rg.compare(new, base) if d.metric == "objective"]
    diff = np.array([0.5, 0.0, -1.0, 0.5])
    assert delta.queries == 4 and delta.change == pytest.approx(diff.mean())
    assert delta.baseline == pytest.approx(2.5) and delta.new == pytest.approx(2.5)
    assert (delta.low, delta.high) == pytest.approx(naive_interval(diff))
    assert delta.low <= delta.change <= delta.high and not delta.significantly_worse


def test_gold_metrics_pair_only_queries_with_gold_and_lower_is_better_is_respected():
    base = _result("optimal", [1, 1, 1], recalls=[1.0, 0.5, None])
    new = _result("optimal", [1, 1, 1], recalls=[0.0, 0.0, None])
    deltas = {d.metric: d for d in rg.compare(new, base)}
    assert deltas["recall"].queries == 2 and deltas["recall"].worse_by == pytest.approx(0.75)
    tokens = rg.Delta("m", "m", "tokens", 5, 100.0, 120.0, 20.0, 10.0, 30.0)
    assert tokens.worse_by == 20.0 and tokens.significantly_worse  # more tokens is worse
    assert rg.Delta("m", "m", "recall", 3, 0.5, 0.7, 0.2, 0.1, 0.3).worse_by == pytest.approx(-0.2)


def test_one_method_each_is_paired_across_names_else_by_name():
    base, new = _result("optimal", [2.0]), _result("greedy", [1.0])
    assert {(d.method, d.baseline_method) for d in rg.compare(new, base)} == {("greedy", "optimal")}
    two = {"methods": ["greedy", "topk"], "records": new["records"]}
    with pytest.raises(ctxselect.InputError, match="none of the methods"):
        rg.compare(two, base)
    with pytest.raises(ctxselect.InputError, match="share no query"):
        rg.compare(_result("optimal", [1.0]), {"methods": ["optimal"], "records": [_record("other", "optimal")]})


def test_rules_break_and_hold_as_documented():
    base = _result("optimal", [2.0] * 20, recalls=[1.0] * 20)
    same = _result("optimal", [2.0] * 20, recalls=[1.0] * 20)
    worse = _result("optimal", [1.0] * 20, passed=[False] * 20, recalls=[0.5] * 20)
    assert rg.check(same, [], rg.compare(same, base)) == []  # default rule, nothing moved
    broken = rg.check(worse, [], rg.compare(worse, base))  # default rule: significant drops
    assert len(broken) == 3 and all("significant drop of optimal" in b for b in broken)
    assert {b.split()[4] for b in broken} == {"objective", "gate_pass", "recall"}
    drop = [rg.parse_rule("recall=0.6", "drop")]
    assert rg.check(worse, drop, rg.compare(worse, base)) == []  # explicit rule replaces the default
    assert rg.check(worse, [rg.parse_rule("optimal.recall=0.49", "drop")], rg.compare(worse, base))
    under = [rg.parse_rule("gate_pass=0.5", "under")]
    assert rg.check(same, under) == [] and "under 0.5" in rg.check(worse, under)[0]
    assert "needs --baseline" in rg.check(same, drop)[0]
    assert "no method mmr" in rg.check(same, [rg.parse_rule("mmr.objective=1", "under")])[0]


@pytest.mark.parametrize("text, kind, message", [
    ("recall", "under", "METRIC=VALUE"), ("nope=1", "under", "unknown metric 'nope'"),
    ("recall=abc", "under", "finite number"), ("recall=nan", "drop", "finite number"),
    ("recall=-1", "drop", ">= 0"), ("best.recall=1", "under", "one of"),
])
def test_bad_rules_are_located_errors(text, kind, message):
    with pytest.raises(ctxselect.InputError, match=message):
        rg.parse_rule(text, kind)


@pytest.mark.parametrize("content, field", [
    (b"\xff\xfe", "--baseline"), (b"[1, 2]", "--baseline"), (b'{"methods": [], "records": [3]}', "records[0]"),
    (b'{"methods": ["greedy"], "records": [{"query_id": "q"}]}', "records[0].method"),
])
def test_a_bad_baseline_file_is_one_located_error(tmp_path, content, field):
    path = tmp_path / "base.json"
    path.write_bytes(content)
    with pytest.raises(ctxselect.InputError) as err:
        rg.load_result(path)
    assert field in str(err.value) and "base.json" in str(err.value) and "\n" not in str(err.value)


def test_group_values_read_dotted_paths():
    from ctxselect.model.io import Query

    q = Query.from_dict({"query_id": "a", "requirements": {"token_budget": 5}, "candidates": [],
                         "meta": {"hops": 2, "type": "comparison", "deep": {"x": [1, 2]}}})
    assert group_value(q, "meta.hops") == "2" and group_value(q, "meta.type") == "comparison"
    assert group_value(q, "meta.deep.y") == MISSING
    for path in ("meta.deep.x", "meta.deep", "candidates", "gold"):  # lists, objects, chunks: no group
        with pytest.raises(ctxselect.InputError, match="field '--by'"):
            group_value(q, path)
    assert group_value(q, "requirements.token_budget") == "5"
    assert group_value(q, "query_id") == "a" and group_value(q, "other") == MISSING


def test_the_bootstrap_in_chunks_of_a_large_run_is_a_bootstrap():
    """Memory O(chunk x n): 5,000 paired queries resample in chunks; the interval is reproducible
    and matches the normal approximation of the mean's 95 % interval to within a few percent."""
    rng = np.random.default_rng(3)
    diff = rng.normal(loc=0.2, size=5000)
    low, high = rg._bootstrap(diff)
    assert (low, high) == rg._bootstrap(diff)
    half = 1.96 * diff.std(ddof=1) / np.sqrt(diff.size)
    assert low < diff.mean() < high
    assert (high - low) / 2 == pytest.approx(half, rel=0.08)
    assert (low + high) / 2 == pytest.approx(diff.mean(), abs=0.1 * half)


def test_too_few_queries_or_rounding_is_never_a_significant_drop():
    one = rg.Delta("m", "m", "recall", 1, 1.0, 0.5, -0.5, -0.5, -0.5)
    assert not one.significantly_worse  # one paired query: the interval is a point
    rounding = rg.Delta("m", "m", "objective", 50, 2.0, 2.0 - 1e-12, -1e-12, -1e-12, -1e-12)
    assert not rounding.significantly_worse


def test_a_drop_rule_with_nothing_to_compare_breaks_and_a_floor_on_a_lower_is_better_metric_is_refused():
    base = _result("greedy", [1.0] * 6)
    new = {"methods": ["greedy", "optimal"], "records": base["records"] + _result("optimal", [1.0] * 6)["records"]}
    broken = rg.check(new, [rg.parse_rule("optimal.objective=0", "drop")], rg.compare(new, base))
    assert broken and "no paired value of objective for optimal" in broken[0]
    with pytest.raises(ctxselect.InputError, match="better lower"):
        rg.parse_rule("tokens=100", "under")
    assert rg.parse_rule(" optimal . recall = 0.5", "under") == rg.Rule("under", "recall", 0.5, "optimal")


@pytest.mark.parametrize("edit, field", [
    (lambda d: d["methods"].__setitem__(0, 1), "methods[0]"),
    (lambda d: d["methods"].__setitem__(0, {"a": 1}), "methods[0]"),
    (lambda d: d["methods"].__setitem__(0, "[/bold]x"), "methods[0]"),
    (lambda d: d["records"][0].__setitem__("method", "topk"), "records[0].method"),
    (lambda d: d["records"][0]["gold"].__setitem__("recall", float("nan")), "records[0].gold.recall"),
    (lambda d: d["records"][0]["metrics"].__setitem__("freshness", float("inf")), "records[0].metrics.freshness"),
])
def test_a_hostile_baseline_is_refused_with_a_located_line(tmp_path, edit, field):
    import json

    data = _result("greedy", [1.0, 2.0], recalls=[1.0, 0.5])
    edit(data)
    path = tmp_path / "base.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ctxselect.InputError) as err:
        rg.load_result(path)
    assert field in str(err.value) and "\n" not in str(err.value)


def test_a_baseline_that_would_overflow_or_pairs_twice_is_refused(tmp_path):
    # a helper's third hostile hunt: objectives of 1e308 summed to infinity, the interval was NaN and the gate
    # passed (and --json wrote NaN); a record given twice for one method and query was paired silently
    import json

    path = tmp_path / "base.json"
    huge = _result("greedy", [1e308] * 6)
    path.write_text(json.dumps(huge))
    with pytest.raises(ctxselect.InputError, match=r"base\.json, field 'records\[0\]\.objective': expected a finite "
                                                   r"number of at most 1e\+12 in size"):
        rg.load_result(path)
    twice = _result("greedy", [1.0] * 6)
    twice["records"].append(dict(twice["records"][2]))
    path.write_text(json.dumps(twice))
    with pytest.raises(ctxselect.InputError, match=r"field 'records\[6\]': a second record of greedy for query 'q2'"):
        rg.load_result(path)
    path.write_text(json.dumps(_result("greedy", [1e12] * 6)))  # the largest size taken
    assert len(rg.load_result(path)["records"]) == 6


def test_an_interval_that_is_not_a_number_fails_the_gate():
    nan = rg.Delta("m", "m", "objective", 6, 1.0, 1.0, float("nan"), float("nan"), float("nan"))
    assert nan.significantly_worse  # never a pass by default
    few = rg.Delta("m", "m", "objective", 1, 1.0, 1.0, float("nan"), float("nan"), float("nan"))
    assert not few.significantly_worse  # (one query: never significant, as before)


def _labelled_result():
    data = _result("greedy", [1.0, 2.0], recalls=[1.0, 0.5])
    for record in data["records"]:
        record.update(quality_score=0.7, relevance={"mean": 0.5, "weighted": 0.4}, self_consistency=None,
                      labelled={"density": 0.5, "ap": 0.25, "recall@20": 1.0})
    return data


@pytest.mark.parametrize("key, value, message", [
    # a helper's review: impossible values were taken and compared (a negative latency, a bool as a
    # share, an AP of 5); a mistyped value said "expected a objective value"
    ("latency", -1, r"'records\[0\]\.latency': expected a number >= 0 of at most 1e\+12, found -1$"),
    ("metrics.coverage", True, r"'records\[0\]\.metrics\.coverage': expected a number in \[0, 1\], found true$"),
    ("labelled.ap", 5, r"'records\[0\]\.labelled\.ap': expected a number in \[0, 1\], found 5$"),
    ("objective", "x", r"'records\[0\]\.objective': expected a finite number of at most 1e\+12 in size, found 'x'$"),
    ("objective", True, r"'records\[0\]\.objective': expected a finite number .*, found true$"),
    ("passed", 1, r"'records\[0\]\.passed': expected true or false, found 1$"),
    ("tokens", 1.5, r"'records\[0\]\.tokens': expected an integer >= 0 of at most 1e\+12, found 1\.5$"),
    ("tokens", -3, r"'records\[0\]\.tokens': expected an integer >= 0"),
    ("gold.distractors", 0.5, r"'records\[0\]\.gold\.distractors': expected an integer >= 0"),
    ("gold.precision", -0.1, r"'records\[0\]\.gold\.precision': expected a number in \[0, 1\], found -0\.1$"),
    ("gold.recall", None, r"'records\[0\]\.gold\.recall': expected a number in \[0, 1\], found null$"),
    ("quality_score", True, r"'records\[0\]\.quality_score': expected a number in \[0, 1\], found true$"),
    ("quality_score", "0.7", r"'records\[0\]\.quality_score': expected a number in \[0, 1\], found '0\.7'$"),
    ("relevance.weighted", 1.5, r"'records\[0\]\.relevance\.weighted': expected a number in \[0, 1\]"),
    ("self_consistency", -1, r"'records\[0\]\.self_consistency': expected a number in \[0, 1\]"),
    ("labelled", [0.5], r"'records\[0\]\.labelled': expected null or an object, found list"),
    ("labelled.recall@20", float("inf"), r"'records\[0\]\.labelled\.recall@20': expected a number in \[0, 1\]"),
])
def test_a_baseline_value_outside_its_domain_is_refused(tmp_path, key, value, message):
    import json

    data = _labelled_result()
    *parents, name = key.split(".")
    target = data["records"][0]
    for parent in parents:
        target = target[parent]
    target[name] = value
    path = tmp_path / "base.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ctxselect.InputError, match=r"^" + str(tmp_path) + r"/base\.json, field " + message):
        rg.load_result(path)


def test_the_domains_take_what_bench_writes(tmp_path):
    """Shares at 0 and 1, an article metric absent or null (an older result, no paraphrases),
    a negative objective, whole numbers written as floats, a share one rounding past 1."""
    import json

    data = _labelled_result()
    first, second = data["records"]
    first.update(objective=-3.5, tokens=12.0, latency=0.0, quality_score=1.0 + 1e-12)
    first["metrics"] = {m: 0.0 for m in rg.METRIC_NAMES}
    first["gold"]["distractors"] = 2.0
    for name in ("quality_score", "relevance", "labelled", "self_consistency"):
        second.pop(name)
    path = tmp_path / "base.json"
    path.write_text(json.dumps(data))
    assert rg.load_result(path)["records"] == data["records"]


def test_malformed_baseline_json_names_its_line_and_column(tmp_path):
    """It said "not a JSON bench result ... found 'JSONDecodeError'", without where."""
    path = tmp_path / "base.json"
    path.write_text('{\n  "methods": ["greedy"],\n  "records": [1,]\n}\n')
    with pytest.raises(ctxselect.InputError) as err:
        rg.load_result(path)
    assert str(err.value) == (f"{path}, line 3, field '--baseline': malformed JSON at column 17 (Expecting value); "
                              "expected the output of ctxselect bench --json")


def test_a_baseline_that_is_no_regular_file_is_refused_before_it_is_read(tmp_path, monkeypatch):
    """`--baseline` at a FIFO waited for a writer for ever, at /dev/zero read until memory ran out
    (the requirements file had the check; both now read through model.files.read_small_file)."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    fifo = tmp_path / "base.json"
    os.mkfifo(fifo)
    code = "import sys; from ctxselect.evaluate.regression import load_result; load_result(sys.argv[1])"
    root = str(Path(__file__).resolve().parents[2])
    done = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": root})  # a hang is a TimeoutExpired, not a stuck run
    assert done.stderr.strip().endswith(f"InputError: {fifo}, field '--baseline': not a regular file; expected a "
                                        "bench result file (ctxselect bench --json)"), done.stderr
    zero = tmp_path / "zero.json"
    zero.symlink_to("/dev/zero")
    monkeypatch.setattr(rg, "MAX_BASELINE_BYTES", 100)  # before the check, /dev/zero hit this cap (or memory)
    for path in (zero, tmp_path):
        with pytest.raises(ctxselect.InputError, match=r"field '--baseline': not a regular file"):
            rg.load_result(path)
    big = tmp_path / "big.json"
    big.write_text('{"methods": [], "records": []}' + " " * 100)
    with pytest.raises(ctxselect.InputError, match=r"big\.json, field '--baseline': larger than 100 bytes$"):
        rg.load_result(big)
    with pytest.raises(ctxselect.InputError, match=r"none\.json, field '--baseline': cannot open baseline: No such"):
        rg.load_result(tmp_path / "none.json")
    bom = tmp_path / "bom.json"
    bom.write_bytes(b'\xef\xbb\xbf{"methods": [], "records": []}')
    assert rg.load_result(bom) == {"methods": [], "records": []}
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'{"methods": [],\n "records": [], "x": "caf\xe9"}')
    with pytest.raises(ctxselect.InputError, match=r"latin\.json, line 2, field '--baseline': not UTF-8 text \(byte "
                                                   r"0xe9\)$"):
        rg.load_result(latin)

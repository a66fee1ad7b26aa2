"""No echo (issue 11, item 2): no output contains text or field values of a chunk the query's scopes
do not admit. Secrets are planted in inadmissible chunks (text, conflict field value, a figure in a
sentence that mirrors an admissible chunk's, a near-duplicate's numbers, document and version
labels), and every output of the API and of every command, in every format, is scanned.

Chunk ids may appear (ids are not content).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

import ctxselect
from ctxselect.cli.core import app
from ctxselect.features.contradictions import conflict_pairs, pair_conflicts
from ctxselect.packing import pack
from ctxselect.selection.api import prepare

SECRETS = ("SECRET-7f3a", "FIELDSECRET-42", "7,777,777", "VSECRET-9", "DOCSECRET-5", "8,675,309")

SENTENCE = "The storm outage in the northern district affected {} people according to the utility report"
DRIFT = ("Crews restored power to {} homes on the east side after the storm and the hotline answered "
         "calls for the rest of the week while the repair teams worked through the night")


def _chunk(cid, text, scope="public", **extra):
    return {"id": cid, "source": "news", "tokens": 40, "relevance": 0.8, "scope": scope, "text": text,
            "timestamp": "2025-01-01T00:00:00Z", **extra}


def planted_candidates() -> list[dict]:
    return [
        # admissible chunks
        _chunk("a1", SENTENCE.format("3,559"), fields={"count": "3559"}, doc_id="manual", version="v2"),
        _chunk("a2", SENTENCE.format("3,559") + " and the mayor", fields={"count": "3559"}),
        _chunk("a3", "Another count put the figure at 7777777 people in the wider region, a rough estimate",
               relevance=0.4),
        _chunk("a4", DRIFT.format("1,200"), relevance=0.7),
        _chunk("a5", "Shelters opened in the school gym and the library for families without heat", relevance=0.6),
        # inadmissible chunks: every value below is a secret
        _chunk("s1", SENTENCE.format("7,777,777") + " SECRET-7f3a", scope="internal",
               fields={"count": "FIELDSECRET-42"}, doc_id="manual", version="VSECRET-9", relevance=0.95),
        _chunk("s2", DRIFT.format("8,675,309") + " SECRET-7f3a", scope="internal", relevance=0.9),
        _chunk("s3", "SECRET-7f3a internal note on the outage budget", scope="internal",
               doc_id="DOCSECRET-5", version="VSECRET-9", fields={"count": "FIELDSECRET-42"}),
        _chunk("s4", "SECRET-7f3a internal note, second draft", scope="internal",
               doc_id="DOCSECRET-5", version="v1"),
    ]


# free-text claims counted in κ, so claim reasons reach the conflict list and the gate's message
REQUIREMENTS = {"token_budget": 200, "allowed_scopes": ["public"], "conflict_fields": {"count": 0.5},
                "now": "2025-01-02T00:00:00Z", "gate": {"max_contradiction_density": 0.0}, "contradictions": "all"}
QUERY = "how many people did the storm outage affect"


def assert_no_secret(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{where} echoes {secret!r}: {text[:2000]}"


def test_inadmissible_chunks_do_conflict_so_the_scan_is_meaningful():
    """The planted chunks do reach the conflict reasons (as ids and fields), so a scan that finds
    no secret proves the values are withheld, not that nothing was compared."""
    report = ctxselect.inspect(planted_candidates(), REQUIREMENTS)
    by_pair = {(p.a, p.b): p.reasons for p in report.conflicting_pairs}
    assert any("field count: values differ" in r and "`s1`" in r for r in by_pair[("a1", "s1")])
    assert any(r.startswith("versions of one document differ") for r in by_pair[("a1", "s1")])
    assert any(r.startswith("claim: a stated figure differs") for r in by_pair[("a1", "s1")])
    assert any("`s3` and `s4` are outside" in r for r in by_pair[("s3", "s4")])
    assert not report.passed
    # admissible pairs are quoted as before
    packed = pack(planted_candidates(), REQUIREMENTS)
    assert pair_conflicts(packed, 0, 1) == []
    public = pack([c for c in planted_candidates() if c["scope"] == "public"]
                  + [dict(planted_candidates()[5], scope="public", id="p1")], REQUIREMENTS)
    quoted = {(p.a, p.b): p.reasons for p in conflict_pairs(public)}
    assert "field count: '3559' vs 'FIELDSECRET-42'" in quoted[("a1", "p1")]
    assert "claim: '3,559 people' vs '7,777,777 people'" in quoted[("a1", "p1")]


def test_claim_conflicts_listed_beside_kappa_echo_nothing_inadmissible():
    """With article 000's κ (contradictions="fields", the default) claim conflicts are listed in
    ``claim_conflicts``: the same reasons, withheld the same way."""
    report = ctxselect.inspect(planted_candidates(), dict(REQUIREMENTS, contradictions="fields"))
    assert report.claim_conflict_count >= 1  # precondition: the list is not empty
    reasons = [r for p in report.claim_conflicts for r in p.reasons]
    assert any(r.startswith("claim: a stated figure differs") for r in reasons), reasons
    assert_no_secret(json.dumps(report.to_dict()), "inspect().to_dict() with contradictions='fields'")


def test_inspect_echoes_nothing_inadmissible():
    report = ctxselect.inspect(planted_candidates(), REQUIREMENTS)
    assert_no_secret(json.dumps(report.to_dict()), "inspect().to_dict()")
    for failure in report.failures:
        assert_no_secret(str(failure.message), f"gate failure {failure.condition}")
    for pair in report.conflicting_pairs:
        assert_no_secret(repr(pair), "ConflictPair")


@pytest.mark.parametrize("method", ["optimal", "greedy", "topk", "density", "mmr"])
@pytest.mark.parametrize("gate", [True, False])
@pytest.mark.parametrize("corroborate", [True, False])
@pytest.mark.parametrize("on_unresolved", ["drop_both", "keep_stronger", "keep_both"])
def test_select_echoes_nothing_inadmissible(method, gate, corroborate, on_unresolved):
    selection = ctxselect.select(planted_candidates(), REQUIREMENTS, QUERY, method, enforce_gate=gate,
                                 resolve_by_corroboration=corroborate, on_unresolved=on_unresolved)
    assert not {"s1", "s2", "s3", "s4"} & set(selection.ids)
    assert_no_secret(json.dumps(selection.to_dict()), f"select({method}).to_dict()")


@pytest.mark.parametrize("on_unresolved", ["drop_both", "keep_stronger", "keep_both"])
def test_corroboration_and_drift_reasons_withhold_inadmissible_figures(on_unresolved):
    """Reasons built by corroboration and by describe_conflict for a pair with an inadmissible
    chunk: an admissible supporter (a3, "7777777 people") lets s1's side be weighed."""
    problem = prepare(planted_candidates(), REQUIREMENTS, QUERY, on_unresolved=on_unresolved)
    texts = list(problem.ineligible_reason.values()) + [v for c in problem.unresolved for v in c.values]
    assert_no_secret(" | ".join(texts), "corroboration reasons")
    from ctxselect.selection.explain import describe_conflict
    n = problem.n
    for i in range(n):
        for j in range(n):
            if i != j:
                assert_no_secret(describe_conflict(problem, i, j), f"describe_conflict({i}, {j})")


@pytest.mark.parametrize("on_unresolved", ["drop_both", "keep_stronger", "keep_both"])
def test_ids_with_braces_reach_the_reasons_verbatim(on_unresolved):
    candidates = planted_candidates()
    for c in candidates:
        c["id"] = c["id"] + "{x}"
    selection = ctxselect.select(candidates, REQUIREMENTS, QUERY, on_unresolved=on_unresolved)
    reasons = list(selection.excluded.values())
    plain = [c["id"][:-3] for c in candidates]
    assert any("{x}`" in r for r in reasons)
    assert not any(f"`{p}`" in r for r in reasons for p in plain)  # no format() ever consumed the braces
    assert all(i.endswith("{x}") for u in selection.unresolved for i in u["ids"])


@pytest.fixture
def dump(tmp_path):
    path = tmp_path / "planted.jsonl"
    line = {"query_id": "q1", "query": QUERY, "requirements": REQUIREMENTS, "candidates": planted_candidates()}
    with_selected = dict(line, query_id="q2", selected=["a1", "s1", "s2", "s3", "a4"])
    path.write_text(json.dumps(line) + "\n" + json.dumps(with_selected) + "\n", encoding="utf-8")
    return path


CLI_CALLS = [
    ["inspect", "{dump}"],
    ["inspect", "{dump}", "--json"],
    ["select", "{dump}"],
    ["select", "{dump}", "--json"],
    ["select", "{dump}", "--excluded"],
    ["select", "{dump}", "--excluded", "--method", "greedy"],
    ["select", "{dump}", "--json", "--no-gate", "--method", "mmr"],
    ["bench", "{dump}", "--json"],
    ["bench", "{dump}"],
    ["bench", "{dump}", "--markdown"],
    ["compare", "{dump}", "--query", "q1"],
    ["compare", "{dump}", "--query", "q1", "--json"],
    ["compare", "{dump}", "--query", "q2", "--a", "topk", "--b", "density"],
]


@pytest.mark.parametrize("call", CLI_CALLS, ids=[" ".join(c[:1] + c[2:]) for c in CLI_CALLS])
def test_cli_echoes_nothing_inadmissible(call, dump):
    result = CliRunner().invoke(app, [part.format(dump=dump) for part in call])
    assert result.exit_code in (0, 1), result.output
    assert_no_secret(result.output, " ".join(call))
    stderr = getattr(result, "stderr", "") if result.stderr_bytes is not None else ""
    assert_no_secret(stderr, " ".join(call) + " (stderr)")


def test_ablate_writes_nothing_inadmissible(tmp_path):
    """q1 admits only public chunks; q2 admits internal ones too, so its selection (borrowed by
    q1's ``shuffled`` variant) may hold the planted chunks."""
    path, out = tmp_path / "two.jsonl", tmp_path / "variants.jsonl"
    lines = [{"query_id": "q1", "query": QUERY, "requirements": REQUIREMENTS, "candidates": planted_candidates()},
             {"query_id": "q2", "query": QUERY, "candidates": planted_candidates(),
              "requirements": dict(REQUIREMENTS, allowed_scopes=["public", "internal"])}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    result = CliRunner().invoke(app, ["ablate", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert_no_secret(result.output, "ablate")
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert any(r["query_id"] == "q2" and "SECRET-7f3a" in json.dumps(r) for r in rows)  # q2 may quote them
    for row in rows:
        if row["query_id"] == "q1":
            assert_no_secret(json.dumps(row), f"ablate --out, q1 {row['variant']}")


def test_a_selected_list_naming_inadmissible_chunks_is_scored_without_echo():
    packed = pack(planted_candidates(), REQUIREMENTS)
    mask = np.ones(packed.n, dtype=bool)
    from ctxselect.quality.report import report_for
    report = report_for(packed, mask)
    assert report.inadmissible_ids == ["s1", "s2", "s3", "s4"]
    assert_no_secret(json.dumps(report.to_dict()), "report_for")


def test_compare_does_not_name_the_source_of_inadmissible_chunks(tmp_path):
    candidates = planted_candidates()
    for c in candidates:
        if c["scope"] == "internal":
            c["source"] = "SRCSECRET-1"
    path = tmp_path / "sources.jsonl"
    path.write_text(json.dumps({"query_id": "q1", "query": QUERY, "requirements": REQUIREMENTS,
                                "candidates": candidates}) + "\n", encoding="utf-8")
    for call in (["compare", str(path), "--query", "q1"], ["compare", str(path), "--query", "q1", "--json"],
                 ["select", str(path), "--excluded"], ["inspect", str(path)], ["bench", str(path)]):
        result = CliRunner().invoke(app, call)
        assert "SRCSECRET-1" not in result.output, " ".join(call)

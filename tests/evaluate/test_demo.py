"""The demonstration dump (evaluate/demo.py): deterministic, the bundled examples/demo.jsonl is
its output, and the failure modes it promises are present in the stated proportions."""

import json

import ctxselect
from ctxselect.evaluate.demo import TOPICS, demo_queries
from tests.conftest import EXAMPLES


def test_the_bundled_demo_is_the_generators_output():
    lines = [json.loads(line) for line in (EXAMPLES / "demo.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines == [q.to_dict() for q in demo_queries()]
    assert [q.to_dict() for q in demo_queries(seed=1)] != lines  # the seed matters


def test_the_failure_modes_are_there_in_realistic_proportions():
    queries = demo_queries()
    assert len(queries) == 40 and {q.extra["meta"]["topic"] for q in queries} == {t[0] for t in TOPICS}

    def share(suffix):
        return sum(any(c.id.endswith(suffix) for c in q.candidates) for q in queries) / len(queries)

    assert 0.5 <= share("-policy-v2") <= 0.8  # superseded versions
    assert 0.3 <= share("-forum") <= 0.7  # conflicting figures
    assert 0.2 <= share("-steps-faq") <= 0.6  # near-duplicates
    assert 0.2 <= share("-internal") <= 0.6  # chunks the caller may not see
    for q in queries:
        by_id = {c.id: c for c in q.candidates}
        assert set(q.gold) <= set(by_id) and set(q.selected) <= set(by_id)
        status = next(c for c in q.candidates if c.source == "status")
        assert status.relevance < max(c.relevance for c in q.candidates)  # ranked low: starved by top-k
        sent = sum(by_id[i].tokens for i in q.selected)
        assert sent <= q.requirements.token_budget
        ranked = sorted(q.candidates, key=lambda c: -c.relevance)
        assert q.selected[0] == ranked[0].id  # plain top-k, blind to scopes and versions
    blind = [q for q in queries if any(i.endswith("-internal") for i in q.selected)]
    assert blind, "the top-k assembler never sent an internal chunk: the demo would not show it"


def test_the_optimizer_passes_where_greedy_fails_on_the_demo():
    """Not a tuned result but a property of the demo's design: every query can pass the gate, the
    optimizer's context passes on every one, greedy's on fewer."""
    queries = demo_queries(queries=10)
    optimal = [ctxselect.select(q.candidates, q.requirements, q.query) for q in queries]
    greedy = [ctxselect.select(q.candidates, q.requirements, q.query, "greedy") for q in queries]
    assert all(s.report.passed for s in optimal)
    assert sum(s.report.passed for s in greedy) < len(queries)


def test_the_demo_ships_in_the_package_for_pip_users(tmp_path):
    """`ctxselect gen --example demo OUT` writes the same dump as the repository's examples/demo.jsonl."""
    from typer.testing import CliRunner

    from ctxselect.cli.core import app
    from ctxselect.evaluate.examples import example_path

    assert example_path("demo").read_bytes() == (EXAMPLES / "demo.jsonl").read_bytes()
    out = tmp_path / "demo.jsonl"
    assert CliRunner().invoke(app, ["gen", "--example", "demo", str(out)]).exit_code == 0
    assert out.read_bytes() == (EXAMPLES / "demo.jsonl").read_bytes()

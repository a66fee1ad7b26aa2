"""`ctxselect audit` on traces with prompts: RAGScope's exact substring rule by default, fuzzy
matching only with --fuzzy (and --fuzzy-threshold only beside it)."""

import json

from typer.testing import CliRunner

from ctxselect.cli.core import app

runner = CliRunner()

CHUNKS = [{"id": "new", "rank": 1, "tokens": 10, "relevance": 0.9,
           "text": "Refunds are possible within 30 days of purchase."},
          {"id": "old", "rank": 2, "tokens": 10, "relevance": 0.8,
           "text": "Refunds are possible within 14 days of purchase."},
          {"id": "ship", "rank": 3, "tokens": 10, "relevance": 0.7,
           "text": "Shipping is free above fifty dollars."},
          {"id": "gift", "rank": 4, "tokens": 10, "relevance": 0.6, "text": "Gift cards never expire."}]
# "new" verbatim, "ship" reformatted by the assembler, "old" and "gift" not in the prompt
PROMPT = ("Context:\n- Refunds are possible within 30 days of purchase.\n"
          "- shipping is  free above fifty dollars!\nQuestion: refund window?")


def traces_file(tmp_path):
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps({"trace_id": "t1", "chunks": CHUNKS, "prompts": [PROMPT]}) + "\n")
    return str(path)


def precision(*args):
    result = runner.invoke(app, ["audit", *args, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)[0]["subscores"]["precision"]["score"]


def test_audit_matches_exactly_by_default_and_fuzzily_on_request(tmp_path):
    path = traces_file(tmp_path)
    assert precision(path) == 25  # only the verbatim chunk, as RAGScope counts
    assert precision(path, "--fuzzy") == 50  # + the reformatted one; never the 14-day version
    assert precision(path, "--fuzzy", "--fuzzy-threshold", "100") == 25


def test_fuzzy_threshold_needs_fuzzy(tmp_path):
    result = runner.invoke(app, ["audit", traces_file(tmp_path), "--fuzzy-threshold", "80"])
    assert result.exit_code == 2
    assert result.stderr.strip() == "ctxselect: error: field '--fuzzy-threshold': applies only with --fuzzy"
    assert runner.invoke(app, ["audit", traces_file(tmp_path), "--fuzzy", "--fuzzy-threshold", "101"]).exit_code == 2

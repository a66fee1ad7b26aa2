"""`ctxselect audit` on traces with prompts: RAGScope's exact substring rule by default, fuzzy
matching only with --fuzzy (and --fuzzy-threshold only beside it)."""

import json

import pytest
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
    result = runner.invoke(app, ["audit", *args, "--json", "--fail-on", "never"])
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


def test_fail_on_makes_the_exit_code_follow_the_verdict_as_inspect_does(tmp_path):
    """Exit 1 when a trace gets a verdict --fail-on names (default: FAIL), like inspect's exit 1
    on a failed gate; the JSON and the table agree; bad input stays 2."""
    path = tmp_path / "traces.jsonl"
    good = [{"id": f"c{k}", "rank": k + 1, "tokens": 10, "relevance": 0.9 - k / 10, "text": f"fact number {k} here"}
            for k in range(3)]
    prompt = "Context:\n" + "\n".join(c["text"] for c in good) + "\nQuestion: facts?"
    lines = [{"trace_id": "bad", "chunks": CHUNKS, "prompts": [PROMPT]},
             {"trace_id": "good", "chunks": good, "prompts": [prompt]}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    labels = [r["label"] for r in json.loads(runner.invoke(app, ["audit", str(path), "--json", "--fail-on",
                                                                 "never"]).stdout)]
    assert "FAIL" in labels or "WARN" in labels, labels
    for fail_on, bad in (("fail", {"FAIL"}), ("warn", {"FAIL", "WARN"}), ("never", set())):
        for extra in ([], ["--json"]):
            result = runner.invoke(app, ["audit", str(path), "--fail-on", fail_on, *extra])
            expected = 1 if bad & set(labels) else 0
            assert result.exit_code == expected, (fail_on, extra, labels, result.output)
            assert ("traces" in result.stderr) == bool(expected)
    default = runner.invoke(app, ["audit", str(path)])
    assert default.exit_code == (1 if "FAIL" in labels else 0)
    path.write_text(json.dumps(lines[1]) + "\n")  # one good trace only
    good_labels = [r["label"] for r in json.loads(runner.invoke(app, ["audit", str(path), "--json"]).stdout)]
    assert runner.invoke(app, ["audit", str(path)]).exit_code == (1 if "FAIL" in good_labels else 0)
    assert runner.invoke(app, ["audit", str(path), "--fail-on", "sometimes"]).exit_code == 2


OBSERVED = [{"id": "a", "rank_retrieval": 1, "tokens": 10, "in_context": True, "context_position": 0}]


def audit_lines(tmp_path, *lines):
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return runner.invoke(app, ["audit", str(path), "--json", "--fail-on", "never"])


@pytest.mark.parametrize("lines, message", [
    ([{"trace_id": "t", "chunks": [{"id": "a", "text": "alpha"}], "prompt": ["Context: alpha"]}],
     "traces.jsonl, line 1, field 'prompt': unknown trace field; expected one of trace_id, name, chunks, prompts"),
    ([{"trace_id": "t", "chunks": [{"id": "a", "tokens": 3, "in_contxt": True}]}],
     "traces.jsonl, line 1, query 't', candidate 'a', field 'in_contxt': unknown chunk field; expected one of id, "),
    ([{"trace_id": t, "chunks": OBSERVED} for t in ("t", "u", "t")],
     "traces.jsonl, line 3, query 't', field 'trace_id': the trace id of line 1 too; expected one line per trace"),
    ([{"trace_id": "t", "name": "u", "chunks": OBSERVED}],
     "line 1, field 'name': `trace_id` and `name` both given; they name one trace"),
    ([{"trace_id": None, "chunks": OBSERVED}], "line 1, field 'trace_id': expected a non-empty string, found null"),
    ([{"trace_id": "t", "chunks": OBSERVED * 2}], "line 1, query 't', candidate 'a', field 'id': chunk #1 repeats"),
    ([{"trace_id": "t", "chunks": [{"id": "a", "text": "alpha"}, {"id": "a", "text": "beta"}], "prompts": ["alpha"]}],
     "line 1, query 't', candidate 'a', field 'id': chunk #1 repeats"),
])
def test_unknown_keys_two_ids_and_a_repeated_trace_id_are_one_located_line(tmp_path, lines, message):
    """A misspelt `prompts` audited the chunks untraced (WARN), a misspelt `in_context` read the
    chunk as unused (FAIL), a repeated trace id gave two results of one name, a null id became
    'None'. Each is now refused in one line naming the line, trace and key (listing the valid keys)."""
    result = audit_lines(tmp_path, *lines)
    assert result.exit_code == 2, (message, result.output)
    assert result.stderr.count("\n") == 1 and message in result.stderr, (message, result.stderr)


def test_a_trace_may_be_named_by_name_as_in_ragscope_vectors_or_by_its_line(tmp_path):
    named = audit_lines(tmp_path, {"name": "n", "chunks": OBSERVED}, {"chunks": OBSERVED})
    assert [r["trace_id"] for r in json.loads(named.stdout)] == ["n", "line 2"]


def test_audit_refuses_false_tokens_instead_of_reading_0(tmp_path):
    """`tokens: false` was read as 0: efficiency 0, '100% of retrieved tokens never reached the LLM'."""
    line = {"trace_id": "t", "prompts": ["alpha beta gamma. delta"],
            "chunks": [{"id": "a", "text": "alpha beta gamma", "tokens": False, "relevance": 0.9},
                       {"id": "b", "text": "zzz", "tokens": 40, "relevance": 0.1}]}
    path = tmp_path / "trace.jsonl"
    path.write_text(json.dumps(line) + "\n")
    result = runner.invoke(app, ["audit", "--json", str(path)])
    assert result.exit_code == 2, result.output
    assert result.stderr == (f"ctxselect: error: {path}, line 1, query 't', candidate 'a', field 'tokens': "
                             "expected an integer >= 0 up to 1,000,000,000,000, found false\n")

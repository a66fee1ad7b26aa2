"""Requirements files and --budget (issue 15.7): the precedence (budget over the file over the dump),
TOML and JSON read strictly, and every bad file a located InputError."""

from __future__ import annotations

import json

import pytest

import ctxselect
from ctxselect.errors import InputError
from ctxselect.model.overrides import RequirementOverrides, read_requirements_file
from ctxselect.model.requirements import Requirements
from tests.conftest import EXAMPLES

EXAMPLE = EXAMPLES / "support_desk.jsonl"
POLICY_TOML = """
required_sources = ["policy"]
allowed_scopes = ["public"]
now = 2026-11-01T00:00:00Z

[gate]
min_coverage = 0.5
"""


def queries():
    return list(ctxselect.read_dump(EXAMPLE))


def test_budget_alone_changes_only_the_budget():
    for query in queries():
        changed = RequirementOverrides.load(None, 123).apply(query)
        assert changed.requirements.token_budget == 123
        assert {**changed.requirements.to_dict(), "token_budget": query.requirements.token_budget} == \
            query.requirements.to_dict()
        assert changed.candidates is query.candidates and changed.query_id == query.query_id


def test_a_file_without_a_budget_replaces_everything_else_and_keeps_each_budget(tmp_path):
    path = tmp_path / "req.toml"
    path.write_text(POLICY_TOML)
    overrides = RequirementOverrides.load(path)
    budgets = set()
    for query in queries():
        changed = overrides.apply(query).requirements
        budgets.add(changed.token_budget)
        assert changed.token_budget == query.requirements.token_budget
        assert changed.to_dict() == {"token_budget": query.requirements.token_budget,
                                     "required_sources": {"policy": 1}, "allowed_scopes": ["public"],
                                     "now": 1793491200.0, "gate": {"min_coverage": 0.5}}
        assert "required_aspects" not in changed.to_dict()  # replaced whole, not merged
    assert budgets == {600, 400, 500}


def test_the_budget_option_beats_the_file_and_the_file_beats_the_dump(tmp_path):
    path = tmp_path / "req.json"
    path.write_text(json.dumps({"requirements": {"budget": 77, "max_chunks": 2}}))
    for budget, expected in ((None, 77), (9, 9)):
        overrides = RequirementOverrides.load(path, budget)
        for query in queries():
            assert overrides.apply(query).requirements == Requirements(token_budget=expected, max_chunks=2)


def test_no_override_is_the_query_itself():
    query = queries()[0]
    assert RequirementOverrides.load().apply(query) is query


@pytest.mark.parametrize("name,content,message", [
    ("req.toml", b"token_budget = 5\nnow = \"caf\xe9\"\n",
     "req.toml, line 2, field '--requirements': not UTF-8 text (byte 0xe9)"),
    ("req.toml", b"token_budget = \n", "req.toml: malformed TOML (Invalid value (at line 1, column 16))"),
    ("req.json", b'{"token_budget": 5,\n "token_budget": 6}', "req.json: duplicate key 'token_budget'"),
    ("req.json", b'{"token_budget": NaN}', "req.json: malformed JSON (NaN is not valid JSON)"),
    ("req.json", b'[1]', "req.json: expected an object of requirements, found list"),
    ("req.toml", b"bogus = 1\n", "req.toml, field 'requirements.bogus': unknown requirement"),
    ("req.toml", b"token_budget = 0\n", "req.toml, field 'token_budget': expected a positive integer"),
    ("req.toml", b"[gate]\nmin_coverage = 2.0\n", "req.toml, field 'gate.min_coverage'"),
    # a weight's name was checked by select() only: the error named the dump's first query, not the file
    ("req.toml", b"[weights]\nsharpen = 2\nbogus = 1\n", "req.toml, field 'weights.bogus': unknown objective weight; "
                                                       "expected one of relevance, coverage, "),
    ("req.json", b'{"weights": {"relevance": -1}}', "req.json, field 'weights.relevance': expected a number in [0, "),
    ("req.json", b'{"weights": [1]}', "req.json, field 'weights': expected an object of objective weights"),
    ("req.yaml", b"token_budget: 5\n", "req.yaml, field '--requirements': unknown kind of requirements file; "
                                       "expected a .toml or .json file"),
])
def test_bad_requirements_files_are_located(tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        RequirementOverrides.load(path)
    assert str(info.value).startswith(str(tmp_path)) and message in str(info.value), str(info.value)


def test_a_missing_file_and_a_byte_order_mark(tmp_path):
    with pytest.raises(InputError, match="none.toml, field '--requirements': cannot open requirements file: No such"):
        read_requirements_file(tmp_path / "none.toml")
    path = tmp_path / "bom.json"
    path.write_bytes(b'\xef\xbb\xbf{"token_budget": 5}')
    assert read_requirements_file(path) == {"token_budget": 5}


def test_deep_nesting_a_device_and_a_huge_file_are_one_line_errors(tmp_path, monkeypatch):
    # a helper's hostile hunt: 500 nested TOML arrays raised RecursionError (a traceback), /dev/zero was read
    # until memory ran out
    import ctxselect.model.overrides as overrides

    deep = tmp_path / "deep.toml"
    deep.write_text("x = " + "[" * 500 + "1" + "]" * 500 + "\n")
    tables = tmp_path / "tables.toml"
    tables.write_text("x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n")
    for path in (deep, tables):
        with pytest.raises(InputError, match=r"\.toml: TOML nested too deeply$"):
            read_requirements_file(path)
    zero = tmp_path / "zero.toml"
    zero.symlink_to("/dev/zero")
    with pytest.raises(InputError, match=r"zero\.toml, field '--requirements': not a regular file"):
        read_requirements_file(zero)
    big = tmp_path / "big.json"
    big.write_text('{"token_budget": 5}' + " " * 200)
    monkeypatch.setattr(overrides, "MAX_REQUIREMENTS_BYTES", 100)
    with pytest.raises(InputError, match=r"big\.json, field '--requirements': larger than 100 bytes"):
        read_requirements_file(big)

"""The message formatter of ctxselect.errors: it describes any value, briefly, and never fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

import ctxselect
from ctxselect.cli.core import app
from ctxselect.errors import InputError, describe_value
from tests.conftest import ROOT


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


class _Unprintable:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize("value, expected", [
    (_nested(5000), "list [[[[[[...]]]]]]"),
    (10 ** 5000, "an integer of 16,610 bits (about 5,001 digits)"),
    (-(10 ** 5000), "a negative integer of 16,610 bits (about 5,001 digits)"),
    ({"a": [1, {"b": _nested(50)}]}, "dict {'a': [1, {'b': [[[...]]]}]}"),
    (_Unprintable(), "_Unprintable (cannot be shown)"),
    ([True, None, 1.5], "list [True, None, 1.5]"),
    (12345, "12345"),
], ids=["deep", "huge-int", "huge-negative-int", "deep-in-dict", "repr-raises", "scalars", "small-int"])
def test_describe_value_is_short_and_total(value, expected):
    assert describe_value(value) == expected


@pytest.mark.parametrize("value", ["x" * 10 ** 7, b"y" * 10 ** 7, np.zeros(10 ** 7), [0] * 10 ** 7,
                                   _nested(100_000), {i: _nested(2000) for i in range(1000)}],
                         ids=["str", "bytes", "ndarray", "list", "deep", "dict-of-deep"])
def test_describe_value_of_something_huge_is_at_most_the_limit(value):
    assert 0 < len(describe_value(value)) <= 60


@pytest.mark.parametrize("field", ["id", "relevance", "tokens", "timestamp", "rank", "source", "scope", "text"])
def test_select_names_a_huge_integer_by_its_size(field):
    cand = {"id": "a", "relevance": 0.5, "tokens": 5, field: 10 ** 5000}
    with pytest.raises(InputError, match=r"field '" + field + r"'.*an integer of 16,610 bits"):
        ctxselect.select([cand], {"token_budget": 10}, "q", "greedy")


@pytest.mark.parametrize("field", ["id", "relevance", "tokens", "text", "fields"])
def test_select_names_a_value_nested_too_deep_to_repr(field):
    cand = {"id": "a", "relevance": 0.5, "tokens": 5, field: _nested(5000)}
    with pytest.raises(InputError, match=r"field '" + field + r"'.*list \[\[\["):
        ctxselect.select([cand], {"token_budget": 10})


def test_inspect_and_trace_name_a_huge_integer():
    with pytest.raises(InputError, match="field 'tokens'.*an integer of 16,610 bits"):
        ctxselect.inspect([{"id": "a", "relevance": 0.5, "tokens": 10 ** 5000}], {"token_budget": 10})
    with pytest.raises(InputError, match="field 'rank'.*an integer of 16,610 bits"):
        ctxselect.trace([{"id": "a", "text": "x", "rank": 10 ** 5000}], "x")


def test_plain_reason_replaces_pythons_advice_on_integer_digits():
    from ctxselect.errors import plain_reason

    with pytest.raises(ValueError) as err:
        json.loads("1" * 5000)
    assert plain_reason(err.value) == "an integer of 5,000 digits; at most 4,300 digits are read"
    assert plain_reason(ValueError("other")) == "other"


def _deep_dump(tmp_path) -> str:
    n = 965
    line = json.dumps({"query_id": "q", "requirements": {"token_budget": 10},
                       "candidates": [{"id": "c", "relevance": 0.5, "tokens": 1, "fields": {"x": "@"}}]})
    path = tmp_path / "deep.jsonl"
    path.write_text(line.replace('"@"', "[" * n + "]" * n) + "\n")
    return str(path)


def _big_int_dump(tmp_path) -> str:
    line = json.dumps({"query_id": "q", "requirements": {"token_budget": 10},
                       "candidates": [{"id": "c", "relevance": 0.5, "tokens": 1}]})
    path = tmp_path / "big.jsonl"
    path.write_text(line.replace('"tokens": 1', '"tokens": ' + "1" * 5000) + "\n")
    return str(path)


@pytest.mark.parametrize("command", [["select"], ["inspect"], ["bench", "--methods", "greedy"],
                                     ["ablate", "--out", "-"]])
def test_cli_commands_report_a_deep_value_in_one_line(tmp_path, command):
    """A real process (the reader's depth limit depends on the stack, deeper under pytest): the value
    just under the JSON reader's limit is read, and then described without a RecursionError."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "ctxselect", *command, _deep_dump(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "candidate 'c', field 'fields.x'" in done.stderr and "found list [[[" in done.stderr
    assert done.stderr.count("\n") == 1


def test_cli_says_what_an_integer_too_long_is_not_how_to_configure_python(tmp_path):
    result = CliRunner().invoke(app, ["select", _big_int_dump(tmp_path)])
    assert result.exit_code == 2
    assert "an integer of 5,000 digits; at most 4,300 digits are read" in result.stderr
    assert "set_int_max_str_digits" not in result.stderr


def test_requirements_and_baseline_files_with_an_integer_too_long(tmp_path):
    toml = tmp_path / "r.toml"
    toml.write_text("token_budget = " + "1" * 5000 + "\n")
    base = tmp_path / "base.json"
    base.write_text('{"methods": [], "records": [], "x": ' + "1" * 5000 + "}")
    dump = _deep_dump(tmp_path)
    for args in (["select", "--requirements", str(toml), dump],
                 ["bench", "--methods", "greedy", "--baseline", str(base), dump]):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "an integer of 5,000 digits" in result.stderr and "set_int_max_str_digits" not in result.stderr

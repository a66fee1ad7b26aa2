"""The ctxselect logger: silent unless configured; INFO says why a gate was relaxed or a context is
empty, DEBUG how long each stage took; no chunk text is ever logged."""

import logging

import ctxselect

SECRET = "SECRET-TEXT-OF-A-CHUNK"


def test_relaxed_and_empty_calls_are_logged_with_their_reasons(caplog):
    chunks = [{"id": "a", "source": "s", "relevance": 0.9, "tokens": 95, "text": SECRET}]
    with caplog.at_level(logging.DEBUG, logger="ctxselect"):
        ctxselect.select(chunks, {"token_budget": 100})
    infos = [r.getMessage() for r in caplog.records if r.levelno == logging.INFO]
    debugs = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG and r.name == "ctxselect"]
    assert len(infos) == 1 and infos[0].startswith("select(optimal): empty (empty context")
    assert "relaxed: gate" in infos[0] and "utilization ceiling (90 of the 100-token budget)" in infos[0]
    assert len(debugs) == 1 and " ms (pack " in debugs[0]
    assert all(SECRET not in r.getMessage() for r in caplog.records)


def test_a_call_that_meets_everything_logs_no_info(caplog):
    chunks = [{"id": "a", "source": "s", "relevance": 0.9, "tokens": 30, "text": "fine"}]
    with caplog.at_level(logging.INFO, logger="ctxselect"):
        sel = ctxselect.select(chunks, {"token_budget": 100})
    assert sel.relaxed == [] and not [r for r in caplog.records if r.name == "ctxselect"]

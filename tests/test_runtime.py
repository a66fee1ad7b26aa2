"""The collector paused for a select() call (ctxselect._runtime): no collection runs inside a call,
and the collector is left as the caller had it — after a return, an error, nested and concurrent
calls."""

import gc
import inspect
import sys
import threading

import pytest

import ctxselect
from ctxselect._runtime import collection_paused
from ctxselect.errors import InputError
from ctxselect.evaluate.generate import generate_queries


@pytest.fixture
def collector_on():
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_no_collection_runs_inside_a_call(collector_on):
    query = generate_queries(queries=1, candidates=1500, seed=3)[0]
    ctxselect.select(query.candidates, query.requirements, query.query)  # loads what a first call loads
    started = []
    body = inspect.unwrap(ctxselect.select).__code__

    def record(phase, info):  # a collection inside the call (the one owed after it is not)
        frame = sys._getframe()
        while frame is not None and frame.f_code is not body:
            frame = frame.f_back
        if phase == "start" and frame is not None:
            started.append(info["generation"])

    gc.collect()
    gc.callbacks.append(record)
    try:
        sel = ctxselect.select(query.candidates, query.requirements, query.query)
    finally:
        gc.callbacks.remove(record)
    assert sel.ids
    assert started == []  # without the pause: 5 collections of the youngest generation here
    assert gc.isenabled()


def test_the_collector_is_left_as_the_caller_had_it(collector_on):
    chunks = [{"id": "a", "source": "s", "tokens": 3, "relevance": 0.5, "text": "alpha"}]
    ctxselect.select(chunks, {"token_budget": 10})
    assert gc.isenabled()
    with pytest.raises(InputError):
        ctxselect.select(chunks, {"token_budget": -1})
    assert gc.isenabled()
    gc.disable()
    ctxselect.select(chunks, {"token_budget": 10})
    assert not gc.isenabled()  # the caller's pause is kept


def test_the_pause_ends_with_the_last_concurrent_call(collector_on):
    inside, release = threading.Event(), threading.Event()

    def other():
        with collection_paused():
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=other)
    with collection_paused():
        thread.start()
        assert inside.wait(10)
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread's call still runs
    release.set()
    thread.join(10)
    assert gc.isenabled()
    with collection_paused():
        with collection_paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


def test_select_keeps_its_signature_and_docstring():
    parameters = inspect.signature(ctxselect.select).parameters
    assert {"candidates", "requirements", "query", "method", "time_limit"} <= set(parameters)
    assert ctxselect.select.__doc__.lstrip().startswith("Choose the candidates")

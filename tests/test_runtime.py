"""The collector paused for a select() call (ctxselect._runtime): no collection runs inside a call,
and the collector is left as the caller had it — after a return, an error, nested and concurrent
calls."""

import gc
import inspect
import os
import sys
import threading
import warnings

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


def _paused_call_in_a_thread():
    """A thread whose call sits inside collection_paused() until ``release`` is set (not started):
    (inside, release, thread)."""
    inside, release = threading.Event(), threading.Event()

    def other():
        with collection_paused():
            inside.set()
            release.wait(10)

    return inside, release, threading.Thread(target=other)


def test_the_pause_ends_with_the_call_that_began_it(collector_on):
    """A call overlapping another thread's runs inside its pause; the pause ends with the call that
    began it, so threads that always have a call running still collect (with a pause counted to
    the last concurrent call, this fails: the collector stayed off)."""
    inside, release, thread = _paused_call_in_a_thread()
    with collection_paused():
        thread.start()
        assert inside.wait(10)
        assert not gc.isenabled()
    assert gc.isenabled()  # the other thread's call still runs, outside any pause now
    release.set()
    thread.join(10)
    assert gc.isenabled()
    with collection_paused():
        with collection_paused():
            pass
        assert not gc.isenabled()  # a nested call leaves the outer pause alone
    assert gc.isenabled()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_child_forked_during_another_threads_call_collects(collector_on):
    """The thread whose call paused the collector does not exist in a forked child: the child
    resumes it (without the fork handler its collector stayed off for good)."""
    inside, release, thread = _paused_call_in_a_thread()
    thread.start()
    try:
        assert inside.wait(10) and not gc.isenabled()
        read, write = os.pipe()
        with warnings.catch_warnings():  # Python 3.12+ warns of forking a process with threads
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid == 0:  # the child: report and leave at once
            try:
                with collection_paused():
                    pass
                os.write(write, b"1" if gc.isenabled() else b"0")
            finally:
                os._exit(0)
        os.close(write)
        reported = os.read(read, 1)
        os.close(read)
        os.waitpid(pid, 0)
    finally:
        release.set()
        thread.join(10)
    assert reported == b"1"
    assert gc.isenabled()


def test_select_keeps_its_signature_and_docstring():
    parameters = inspect.signature(ctxselect.select).parameters
    assert {"candidates", "requirements", "query", "method", "time_limit"} <= set(parameters)
    assert ctxselect.select.__doc__.lstrip().startswith("Choose the candidates")

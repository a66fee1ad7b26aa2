"""Two threads sharing one component, their calls forced into the order that showed one thread the
other's selection: A calls, B calls, then A reads."""

import threading


def a_calls_b_calls_a_reads(call, read, first, second):
    """``call(first)`` on thread A, then ``call(second)`` on thread B, then ``read()`` on A (and on B):
    what each thread reads, as ``(a, b)``."""
    a_called, b_called = threading.Event(), threading.Event()
    seen, errors = {}, []

    def a():
        try:
            call(first)
        finally:
            a_called.set()
        assert b_called.wait(60)
        seen["a"] = read()

    def b():
        assert a_called.wait(60)
        try:
            call(second)
            seen["b"] = read()
        finally:
            b_called.set()

    def guarded(target):
        def run():
            try:
                target()
            except BaseException as error:  # surfaced in the test's thread below
                errors.append(error)
        return run

    threads = [threading.Thread(target=guarded(t)) for t in (a, b)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    if errors:
        raise errors[0]
    return seen["a"], seen["b"]

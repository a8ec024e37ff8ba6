"""A pytest suite for tests/runners: one plain test and two deliberately
nondeterministic ones. Run under hvrun:

    hvrun run --verify -- python3 -m pytest -q -p no:cacheprovider

test_lost_update: four threads read, call a function, then write back a
shared counter, with the interpreter told to switch threads as often as it
can (it may at the call); natively updates are lost in most runs. Under hvrun the threads switch only at
deterministic points (the interpreter's switch requests are timed waits on
the logical clock, which a computing thread does not move), so no update is
lost, every run.

test_fast_enough: a 1 ms sleep must take under 1.2 ms; natively the host's
wake-up latency fails it now and then, under hvrun time is logical.
"""
import os
import sys
import threading
import time


def test_plain():
    assert "SAMPLE_FAIL" not in os.environ, "failing as asked"
    assert sorted([3, 1, 2]) == [1, 2, 3]


def test_lost_update():
    sys.setswitchinterval(1e-6)
    counter = [0]

    def step():
        pass  # a call: where the interpreter may switch threads

    def add():
        for _ in range(50000):
            v = counter[0]
            step()
            counter[0] = v + 1

    threads = [threading.Thread(target=add) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert counter[0] == 200000


def test_fast_enough():
    start = time.monotonic()
    time.sleep(0.001)
    assert time.monotonic() - start < 0.0012

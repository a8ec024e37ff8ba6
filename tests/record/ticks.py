#!/usr/bin/env python3
"""Counts for ever in two threads, each printing a line every 100 000
turns (tests/record/run.sh stops it from outside with a signal). Each
thread makes a syscall every 1000 turns, so the GIL changes hands at
points of the program's own progress (logical time moves with the
calls), not where a host-timed slice cut a thread that only computes:
the replay has to stop at the recorded point, not guess a cut."""
import os
import sys
import threading


def count(name):
    i = 0
    while True:
        i += 1
        if i % 1000 == 0:
            os.getppid()
        if i % 100000 == 0:
            print(name, i, flush=True)


threading.Thread(target=count, args=("worker",), daemon=True).start()
count("main")
sys.exit(0)

#!/usr/bin/env python3
"""Computes for ever in two threads, each printing a line every 100 000
turns (tests/record/run.sh stops it from outside with a signal)."""
import sys
import threading


def count(name):
    i = 0
    while True:
        i += 1
        if i % 100000 == 0:
            print(name, i, flush=True)


threading.Thread(target=count, args=("worker",), daemon=True).start()
count("main")
sys.exit(0)

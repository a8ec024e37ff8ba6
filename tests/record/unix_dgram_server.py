#!/usr/bin/env python3
"""An AF_UNIX datagram server outside the run for tests/record/run.sh: bound
to the path argv[1] and the abstract name argv[2] (both served); touches
argv[1] + ".ready" once bound, and appends each datagram it gets to the
file argv[3] (a line each). A datagram from an unnamed
sender (syslog's way) is only counted; each from a named one is answered to
its name with three datagrams sent 50 ms apart, each with the count of
datagrams so far and fresh random bytes (so a replay that reached it would
differ); a datagram over 1000 bytes is named by its size, and answered
with 100000 more bytes each."""
import os
import select
import socket
import sys
import time

socks = []
for name in sys.argv[1:3]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(name if name.startswith("/") else "\0" + name)
    socks.append(s)
open(sys.argv[1] + ".ready", "w").close()
seen = 0
while True:
    ready, _, _ = select.select(socks, [], [])
    for s in ready:
        data, addr = s.recvfrom(1 << 20)
        seen += 1
        with open(sys.argv[3], "ab") as log:
            log.write(data + b"\n")
        if not addr:
            continue
        pad = b""
        if len(data) > 1000:  # a big one: a big answer
            data, pad = b"%d bytes" % len(data), b" " + b"P" * 100000
        for i in range(3):
            try:
                s.sendto(b"dgram %d of %s seen %d %s" % (i, data, seen, os.urandom(4).hex().encode()) + pad, addr)
            except OSError:  # the sender went away
                break
            time.sleep(0.05)

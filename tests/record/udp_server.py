#!/usr/bin/env python3
"""A UDP server outside the run for tests/record/run.sh: bound to 127.0.0.1
at a free port, which it writes to the file argv[1]; answers each datagram
with three datagrams sent 50 ms apart, each with fresh random bytes (so a
replay that reached it would differ)."""
import os
import socket
import sys
import time

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    data, addr = s.recvfrom(65536)
    for i in range(3):
        s.sendto(b"dgram %d of %s %s" % (i, data, os.urandom(4).hex().encode()), addr)
        time.sleep(0.05)

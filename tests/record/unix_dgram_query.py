#!/usr/bin/env python3
"""An AF_UNIX datagram client from outside the run of
unix_dgram_inrun_server.py (tests/record/run.sh): waits for the file
argv[3], then at the relative path argv[1] and at the abstract name argv[2]
sends three queries with fresh random bytes, 50 ms apart, from a named
socket (the relative path cl.dg, an abstract name), printing each reply
and where it came from, then one datagram from an unnamed socket."""
import os
import socket
import sys
import time

for _ in range(400):
    if os.path.exists(sys.argv[3]):
        break
    time.sleep(0.05)
for name, mine in ((sys.argv[1], "cl.dg"), (b"\0" + sys.argv[2].encode(), b"\0" + sys.argv[2].encode() + b"-cl")):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    if isinstance(mine, str) and os.path.exists(mine):
        os.unlink(mine)
    s.bind(mine)
    s.settimeout(10)
    for i in range(3):
        s.sendto(b"q%d %s" % (i, os.urandom(4).hex().encode()), name)
        try:
            data, src = s.recvfrom(1000)
            print("reply", data.decode(), "from the server", src == name)
        except OSError as e:
            print("no reply:", e)
        time.sleep(0.05)
    s.close()
    if isinstance(mine, str):
        os.unlink(mine)
    u = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    u.sendto(b"unnamed %s" % os.urandom(4).hex().encode(), name)
    u.close()

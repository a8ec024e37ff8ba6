#!/usr/bin/env python3
"""A UDP client from outside the run of udp_inrun_server.py
(tests/record/run.sh): waits for the port in the file argv[1], then sends
three queries with fresh random bytes, 50 ms apart, from a socket connected
to 127.0.0.1:PORT (so a reply from any other port is not taken), printing
each reply."""
import os
import socket
import sys
import time

for _ in range(400):
    if os.path.exists(sys.argv[1]):
        break
    time.sleep(0.05)
port = int(open(sys.argv[1]).read())
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.connect(("127.0.0.1", port))
s.settimeout(10)
for i in range(3):
    s.send(b"q%d %s" % (i, os.urandom(4).hex().encode()))
    try:
        print("reply", s.recv(1000).decode())
    except OSError as e:
        print("no reply:", e)
    time.sleep(0.05)

#!/usr/bin/env python3
"""A server in the run for tests/record/run.sh whose accept has a timeout:
listens on 127.0.0.1 (a port the run picks), writes the port to the file
argv[1], waits argv[2] seconds for one client (accept_timeout_client.py or
nobody) and prints its line, or that none came."""
import os
import socket
import sys

l = socket.socket()
l.bind(("127.0.0.1", 0))
l.listen(1)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(l.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
l.settimeout(float(sys.argv[2]))
try:
    c, _ = l.accept()
except socket.timeout:
    print("no client")
    sys.exit(0)
c.settimeout(None)
print("client sent", c.makefile("rb").readline().decode().strip())

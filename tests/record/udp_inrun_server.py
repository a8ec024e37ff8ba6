#!/usr/bin/env python3
"""A UDP server in the run for tests/record/run.sh: binds 127.0.0.1 (a port
the run picks), writes the port to the file argv[1], answers three queries
from outside (udp_query.py: fresh random bytes in each) with random bytes
of its own, then queries itself from a socket inside the run. Prints what
came, from where, and the names the sockets report."""
import os
import socket
import sys

srv = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
srv.bind(("127.0.0.1", 0))
name = srv.getsockname()
print("bound", name[0], "port" if name[1] else "no port")
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(name[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
peers = set()
for i in range(3):
    data, src = srv.recvfrom(1000)
    peers.add(src)
    print("query", i, data.decode(), "from", src[0], "port" if src[1] else "")
    srv.sendto(b"ans %s %s" % (data.split()[0], os.urandom(4).hex().encode()), src)
print("one peer", len(peers) == 1)
# From inside the run: not relayed; the source is the server's name.
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
c.sendto(b"inside", name)
data, src = srv.recvfrom(1000)
print("inside query", data.decode(), "from the client", src[1] == c.getsockname()[1])
srv.sendto(b"inside answer", src)
data, src = c.recvfrom(1000)
print("inside got", data.decode(), "from the server", src == name)
c.connect(name)
print("inside connected peer is the server", c.getpeername() == name)
print("server name kept", srv.getsockname() == name)

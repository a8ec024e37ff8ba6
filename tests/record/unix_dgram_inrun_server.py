#!/usr/bin/env python3
"""An AF_UNIX datagram server in the run for tests/record/run.sh: binds the
relative path argv[1] and the abstract name argv[2], then writes the file
argv[3] (ready). At each name it answers the datagrams a client outside
sends (unix_dgram_query.py: three from a named socket, with fresh random
bytes, then one from an unnamed socket) with random bytes of its own, then
takes one from a client inside the run. Prints what came, from where, and
the names the sockets report."""
import os
import socket
import sys

names = (sys.argv[1], b"\0" + sys.argv[2].encode())
socks = []
for name in names:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(name)
    socks.append(s)
with open(sys.argv[3] + ".tmp", "w") as f:
    f.write("ready\n")
os.rename(sys.argv[3] + ".tmp", sys.argv[3])
for k, (name, srv) in enumerate(zip(names, socks)):
    print("bound", repr(srv.getsockname()), "as asked", srv.getsockname() == name)
    for i in range(4):
        data, src = srv.recvfrom(1000)
        print("query", i, data.decode(), "from", repr(src))
        if src:
            srv.sendto(b"ans %s %s" % (data.split()[0], os.urandom(4).hex().encode()), src)
    # From inside the run: not relayed; the source is the server's name.
    c = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    c.bind("in.dg" if k == 0 else names[1] + b"-in")
    c.sendto(b"inside", name)
    data, src = srv.recvfrom(1000)
    print("inside query", data.decode(), "from the client", src == c.getsockname())
    srv.sendto(b"inside answer", src)
    data, src = c.recvfrom(1000)
    print("inside got", data.decode(), "from the server", src == name)
    c.connect(name)
    print("inside connected peer is the server", c.getpeername() == name)
    c.send(b"inside connected")
    data, src = srv.recvfrom(1000)
    print("inside connected query", data.decode(), src == c.getsockname())
    c.close()
    print("server name kept", srv.getsockname() == name)
    srv.close()
for name in ("in.dg", names[0]):
    os.unlink(name)

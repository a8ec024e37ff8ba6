#!/usr/bin/env python3
"""A server in the run for tests/record/run.sh: listens on 127.0.0.1 and ::1
(ports the run picks) and on the AF_UNIX path argv[2] (relative), writes
"PORT4 PORT6" to the file argv[1], then serves one client from outside on
each in turn (accept_client.py: a request line with fresh random bytes,
the rest of its lines 50 ms apart, then its end), answering each line with
random bytes of its own; then connects to its own IPv4 listener from
inside the run. Prints what came and the names each socket reports."""
import os
import socket
import sys


def show_name(what, name):
    if isinstance(name, tuple):
        print(what, name[0], "port" if name[1] else "no port")
    else:
        print(what, repr(name))


def serve(listener, tag):
    conn, addr = listener.accept()
    show_name(tag + " accepted from", addr)
    show_name(tag + " peer", conn.getpeername())
    show_name(tag + " own", conn.getsockname())
    print(tag, "own is the listener's", conn.getsockname() == listener.getsockname())
    f = conn.makefile("rb")
    for line in f:
        print(tag, "got", line.decode().strip())
        conn.sendall(b"ack %s %s\n" % (line.split()[0], os.urandom(4).hex().encode()))
    print(tag, "end")
    conn.close()


l4 = socket.socket(socket.AF_INET)
l4.bind(("127.0.0.1", 0))
l4.listen(4)
l6 = socket.socket(socket.AF_INET6)
l6.bind(("::1", 0))
l6.listen(4)
lu = socket.socket(socket.AF_UNIX)
if os.path.exists(sys.argv[2]):
    os.unlink(sys.argv[2])
lu.bind(sys.argv[2])
lu.listen(4)
show_name("listener4", l4.getsockname())
show_name("listener6", l6.getsockname())
show_name("listenerU", lu.getsockname())
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write("%d %d" % (l4.getsockname()[1], l6.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
serve(l4, "v4")
serve(l6, "v6")
serve(lu, "unix")
# A client inside the run: not relayed; its names are the listener's.
c = socket.create_connection(l4.getsockname())
conn, addr = l4.accept()
show_name("inside peer of client", c.getpeername())
print("inside peer is the listener", c.getpeername() == l4.getsockname())
show_name("inside accepted own", conn.getsockname())
print("inside same port", conn.getpeername() == c.getsockname())
c.sendall(b"inside\n")
print("inside got", conn.recv(100).decode().strip())
os.unlink(sys.argv[2])

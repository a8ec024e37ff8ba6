#!/usr/bin/env python3
"""A client of an AF_UNIX stream server outside the run (tests/record/run.sh):
connects to each path in argv[1:] (relative paths and "@name" abstract names
too) with requests req and fds, prints the peer's name, the reply to its
end and how many fds came with it. A failed connect prints its error."""
import socket
import sys


def ask(path, req):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    addr = "\0" + path[1:] if path.startswith("@") else path
    try:
        s.connect(addr)
    except OSError as e:
        print("connect failed:", e.strerror)
        return
    print("peer", repr(s.getpeername()))
    s.sendall(req + b"\n")
    reply, fds = b"", 0
    while True:
        msg, anc, _, _ = s.recvmsg(1000, socket.CMSG_SPACE(16))
        if not msg:
            break
        reply += msg
        fds += len(anc)
    print(reply.decode(), end="")
    print("fds passed:", fds)
    s.close()


for p in sys.argv[1:]:
    ask(p, b"req")
    ask(p, b"fds")

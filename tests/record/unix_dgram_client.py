#!/usr/bin/env python3
"""A client of an AF_UNIX datagram server outside the run (tests/record/run.sh,
unix_dgram_server.py), syslog-like: for each name in argv[1:] (a relative
path, or "@name" for an abstract one) an unnamed socket sends two log lines
to it (sendto, sendmsg); then a socket bound to a relative path connects to
it, sends a query and reads three replies (select with a timeout, recv), and
another, autobound, sends one by sendto and reads the replies by recvfrom
(SO_RCVTIMEO), printing each and where it came from; last, a datagram of
150000 bytes (more than a UDP one can be) to the first name, whose big
replies are printed by their size. An error prints what
failed and its strerror."""
import os
import select
import socket
import struct
import sys


def addr_of(name):
    return "\0" + name[1:] if name.startswith("@") else name


def shown(a):
    return repr(a.encode() if isinstance(a, str) else a)


def log_lines(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        s.sendto(b"<13>log line one", addr_of(name))
        s.sendmsg([b"<13>log ", b"line two"], [], 0, addr_of(name))
        print("logged to", name)
    except OSError as e:
        print("sendto failed:", e.strerror)
    s.close()


def connected(name, tag):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    mine = "cli-%s.sock" % tag
    if os.path.exists(mine):
        os.unlink(mine)
    s.bind(mine)
    try:
        s.connect(addr_of(name))
    except OSError as e:
        print("connect failed:", e.strerror)
        s.close()
        os.unlink(mine)
        return
    print("peer", shown(s.getpeername()))
    s.send(b"q" + tag.encode())
    for _ in range(3):
        r, _, _ = select.select([s], [], [], 5)
        if not r:
            print("select timed out")
            break
        print(s.recv(1000).decode())
    s.close()
    os.unlink(mine)


def unconnected(name, tag, size=0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind("")  # autobind: an abstract name of the kernel's choice
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 5, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    try:
        s.sendto(b"u" + tag.encode() + b"B" * size, addr_of(name))
    except OSError as e:
        print("sendto failed:", e.strerror)
        return
    for _ in range(3):
        try:
            data, src = s.recvfrom(1 << 20)
        except OSError as e:
            print("recvfrom failed:", e.strerror or e)
            break
        if len(data) > 1000:
            data = data[:60] + b"... (%d bytes)" % len(data)
        print(data.decode(), "from", shown(src))
    s.close()


for i, n in enumerate(sys.argv[1:]):
    log_lines(n)
    connected(n, str(i))
    unconnected(n, str(i))
unconnected(sys.argv[1], "big", 150000)  # over a UDP datagram's size

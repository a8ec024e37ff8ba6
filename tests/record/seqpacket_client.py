#!/usr/bin/env python3
"""A client of an AF_UNIX SOCK_SEQPACKET server outside the run
(tests/record/seqpacket_server.py): connects to each name in argv[1:] (a
relative path, or "@name" for an abstract one), prints the peer's name,
sends "hello", an empty message, a 1-byte one, one of 100000 bytes and
"bye", printing each reply, then prints every message that comes until the
end (an empty one too: a message has the sender's name, the end has none;
a large one as its length, first 8 bytes and whether it is those repeated).
A failed connect prints its error."""
import socket
import sys


def show(msg):
    if len(msg) > 100:
        print("message of %d bytes %s repeated %s" %
              (len(msg), msg[:8].decode(), msg == msg[:8] * (len(msg) // 8)))
    else:
        print("message of %d bytes: %s" % (len(msg), msg.decode()))


def receive(s):
    msg, _, flags, sender = s.recvmsg(200000)
    if not msg and sender is None:
        return None
    if flags & socket.MSG_TRUNC:
        print("truncated")
    return msg


def talk(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    addr = "\0" + name[1:] if name.startswith("@") else name
    try:
        s.connect(addr)
    except OSError as e:
        print("connect failed:", e.strerror)
        return
    print("peer", repr(s.getpeername()))
    for m in (b"hello", b"", b"x", b"y" * 100000, b"bye"):
        s.send(m)
        reply = receive(s)
        if reply is None:
            print("end too soon")
            return
        show(reply)
    while True:
        msg = receive(s)
        if msg is None:
            print("end")
            break
        show(msg)
    s.close()


for n in sys.argv[1:]:
    talk(n)

#!/usr/bin/env python3
"""A SOCK_SEQPACKET server in the run (tests/record/run.sh): listens at the
relative path argv[1] (then creates argv[1].ready), accepts one client and
prints each message it sends (an empty one too: with SO_PASSCRED each
message has credentials, the end none; a large one as its length),
replying "ack N HEX" (fresh random bytes); after "bye" it sends an empty
message and a 1-byte one, then closes."""
import os
import socket
import sys

listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
listener.bind(sys.argv[1])
listener.listen(4)
open(sys.argv[1] + ".ready", "w").close()
c, _ = listener.accept()
c.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
while True:
    msg, anc, _, _ = c.recvmsg(200000, socket.CMSG_SPACE(12))
    if not anc:
        print("end")
        break
    if len(msg) > 100:
        print("got %d bytes" % len(msg))
    else:
        print("got %d bytes: %s" % (len(msg), msg.decode()))
    c.send(b"ack %d %s" % (len(msg), os.urandom(4).hex().encode()))
    if msg == b"bye":
        c.send(b"")
        c.send(b"z")
        break
c.close()

#!/usr/bin/env python3
"""A client from outside the run of seqpacket_inrun_server.py
(tests/record/run.sh): waits for argv[1].ready, connects to the path
argv[1] and sends "a HEX" (fresh random bytes), an empty message, one of
100000 bytes and "bye", 50 ms apart, printing each reply, then every
message until the end (a message has the sender's name, the end none)."""
import os
import socket
import sys
import time

for _ in range(400):
    if os.path.exists(sys.argv[1] + ".ready"):
        break
    time.sleep(0.05)
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
for m in (b"a " + os.urandom(4).hex().encode(), b"", b"b" * 100000, b"bye"):
    s.send(m)
    reply, _, _, sender = s.recvmsg(1000)
    print("reply", reply.decode())
    time.sleep(0.05)
while True:
    msg, _, _, sender = s.recvmsg(1000)
    if not msg and sender is None:
        print("end")
        break
    print("message of %d bytes: %s" % (len(msg), msg.decode()))
s.close()

#!/usr/bin/env python3
"""An AF_UNIX SOCK_SEQPACKET server outside the run for tests/record/run.sh:
listens at the path argv[1] and at the abstract name argv[2] (then creates
argv[1].ready). Each connection's messages are logged to the file argv[3]
(made at the first connection: a replay must make none) as their lengths,
an empty one too, and each gets a reply "got N bytes HEX" (HEX fresh random
bytes). After the message "bye" it sends, 50 ms apart, an empty message, a
1-byte one, one of 100000 bytes (fresh random hex repeated) and "last HEX",
then closes."""
import os
import socket
import struct
import sys
import threading
import time

path, log_path = sys.argv[1], sys.argv[3]
lock = threading.Lock()
listeners = []
for name in (path, "\0" + sys.argv[2]):
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(name)
    listener.listen(16)
    listeners.append(listener)
open(path + ".ready", "w").close()


def log(line):
    with lock, open(log_path, "a") as f:
        f.write(line + "\n")


def fresh():
    return os.urandom(4).hex().encode()


def serve(c, where):
    # With SO_PASSCRED each message comes with credentials, the end without:
    # recv returns b"" for both an empty message and the end.
    c.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
    while True:
        msg, anc, flags, _ = c.recvmsg(200000, socket.CMSG_SPACE(12))
        if not anc:
            log("%s: end before bye" % where)
            c.close()
            return
        log("%s: message of %d bytes%s" % (where, len(msg),
                                          " truncated" if flags & socket.MSG_TRUNC else ""))
        c.send(b"got %d bytes %s" % (len(msg), fresh()))
        if msg == b"bye":
            break
    for m in (b"", b"z", fresh() * 12500, b"last " + fresh()):
        time.sleep(0.05)
        c.send(m)
    c.close()
    log("%s: closed" % where)


def accept_on(listener, where):
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn, where), daemon=True).start()


threading.Thread(target=accept_on, args=(listeners[1], "abstract"), daemon=True).start()
accept_on(listeners[0], "path")

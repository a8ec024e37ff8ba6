#!/usr/bin/env python3
"""An AF_UNIX stream server outside the run for tests/record/run.sh: listens
at the path argv[1] and at the abstract name argv[2] (then creates
argv[1].ready) and answers each
connection's request line with three lines sent 50 ms apart, each with
fresh random bytes; a request "fds" also gets a line passing two file
descriptors (SCM_RIGHTS), which hvrun refuses to relay."""
import array
import os
import socket
import sys
import threading
import time

path = sys.argv[1]
listeners = []
for name in (path, "\0" + sys.argv[2]):
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(name)
    listener.listen(16)
    listeners.append(listener)
open(path + ".ready", "w").close()


def serve(c):
    req = c.recv(1000).strip()
    for i in range(3):
        c.sendall(b"chunk %d of %s %s\n" % (i, req, os.urandom(4).hex().encode()))
        time.sleep(0.05)
    if req == b"fds":
        r, w = os.pipe()
        fds = array.array("i", [r, w])
        c.sendmsg([b"a line with fds\n"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fds)])
        os.close(r)
        os.close(w)
    c.close()


def accept_on(listener):
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


threading.Thread(target=accept_on, args=(listeners[1],), daemon=True).start()
accept_on(listeners[0])

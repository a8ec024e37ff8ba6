#!/usr/bin/env python3
"""A server outside the run for tests/record/run.sh: listens on 127.0.0.1 at
a free port, writes the port to the file argv[1], and answers each
connection's request line with three lines sent 50 ms apart (each with
fresh random bytes, so a replay that reached it would differ), then closes."""
import os
import socket
import sys
import threading
import time


def serve(c):
    req = c.recv(1000)
    for i in range(3):
        c.sendall(b"chunk %d of %s %s\n" % (i, req.strip(), os.urandom(4).hex().encode()))
        time.sleep(0.05)
    c.close()


listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(16)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(listener.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    conn, _ = listener.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()

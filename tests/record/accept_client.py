#!/usr/bin/env python3
"""Clients from outside the run of inrun_server.py (tests/record/run.sh):
waits for the file argv[1] ("PORT4 PORT6"), then connects to 127.0.0.1,
::1 and the AF_UNIX path argv[2] in turn, each sending three lines with
fresh random bytes 50 ms apart and reading the replies; prints them."""
import os
import socket
import sys
import time

for _ in range(400):
    if os.path.exists(sys.argv[1]):
        break
    time.sleep(0.05)
p4, p6 = map(int, open(sys.argv[1]).read().split())
for fam, addr in ((socket.AF_INET, ("127.0.0.1", p4)),
                  (socket.AF_INET6, ("::1", p6)),
                  (socket.AF_UNIX, sys.argv[2])):
    s = socket.socket(fam)
    s.connect(addr)
    f = s.makefile("rb")
    for i in range(3):
        s.sendall(b"line%d %s\n" % (i, os.urandom(4).hex().encode()))
        print(fam.name, f.readline().decode().strip())
        time.sleep(0.05)
    s.shutdown(socket.SHUT_WR)
    print(fam.name, "rest", f.read())
    s.close()

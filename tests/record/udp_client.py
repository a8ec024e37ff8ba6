#!/usr/bin/env python3
"""A UDP client of a server outside the run (tests/record/run.sh), at
127.0.0.1:argv[1]: a query on a connected socket (getpeername, send, then
select with a timeout and recv for each of three replies), then one by
sendto on an unconnected socket with a timeout (SO_RCVTIMEO), its replies
by recvfrom (printed with whether the source is the server). With no
server there (argv[2] given), the connected socket's recv fails
(ECONNREFUSED, from the ICMP the host sends) and the recvfrom times out:
both printed."""
import select
import socket
import sys

PORT = int(sys.argv[1])
SERVER = ("127.0.0.1", PORT)
missing = len(sys.argv) > 2

c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
c.connect(SERVER)
print("peer", c.getpeername() == SERVER)
c.send(b"q1")
try:
    for i in range(3):
        print("ready", select.select([c], [], [], 10.0)[0] == [c])
        print(c.recv(100).decode())
except OSError as e:
    print("recv failed:", e.strerror)

u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.settimeout(1.0 if missing else 10.0)
u.sendto(b"q2", SERVER)
try:
    for i in range(3):
        data, src = u.recvfrom(65536)
        print(data.decode(), "from the server:", src == SERVER)
except OSError as e:
    print("recvfrom failed:", e)

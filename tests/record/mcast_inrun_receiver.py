#!/usr/bin/env python3
"""A multicast receiver in the run for tests/record/run.sh: a UDP socket
bound to the wildcard address at port argv[2] joins group argv[1] on the
interface with address argv[3] (IP_MULTICAST_ALL 0 first when argv[4] is
set: only its own groups), writes the file argv[5] (ready), and prints the
three datagrams a sender outside (mcast_send.py, fresh random bytes) sends
to the group, and where they came from."""
import os
import socket
import sys

group, port, ifaddr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
r = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
r.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if sys.argv[4] == "own":
    r.setsockopt(socket.IPPROTO_IP, 49, 0)  # IP_MULTICAST_ALL
r.bind(("0.0.0.0", port))
r.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
             socket.inet_aton(group) + socket.inet_aton(ifaddr))
print("bound", r.getsockname() == ("0.0.0.0", port))
with open(sys.argv[5] + ".tmp", "w") as f:
    f.write("ready\n")
os.rename(sys.argv[5] + ".tmp", sys.argv[5])
for i in range(3):
    d, a = r.recvfrom(100)
    print("got", d.decode(), "from", a[0], "port" if a[1] else "no port")

#!/usr/bin/env python3
"""A multicast sender outside the run (tests/record/run.sh): waits for the
file argv[4], then sends three datagrams with fresh random bytes, 50 ms
apart, to group argv[1] port argv[2] from the interface with address
argv[3] (IP_MULTICAST_LOOP: this host's members get them)."""
import os
import socket
import sys
import time

group, port, ifaddr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for _ in range(400):
    if os.path.exists(sys.argv[4]):
        break
    time.sleep(0.05)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(ifaddr))
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
for i in range(3):
    s.sendto(b"m%d %s" % (i, os.urandom(4).hex().encode()), (group, port))
    time.sleep(0.05)

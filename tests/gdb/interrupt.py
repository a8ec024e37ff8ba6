#!/usr/bin/env python3
"""interrupt.py PORT: gdb's ^C over the remote protocol, spoken directly
(gdb -batch cannot wait for an interrupted target): continue, wait, send
0x03, expect a SIGINT stop (T02), then kill (vKill). Prints the stop."""
import socket
import sys
import time


def packet(body):
    return b"$" + body + b"#%02x" % (sum(body) & 0xff)


def read_reply(s):
    buf = b""
    while True:
        buf += s.recv(4096)
        start = buf.find(b"$")
        end = buf.find(b"#", start)
        if start >= 0 and end >= 0 and len(buf) >= end + 3:
            s.sendall(b"+")
            return buf[start + 1:end]


s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(packet(b"qSupported:multiprocess+"))
read_reply(s)
s.sendall(packet(b"?"))
print("start:", read_reply(s).decode())
s.sendall(packet(b"vCont;c"))
time.sleep(1)
s.sendall(b"\x03")
print("stop:", read_reply(s).decode())
s.sendall(packet(b"vKill;2"))
print("kill:", read_reply(s).decode())
s.close()

# tests/determinism/ports.py: binds to port 0 (TCP listener, the client's
# implicit bind at connect, UDP), a connection and a datagram between
# them, and prints every port getsockname, getpeername, accept and
# recvfrom show; then binds a port of the ephemeral range itself and six
# more to port 0 (the run never hands out the one the guest took).
# Under hvrun the same bytes in every run, whatever host ports are taken.
import socket

s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
c = socket.create_connection(s.getsockname())
a, peer = s.accept()
print("tcp", s.getsockname()[1], c.getsockname()[1], peer[1],
      a.getsockname()[1], a.getpeername()[1], c.getpeername()[1])
c.sendall(b"x")
print("tcp data", a.recv(1))
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("0.0.0.0", 0))
v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
v.sendto(b"hi", ("127.0.0.1", u.getsockname()[1]))
d, src = u.recvfrom(10)
print("udp", u.getsockname()[1], d, src[1], v.getsockname()[1])
e = socket.socket()
try:
    e.bind(("127.0.0.1", 32775))
    print("explicit", e.getsockname()[1])
except OSError as err:
    print("explicit", err.errno)
more = []
for _ in range(6):
    t = socket.socket()
    t.bind(("127.0.0.1", 0))
    more.append(t.getsockname()[1])
print("more", *more)

# UDP and AF_UNIX stream peers both inside the run (a server thread each):
# not relayed as outside ones are (outside.c, outside_udp.c). The unix
# server is reached by a relative path and by an abstract name.
import os
import socket
import threading

udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.bind(("127.0.0.1", 0))
port = udp.getsockname()[1]


def udp_serve():
    for _ in range(2):
        data, addr = udp.recvfrom(100)
        udp.sendto(data.upper(), addr)


def unix_serve(srv):
    conn, _ = srv.accept()
    conn.sendall(conn.recv(5).upper())
    conn.close()


t = threading.Thread(target=udp_serve)
t.start()
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
c.sendto(b"hello", ("127.0.0.1", port))
data, src = c.recvfrom(100)
print(data, "from the server:", src == ("127.0.0.1", port), "port", port)
c.connect(("127.0.0.1", port))
c.send(b"again")
print(c.recv(100), "peer:", c.getpeername() == ("127.0.0.1", port))
t.join()

for name in ("inrun.sock", "\0hvrun-inrun-%d" % os.getpid()):
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(name)
    srv.listen(1)
    t = threading.Thread(target=unix_serve, args=(srv,))
    t.start()
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    u.connect(name)
    u.sendall(b"hello")
    print(u.recv(5), "peer:", u.getpeername() == (name if name[0] != "\0" else name.encode()))
    t.join()
    if name[0] != "\0":
        os.unlink(name)

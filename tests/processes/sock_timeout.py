# SO_RCVTIMEO / SO_SNDTIMEO end a blocking wait with EAGAIN (recv, read,
# accept); data that arrives in time is returned.
import os, socket, struct, time
a, b = socket.socketpair()
a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 0, 200000))
t0 = time.monotonic()
try:
    a.recv(1)
except BlockingIOError as e:
    print("recv timed out:", e.errno, round(time.monotonic() - t0, 1))
try:
    os.read(a.fileno(), 1)
except BlockingIOError as e:
    print("read timed out:", e.errno)
b.send(b"x")
print("then:", a.recv(1))
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_RCVTIMEO, struct.pack("ll", 0, 100000))
try:
    srv.accept()
except BlockingIOError as e:
    print("accept timed out:", e.errno)

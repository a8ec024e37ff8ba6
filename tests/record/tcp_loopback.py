# A loopback TCP server thread and its client.
import socket
import threading

srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(1)
port = srv.getsockname()[1]


def serve():
    conn, _ = srv.accept()
    conn.sendall(conn.recv(5).upper())
    conn.close()


t = threading.Thread(target=serve)
t.start()
c = socket.create_connection(("127.0.0.1", port))
c.sendall(b"hello")
print(c.recv(5), "port", port)
t.join()

# One blocking send() of 5 MB on a stream socket to a forked reader: it must
# return the whole length (Linux blocks until all is sent).
import os, socket
a, b = socket.socketpair()
data = bytes(range(256)) * 20000   # 5 MB
pid = os.fork()
if pid == 0:
    a.close(); got = 0
    while True:
        chunk = b.recv(65536)
        if not chunk: break
        got += len(chunk)
    print("child got", got); os._exit(0)
b.close()
n = a.send(data)   # one blocking send, no loop
print("sent", n == len(data))
a.close(); os.waitpid(pid, 0)

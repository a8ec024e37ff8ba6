# One blocking send() and one blocking sendmsg() (two segments and an
# SCM_RIGHTS fd) of 5 MB each on a stream socket to a forked reader: each
# must return the whole length (Linux blocks until all is sent), and the
# reader must get every byte in order and the fd once.
import array, os, socket, sys
a, b = socket.socketpair()
data = bytes(range(256)) * 20000   # 5 MB
half = len(data) // 2
pid = os.fork()
if pid == 0:
    a.close(); got = bytearray(); fds = 0
    while True:
        chunk, anc, _, _ = b.recvmsg(65536, socket.CMSG_SPACE(4))
        for level, kind, payload in anc:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                for fd in array.array("i", payload):
                    fds += 1; os.close(fd)
        if not chunk: break
        got += chunk
    print("child got", len(got), "in order", bytes(got) == data * 2, "fds", fds)
    sys.stdout.flush(); os._exit(0)
b.close()
n = a.send(data)   # one blocking send, no loop
print("send whole", n == len(data))
rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0]))]
n = a.sendmsg([data[:half], data[half:]], rights)   # one blocking sendmsg
print("sendmsg whole", n == len(data))
a.close(); os.waitpid(pid, 0)

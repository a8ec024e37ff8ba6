# Peer credentials name guests: SO_PEERCRED of a socketpair (the creator)
# and of an accepted connection (the connecting child), and the
# SCM_CREDENTIALS the child sends, compared with os.getpid() and the
# child's pid as a program sees them.
import socket, struct, os
a, b = socket.socketpair()
pid, uid, gid = struct.unpack("3i", a.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
print("socketpair:", pid == os.getpid(), uid == os.geteuid(), gid == os.getegid())
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
path = "pc.%d.sock" % os.getpid()
srv.bind(path); srv.listen(1)
child = os.fork()
if child == 0:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); c.connect(path)
    c.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, struct.pack("3i", os.getpid(), os.geteuid(), os.getegid()))])
    c.recv(1); os._exit(0)
conn, _ = srv.accept()
conn.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
pid, uid, gid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
print("accepted: peer is the child:", pid == child)
msg, anc, _, _ = conn.recvmsg(1, socket.CMSG_SPACE(12))
for lvl, typ, data in anc:
    if typ == socket.SCM_CREDENTIALS:
        print("SCM_CREDENTIALS from the child:", struct.unpack("3i", data)[0] == child)
conn.send(b"y"); os.waitpid(child, 0); os.unlink(path)

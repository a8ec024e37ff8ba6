# pty.fork: the child leads a new session whose controlling terminal is the
# pty's slave (login_tty's TIOCSCTTY); the parent reads the master until
# EIO (every slave fd closed) and reaps the child.
import os, pty
pid, fd = pty.fork()
if pid == 0:
    tty = os.open("/dev/tty", os.O_RDWR)
    os.write(1, b"child %r leader %r fg %r dev/tty %r\n" % (
        os.isatty(0), os.getsid(0) == os.getpid(),
        os.tcgetpgrp(0) == os.getpgrp(), os.isatty(tty)))
    os._exit(3)
out = b""
while True:
    try:
        chunk = os.read(fd, 100)
    except OSError as e:
        print("read ended:", e.strerror)
        break
    if not chunk:
        break
    out += chunk
print(out)
_, status = os.waitpid(pid, 0)
print("child exit", os.waitstatus_to_exitcode(status))

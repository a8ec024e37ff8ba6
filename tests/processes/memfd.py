# memfd_create: a named memfd, shared with a fork child through MAP_SHARED,
# its /proc/self/fd link, seals, and EINVAL for a name over 249 bytes.
import os, mmap
fd = os.memfd_create("qemu-ram", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
os.ftruncate(fd, 4096)
m = mmap.mmap(fd, 4096)
pid = os.fork()
if pid == 0:
    m[0:5] = b"child"; os._exit(0)
os.waitpid(pid, 0)
print(m[0:5], os.readlink("/proc/self/fd/%d" % fd), os.fstat(fd).st_size)
import fcntl
fcntl.fcntl(fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_GROW)
print(fcntl.fcntl(fd, fcntl.F_GET_SEALS))
try: os.memfd_create("x" * 250)
except OSError as e: print("long name", e.errno)

# A parent writes to its paused child, then kills it (the case that
# deadlocks Hermit's recorder).
import os
import signal

r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(w)
    os.read(r, 1)
    signal.pause()
    os._exit(0)
os.write(w, b"x")
print("parent wrote", flush=True)
os.kill(pid, signal.SIGKILL)
print("child ended by signal", os.waitpid(pid, 0)[1] & 0x7F)

# Threads and asyncio in one python3 program.
import asyncio
import threading

out = []
lock = threading.Lock()


def work(i):
    with lock:
        out.append(i * i)


threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()


async def tick(n):
    await asyncio.sleep(0.01 * n)
    return n


async def main():
    return await asyncio.gather(*(tick(n) for n in range(3)))


print(sorted(out), asyncio.run(main()))

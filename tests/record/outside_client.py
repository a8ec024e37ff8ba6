#!/usr/bin/env python3
"""A client of a server outside the run (tests/record/run.sh): three
asyncio connections to 127.0.0.1:argv[1] at once, each sending a request
line and reading the reply to its end; prints the replies and the peer
each socket reports. A refused connect prints its error."""
import asyncio
import sys

PORT = int(sys.argv[1])


async def one(n):
    reader, writer = await asyncio.open_connection("127.0.0.1", PORT)
    peer = writer.get_extra_info("peername")
    writer.write(b"req%d\n" % n)
    await writer.drain()
    lines = []
    while True:
        line = await reader.readline()
        if not line:
            break
        lines.append(line.decode().strip())
    writer.close()
    return peer, lines


async def main():
    try:
        results = await asyncio.gather(*(one(i) for i in range(3)))
    except OSError as e:
        print("connect failed:", e.strerror)
        return
    for peer, lines in results:
        print("peer", peer[0], peer[1] == PORT)
        for line in lines:
            print(line)


asyncio.run(main())

#!/usr/bin/env python3
"""A loopback TCP proxy that adds latency, for benchmarks.

usage: delay-proxy.py LISTEN_PORT TARGET_HOST:PORT DELAY_MS

Every chunk of bytes is held DELAY_MS/2 before it is passed on, in each
direction, so a request and its answer pay DELAY_MS more than on loopback
(a server "across the network"); and a new connection's first bytes wait one
DELAY_MS more, as a TCP handshake costs a round trip before data can flow
(so a client that opens many connections pays for each). Works for any protocol over TCP (plain
HTTP, SSE streams, keep-alive): each connection is its own pair of pipes and
keeps its order. Prints "listening on 127.0.0.1:PORT" when ready (PORT 0:
one chosen by the system). Listens on 127.0.0.1 only.
"""
import asyncio
import sys


async def pipe(reader, writer, delay, first_extra=0.0):
    # Each chunk leaves `delay` after it arrived; chunks keep their order
    # and do not wait for one another's delay (a link, not a queue).
    loop = asyncio.get_running_loop()
    queue = asyncio.Queue()

    async def send():
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        writer.close()

    sender = asyncio.create_task(send())
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            queue.put_nowait((loop.time() + delay + first_extra, data))
            first_extra = 0.0
    except (ConnectionResetError, BrokenPipeError):
        pass
    queue.put_nowait((0, None))
    try:
        await sender
    except (ConnectionResetError, BrokenPipeError):
        pass


async def main():
    listen, target, delay_ms = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    host, port = target.rsplit(":", 1)
    half = delay_ms / 2000.0

    async def handle(cr, cw):
        try:
            sr, sw = await asyncio.open_connection(host, int(port))
        except OSError:
            cw.close()
            return
        await asyncio.gather(pipe(cr, sw, half, 2 * half), pipe(sr, cw, half))

    server = await asyncio.start_server(handle, "127.0.0.1", listen)
    print(f"listening on 127.0.0.1:{server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass

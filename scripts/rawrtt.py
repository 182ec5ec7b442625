#!/usr/bin/env python3
"""A raw loopback round trip to an MCP server, as the floor mcpcert's own
time per exchange is compared with in scripts/bench.sh.

usage: rawrtt.py --http URL N | --http-2025 URL N | --stdio 'COMMAND' N

Sends N tools/list requests (2026-07-28 envelope) one after another - over one
kept-alive HTTP connection, or over the pipes of one spawned process - reads
each reply whole, judges nothing, and prints the median and mean seconds per
round trip. --http-2025 first opens a 2025-11-25 session (initialize, then
notifications/initialized) and sends the requests in it, untimed handshake.
"""
import http.client
import json
import shlex
import statistics
import subprocess
import sys
import time
import urllib.parse

mode, target, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "rawrtt", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def body(i):
    return json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/list", "params": {"_meta": META}}).encode()


times = []
if mode in ("--http", "--http-2025"):
    u = urllib.parse.urlsplit(target)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
    if mode == "--http-2025":
        init = {"jsonrpc": "2.0", "id": "init", "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "rawrtt", "version": "0"}}}
        conn.request("POST", u.path, json.dumps(init).encode(), {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
        r = conn.getresponse()
        r.read()
        sid = r.getheader("mcp-session-id")
        headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
        if sid:
            headers["Mcp-Session-Id"] = sid
        conn.request("POST", u.path, json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode(), headers)
        conn.getresponse().read()
        body = lambda i: json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/list"}).encode()
    for i in range(n):
        t0 = time.perf_counter()
        conn.request("POST", u.path, body(i), headers)
        r = conn.getresponse()
        data = r.read()
        times.append(time.perf_counter() - t0)
        if r.status != 200 or b'"result"' not in data:
            sys.exit(f"rawrtt: request {i}: HTTP {r.status}: {data[:200]!r}")
else:
    p = subprocess.Popen(shlex.split(target), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    for i in range(n):
        t0 = time.perf_counter()
        p.stdin.write(body(i) + b"\n")
        p.stdin.flush()
        while True:
            line = p.stdout.readline()
            if not line:
                sys.exit(f"rawrtt: the server closed stdout at request {i}")
            if f'"id":{i},'.encode() in line.replace(b" ", b""):
                break
        times.append(time.perf_counter() - t0)
    p.stdin.close()
    p.wait(timeout=5)
print(f"{statistics.median(times):.6f} {statistics.mean(times):.6f} {n}")

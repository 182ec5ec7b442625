#!/usr/bin/env python3
"""timed.py FILE CMD...: run CMD (its output discarded) and write
"<wall seconds> <peak RSS KiB>" into FILE.

Wall time is taken with a monotonic clock, to the microsecond (GNU time's
%e rounds to 10 ms, a fifth of a 50 ms run). Peak RSS comes from GNU time
(%M), which starts CMD from its own small process: a child forked from
Python would count Python's own memory as the child's peak. The wall time
includes GNU time's own start (about a millisecond), for every tool alike.

With MCPCERT_BENCH_SERVER set to a process session id (a server the bench
started with setsid), a third figure follows: the CPU seconds that the
busiest thread of that session's processes used while CMD ran (the kernel's
per-thread run time, /proc/PID/task/TID/schedstat, in nanoseconds). A
server that answers on one thread (a Node or Python event loop) cannot
serve CMD's requests in less wall time than that.

With it, CMD also starts only once that server has settled: its threads
used under 2 ms of CPU in the last 100 ms (at most 5 s of waiting, not
timed). A Node server goes on working for a while after a run that left it
garbage or sessions (the official suite's leave server-everything busy for
about the first 50 ms of the next run), and the next tool measured, whichever
it is, should not pay for the one before it."""
import os
import subprocess
import sys
import tempfile
import time


def threads(sid):
    """{(pid, tid): nanoseconds run} for every thread of every process in session `sid`."""
    out = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            stat = open(f"/proc/{pid}/stat").read()
            # Fields after the command name (which may hold spaces): state is
            # field 3, session field 6.
            if int(stat.rsplit(")", 1)[1].split()[3]) != sid:
                continue
            for tid in os.listdir(f"/proc/{pid}/task"):
                out[(pid, tid)] = int(open(f"/proc/{pid}/task/{tid}/schedstat").read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return out


def settle(sid, window=0.1, quiet_ns=2_000_000, most=5.0):
    """Wait until session `sid`'s threads used under `quiet_ns` of CPU in one `window`."""
    end = time.monotonic() + most
    last = threads(sid)
    while time.monotonic() < end:
        time.sleep(window)
        now = threads(sid)
        used = sum(ns - last.get(t, 0) for t, ns in now.items())
        last = now
        if used < quiet_ns:
            return


out, cmd = sys.argv[1], sys.argv[2:]
sid = int(os.environ["MCPCERT_BENCH_SERVER"]) if os.environ.get("MCPCERT_BENCH_SERVER") else None
if sid is not None:
    settle(sid)
before = threads(sid) if sid is not None else {}
with tempfile.NamedTemporaryFile("r") as rss:
    start = time.perf_counter()
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name, *cmd],
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    # GNU time writes "Command exited with non-zero status N" first when
    # the command fails (a run with failures does): the figure is last.
    peak = [l for l in rss.read().splitlines() if l.strip()][-1].strip()
busiest = ""
if sid is not None:
    after = threads(sid)
    # A thread that started during the run counts from zero.
    busiest = f" {max((ns - before.get(t, 0) for t, ns in after.items()), default=0) / 1e9:.6f}"
with open(out, "w") as f:
    f.write(f"{wall:.6f} {peak}{busiest}\n")

#!/usr/bin/env python3
"""timed.py FILE CMD...: run CMD (its output discarded) and write
"<wall seconds> <peak RSS KiB>" into FILE.

Wall time is taken with a monotonic clock, to the microsecond (GNU time's
%e rounds to 10 ms, a fifth of a 50 ms run). Peak RSS comes from GNU time
(%M), which starts CMD from its own small process: a child forked from
Python would count Python's own memory as the child's peak. The wall time
includes GNU time's own start (about a millisecond), for every tool alike."""
import subprocess
import sys
import tempfile
import time

out, cmd = sys.argv[1], sys.argv[2:]
with tempfile.NamedTemporaryFile("r") as rss:
    start = time.perf_counter()
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", rss.name, *cmd],
                   stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    # GNU time writes "Command exited with non-zero status N" first when
    # the command fails (a run with failures does): the figure is last.
    peak = [l for l in rss.read().splitlines() if l.strip()][-1].strip()
with open(out, "w") as f:
    f.write(f"{wall:.6f} {peak}\n")

#!/usr/bin/env python3
"""reproducers-check.py REPORT.json...: replay the curl lines of every failed,
warned or errored case of mcpcert runs against Streamable HTTP servers that
are still up, and check that each request the case sent gets the HTTP status
it got in the run.

A reproducer's last lines are the case's own requests, one per exchange of
its transcript that went over HTTP, in order; the lines before them open the
sessions those requests use (the run's own sessions are ended by then). Each
line runs in one bash, in turn (the session ids are shell variables); the
status of a line is the first `HTTP/...` status line it printed (`curl -i`;
a line that keeps a session id shows its reply on stderr). A line without
`-i` (notifications/initialized) has no status to compare.

Skipped, and said: reports of other transports, HTTP with SSE (2024-11-05:
its reproducer needs a stream kept open), cases of the authorization suites
(their tokens come from mcpcert's test issuer, gone with the run), checks
over the whole run (their reproducer replays a sample), and exchanges the
run got no status for. Exit 1 if any status differs."""
import json
import re
import subprocess
import sys

STATUS = re.compile(r"HTTP/[0-9.]+ (\d{3})")


def statuses(lines):
    """The HTTP status each line printed (None: none), running them in turn in one bash."""
    marked = []
    for k, line in enumerate(lines):
        marked.append(f"printf '\\n@@{k}@@\\n'; printf '\\n@@{k}@@\\n' >&2")
        marked.append(line)
    p = subprocess.run(["bash", "-c", "\n".join(marked)], capture_output=True, text=True, timeout=120)
    out = []
    for k in range(len(lines)):
        found = None
        for stream in (p.stdout, p.stderr):
            seg = stream.split(f"@@{k}@@", 1)
            if len(seg) < 2:
                continue
            seg = seg[1].split(f"@@{k + 1}@@", 1)[0]
            m = STATUS.search(seg)
            if m:
                found = int(m.group(1))
                break
        out.append(found)
    return out


def check(path):
    r = json.load(open(path))
    if r.get("transport") != "http":
        return 0, 0, [f"{path}: not an HTTP run, skipped"]
    checked, bad, notes = 0, 0, []
    for c in r["cases"]:
        if c["verdict"] in ("pass", "n/a"):
            continue
        rep = c.get("reproducer") or ""
        if "HTTP with SSE" in rep:
            notes.append(f"{c['id']}: HTTP with SSE, skipped")
            continue
        if "/auth/" in c["id"]:
            notes.append(f"{c['id']}: authorization case, skipped")
            continue
        if "this check judges all traffic of the run" in rep:
            continue
        lines = [l for l in rep.splitlines() if l and not l.startswith(("rerun", "#"))]
        sent = [e for e in c.get("transcript", []) if e.get("http_method")]
        if not lines or not sent or len(lines) < len(sent):
            notes.append(f"{c['id']}: {len(lines)} curl lines for {len(sent)} exchanges, skipped")
            continue
        got = statuses(lines)[len(lines) - len(sent):]
        checked += 1
        diffs = [
            f"request {i + 1} ({e.get('rpc_method') or e.get('http_method')}): run {e['status']}, replay {g}"
            for i, (e, g) in enumerate(zip(sent, got))
            if e.get("status") is not None and g is not None and e["status"] != g
        ]
        if diffs:
            bad += 1
            notes.append(f"DIFFERS {c['id']} ({c['verdict']}): " + "; ".join(diffs))
    return checked, bad, notes


def main():
    total = failed = 0
    for path in sys.argv[1:]:
        checked, bad, notes = check(path)
        total += checked
        failed += bad
        print(f"{path}: {checked} reproducers replayed, {bad} differ")
        for n in notes:
            print(f"  {n}")
    sys.exit(1 if failed else 0)


main()

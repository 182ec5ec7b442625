#!/usr/bin/env python3
"""reproducers-check.py REPORT.json...: replay the reproducers of every failed,
warned or errored case of mcpcert runs against servers that are still up (or,
over stdio, that their command starts again), and check that each request the
case sent gets the answer it got in the run.

HTTP (Streamable): a reproducer's last lines are the case's own requests, one
per exchange of its transcript that went over HTTP, in order; the lines before
them open the sessions those requests use (the run's own sessions are ended by
then). Each line runs in one bash, in turn (the session ids are shell
variables); the status of a line is the first `HTTP/...` status line it
printed (`curl -i`; a line that keeps a session id shows its reply on stderr).
A line without `-i` (notifications/initialized) has no status to compare. Each
request must get the HTTP status it got in the run.

stdio: each `{ printf ...; sleep N; } | CMD` line starts the server and pipes
it the case's lines; every response the run got (by its id) must come back of
the same kind: a result (with `isError` the same), or an error with the same
code. A server still running once its input has ended, and that has sent
no response for 10 s, is stopped (its answers are in).

HTTP with SSE (2024-11-05): the reproducer's stream line is started and
kept open; its `endpoint` event names the URL (resolved against the
stream's, a space percent-encoded) that the reproducer's POST lines go to,
as $ENDPOINT, in turn; the answers come on the stream (as `message` events,
or under whatever name the server gave them), and each response the run got
(by its id) must come back of the same kind, as over stdio.

Behind [auth] (a protected server), the curl lines make each token again
with `mcpcert auth-token` (the issuer's keys are kept): `mcpcert` must be on
PATH.

Checks over the whole run (the wire audits) replay the exchanges that drew
their findings, each preceded by the DELETE that had ended its session, if
one had: over Streamable HTTP these are compared as any case's are; over
stdio and HTTP with SSE they are skipped. Skipped, and said: exchanges the
run got no status or answer for. The cases of a report are replayed a few at a time. Exit 1 if any
answer differs."""
import concurrent.futures
import json
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import urllib.parse

STATUS = re.compile(r"HTTP/[0-9.]+ (\d{3})")


def statuses(lines):
    """The HTTP status each request line printed (None: none), running them in
    turn in one bash. Lines sent together (`curl ... &`, then `wait`) get the
    statuses of their group, in ascending order; the `wait` line is dropped."""
    marked = []
    for k, line in enumerate(lines + [":"]):
        marked.append(f"printf '\\n@@{k}@@\\n'; printf '\\n@@{k}@@\\n' >&2")
        marked.append(line)
    p = subprocess.run(["bash", "-c", "\n".join(marked)], capture_output=True, text=True, timeout=120)

    def found(a, b):
        codes = []
        for stream in (p.stdout, p.stderr):
            seg = stream.split(f"@@{a}@@", 1)
            if len(seg) == 2:
                codes += [int(c) for c in STATUS.findall(seg[1].split(f"@@{b}@@", 1)[0])]
        return codes

    out, k = [], 0
    while k < len(lines):
        if lines[k].endswith(" &"):
            end = next((j for j in range(k, len(lines)) if lines[j] == "wait"), len(lines) - 1)
            group = sorted(found(k, end + 1))
            out += [group[i] if i < len(group) else None for i in range(end - k)]
            k = end + 1
        else:
            codes = found(k, k + 1)
            out.append(codes[0] if codes else None)
            k += 1
    return out


def kind(v):
    """A response's kind: ("result", isError) or ("error", code); None for other messages."""
    if not isinstance(v, dict) or "id" not in v or "method" in v:
        return None
    if "error" in v:
        return ("error", (v.get("error") or {}).get("code"))
    if "result" in v:
        res = v["result"]
        return ("result", bool(isinstance(res, dict) and res.get("isError")))
    return None


def responses(text):
    """{id: kind} of the JSON-RPC responses among lines of text."""
    out = {}
    for line in text.splitlines():
        try:
            v = json.loads(line)
        except ValueError:
            continue
        k = kind(v)
        if k is not None:
            out[json.dumps(v["id"])] = k
    return out


def replay_http(c, lines):
    """The differences between the run's HTTP statuses and the replay's; None: not comparable."""
    sent = [e for e in c.get("transcript", []) if e.get("http_method")]
    got = statuses(lines)
    if not sent or len(got) < len(sent):
        return None
    got = got[len(got) - len(sent):]
    # The reproducer sends together what the run sent at once (its lines
    # end with " &"): their statuses are compared as a set.
    want = [e.get("status") for e in sent]
    together = [l.endswith(" &") for l in lines if l != "wait"][-len(sent):]
    k = 0
    while k < len(sent):
        end = next((j for j in range(k, len(sent)) if not together[j]), len(sent)) if together[k] else k + 1
        want[k:end] = sorted(want[k:end], key=lambda x: (x is not None, x or 0))
        k = end
    return [
        f"request {i + 1} ({e.get('rpc_method') or e.get('http_method')}): run HTTP {w}, replay HTTP {g}"
        for i, (e, w, g) in enumerate(zip(sent, want, got))
        if w is not None and g is not None and w != g
    ]


def replay_stdio(c, lines):
    """The differences between the run's responses and the replay's; None: not comparable."""
    want = run_answers(c)
    if not want:
        return None
    got = {}
    for line in lines:
        wait = int(m.group(1)) if (m := re.search(r"; sleep (\d+); }", line)) else 0
        got.update(responses(run_stdio_line(line, wait)))
    return [f"id {i}: run {w}, replay {got.get(i, 'no answer')}" for i, w in want.items() if got.get(i) != w]


# A stdio line's server whose input has ended (its sleep is over) and that
# has sent no response for this long is done answering: it is stopped rather
# than waited for (some servers keep running at end of input, with timers
# of their own that send notifications, or work still pending).
IDLE_AFTER_INPUT = 10


def run_stdio_line(line, wait):
    """The standard output of one stdio reproducer line (`{ printf ...; sleep
    N; } | CMD`): its process group is stopped once it has exited, or, after
    the sleep, sent no response for IDLE_AFTER_INPUT s, or at N + 60 s."""
    p = subprocess.Popen(["bash", "-c", line], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, errors="replace", start_new_session=True)
    out, last = [], [time.monotonic()]

    def read():
        for l in p.stdout:
            out.append(l)
            if responses(l):
                last[0] = time.monotonic()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    start = time.monotonic()
    while p.poll() is None:
        now = time.monotonic()
        if now - start > wait + 60 or (now - start > wait and now - last[0] > IDLE_AFTER_INPUT):
            break
        time.sleep(0.2)
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    p.wait()
    reader.join(5)
    return "".join(out)


def run_answers(c):
    """{id: kind} of the responses in the frames of the case's transcript."""
    want = {}
    for e in c.get("transcript", []):
        for f in e.get("frames") or []:
            want.update(responses(f.get("raw", "")))
    return want


def sse_events(stream, into):
    """Put each event of an SSE text stream into the queue `into` as (event,
    data), then None when the stream ends."""
    event, data = "message", []
    for line in stream:
        line = line.rstrip("\r\n")
        if line == "":
            if data:
                into.put((event, "\n".join(data)))
            event, data = "message", []
        elif line.startswith("event:"):
            event = line[len("event:"):].strip()
        elif line.startswith("data:"):
            value = line[len("data:"):]
            data.append(value[1:] if value.startswith(" ") else value)
    into.put(None)


# The characters a URL may hold as they are (RFC 3986's reserved and
# unreserved ones, and % of an escape already there).
URL_CHARS = ":/?#[]@!$&'()*+,;=%-._~"


def replay_sse(c, rep):
    """The differences between the run's responses and the replay's over HTTP
    with SSE; None: not comparable."""
    lines = rep.splitlines()
    stream = next((l for l in lines if l.startswith("curl -sS -N ")), None)
    posts = [l for l in lines if l.startswith('curl -sS -i -X POST "$ENDPOINT"')]
    want = run_answers(c)
    if not stream or not posts or not want:
        return None
    url = shlex.split(stream)[-1]
    p = subprocess.Popen(["bash", "-c", stream], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, start_new_session=True)
    events = queue.Queue()
    threading.Thread(target=sse_events, args=(p.stdout, events), daemon=True).start()
    got = {}

    def next_event(deadline):
        try:
            return events.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return None

    try:
        endpoint, deadline = None, time.monotonic() + 10
        while endpoint is None:
            ev = next_event(deadline)
            if ev is None:
                return ["the stream gave no endpoint event within 10 s"]
            if ev[0] == "endpoint":
                # Characters no URL may hold (a space) percent-encoded, as
                # the run's client does.
                endpoint = urllib.parse.quote(urllib.parse.urljoin(url, ev[1].strip()), safe=URL_CHARS)
        env = dict(os.environ, ENDPOINT=endpoint)
        for line in posts:
            subprocess.run(["bash", "-c", line], env=env, capture_output=True, timeout=60)
        deadline = time.monotonic() + 10
        while any(i not in got for i in want):
            ev = next_event(deadline)
            if ev is None:
                break
            # The run's answers whatever their event's name (a wrong name is
            # what a case judges, and the rerun line shows).
            if ev[0] != "endpoint":
                try:
                    k = kind(json.loads(ev[1]))
                except ValueError:
                    k = None
                if k is not None:
                    got[json.dumps(json.loads(ev[1])["id"])] = k
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    return [f"id {i}: run {w}, replay {got.get(i, 'no answer')}" for i, w in want.items() if got.get(i) != w]


def replay(c, transport):
    """(case id, verdict, differences or None, why skipped)."""
    rep = c.get("reproducer") or ""
    # A check over the whole run replays the exchanges that drew its
    # findings (with the DELETE that ended a session before one): over
    # Streamable HTTP each keeps its status, as any case's do; over stdio
    # and HTTP with SSE a sample is not compared.
    if "this check judges all traffic of the run" in rep and (transport == "stdio" or "# HTTP with SSE" in rep):
        return c["id"], c["verdict"], None, ""
    if "# HTTP with SSE" in rep:
        diffs = replay_sse(c, rep)
    elif transport == "stdio":
        lines = [l for l in rep.splitlines() if l.startswith("{ printf")]
        diffs = replay_stdio(c, lines) if lines else None
    else:
        lines = [l for l in rep.splitlines() if l and not l.startswith(("rerun", "#"))]
        diffs = replay_http(c, lines) if lines else None
    return c["id"], c["verdict"], diffs, "" if diffs is not None else "nothing to compare"


def check(path):
    r = json.load(open(path))
    transport = r.get("transport")
    cases = [c for c in r["cases"] if c["verdict"] not in ("pass", "n/a")]
    checked, bad, notes = 0, 0, []
    # stdio replays wait out their pipes' grace: two at once (each starts the
    # server; more would make a slow-starting one outlast its grace).
    with concurrent.futures.ThreadPoolExecutor(max_workers=2 if transport == "stdio" else 1) as pool:
        for cid, verdict, diffs, why in pool.map(lambda c: replay(c, transport), cases):
            if diffs is None:
                if why:
                    notes.append(f"{cid}: {why}, skipped")
                continue
            checked += 1
            if diffs:
                bad += 1
                notes.append(f"DIFFERS {cid} ({verdict}): " + "; ".join(diffs))
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

#!/usr/bin/env python3
"""Turn the raw figures of scripts/bench.sh into a Markdown report.

usage: bench.py BENCH_DIR REPS OFFICIAL_VERSION OUT.md

Prints the tables and writes them, with how they were made, to OUT.md.
Medians over REPS runs; ratios are taken between medians of the same run.
"""
import glob
import json
import os
import re
import math
import statistics
import sys
import time

b, reps, official_version, out = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]


def times(pattern):
    """(median seconds, median peak KiB) over the files scripts/lib/timed.py wrote."""
    secs, kib = [], []
    for f in sorted(glob.glob(pattern)):
        lines = [l for l in open(f).read().splitlines() if l.strip()]
        s, k = lines[-1].split()
        secs.append(float(s))
        kib.append(int(k))
    if not secs:
        sys.exit(f"bench: no figures for {pattern}")
    return statistics.median(secs), statistics.median(kib)


def down(x):
    """x to one decimal, rounded down: 9.98× must not read as the 10× it misses."""
    return f"{math.floor(x * 10 + 1e-9) / 10:.1f}"


def mib(k):
    return f"{k / 1024:.1f} MiB"


def report(path):
    return json.load(open(path))


lines = []
md = lambda *ls: lines.extend(ls)
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
md("# mcpcert benchmarks",
   "",
   f"Written by `scripts/bench.sh` on {time.strftime('%Y-%m-%d', time.gmtime())}: {os.cpu_count()} cores ({cpu}),",
   f"medians of {reps} runs each, mcpcert as a release build, {official_version} on Node 24.",
   "Wall time and peak RSS are taken around each whole run by `scripts/lib/timed.py`: a monotonic",
   "clock, to the microsecond, and GNU time's peak RSS (for the official suite: its Node process).",
   "These are measurements of one machine on one day, not guarantees; CI does not run them.",
   "")

# 1. side by side
md("## mcpcert and the official suite on the same HTTP servers", "",
   "Both are asked for one revision (`--spec-version` / `--revision`) of the same server, as",
   "`scripts/compare-official.sh` does. \"checks\" counts the official suite's verdict lines",
   "(INFO lines left out); \"cases\" counts mcpcert's cases of that revision, and how many got a",
   "verdict other than n/a. The scopes overlap but are not the same: `docs/interop.md` maps them.",
   "",
   "\"server round trip\" is the median of 100 raw `tools/list` requests (`scripts/rawrtt.py`; for",
   "the 2025-11-25 server, in a session rawrtt.py opens first), the least any client pays per",
   "request. mcpcert runs with",
   "its default `-j` (cases at once; the number of CPUs, at least 4) and with `-j 1` (one case",
   "at a time).",
   "",
   "The floor is the least time any client needs to send mcpcert's requests and wait out its",
   "windows. It has three parts:",
   "",
   "- **chain**: the longest chain of requests that must wait for each other: for each wave of",
   "  cases mcpcert ran together (`wave` in report.json), the most requests one case of it sent",
   "  in a row (shared lists it waited for included), summed over the waves, times the round",
   "  trip. This is the floor issue 15 names; it assumes the server answers any number of",
   "  requests at once as fast as one.",
   "- **throughput**: the requests the run sent (`requests_sent` in report.json: every HTTP",
   "  request, probes and notifications included) over the most requests per second",
   "  the server answered when crowded: mcpcert's own `--load 8` replay, eight connections at",
   "  once, in a run of its own. A server that answers one request at a time (one Python or Node",
   "  process) cannot serve the run faster than this, however the requests are spread.",
   "- **windows**: time the checks wait on purpose, for what a server sends unasked: a",
   "  `subscriptions/listen` stream watched until it is acknowledged (and, with a trigger, until",
   "  the change it causes has had 100 ms to arrive); the streams one check opens are watched at",
   "  once, so per check (per block of request ids) the longest watch, however many cases show it.",
   "",
   "floor = max(chain, throughput) + windows. Process start, judging and writing the reports",
   "come on top of it.",
   "",
   "| server | revision | official: checks, wall, peak RSS | mcpcert: cases (judged), wall, peak RSS | mcpcert -j 1 | round trip | chain | throughput | windows | floor | faster than official | wall / floor |",
   "|---|---|---|---|---|---|---|---|---|---|---|---|")
tot_o = tot_m = 0.0
goals = []
bound = []
for name, rev in [("refserver", "2026-07-28"), ("fastmcp", "2026-07-28"), ("rmcp", "2026-07-28"), ("server-everything", "2025-11-25")]:
    ow, ok = times(f"{b}/{name}/official.*.time")
    mw, mk = times(f"{b}/{name}/mcpcert.*.time")
    m1, _ = times(f"{b}/{name}/mcpcert-j1.*.time")
    tot_o += ow
    tot_m += mw
    checks = 0
    for f in glob.glob(f"{b}/{name}/official.1/*/checks.json"):
        checks += sum(1 for c in json.load(open(f)) if c["status"] != "INFO")
    r = report(f"{b}/{name}/mcpcert.1.json")
    cases = [c for c in r["cases"] if c["revision"] == rev]
    judged = sum(1 for c in cases if c["verdict"] != "n/a")
    try:
        rtt = float(open(f"{b}/{name}/raw.txt").read().split()[0])
        rtt_note = ""
    except (OSError, ValueError, IndexError):
        # One request at a time (-j 1): what concurrency adds is left out.
        r1 = report(f"{b}/{name}/mcpcert-j1.1.json")
        ms = [e["ms"] for c in r1["cases"] if c["revision"] == rev for e in c.get("transcript", []) if e.get("sent") is not None]
        rtt = statistics.median(ms) / 1000 if ms else 0.0
        rtt_note = " (mcpcert's, -j 1)"
    waves, windows = {}, {}
    sent = set()
    for c in r["cases"]:
        tr = c.get("transcript", [])
        n = sum(1 for e in tr if e.get("sent") is not None)
        for e in tr:
            if e.get("sent") is None:
                continue
            sent.add((e.get("http_method"), e["sent"], json.dumps(e.get("sent_headers", []))))
            # Listen streams opened by one check (one block of a million
            # request ids: a case's or a shared fact's) were watched at once,
            # however many cases show them.
            if e.get("label", "").startswith("subscriptions/listen"):
                digits = re.sub(r"\D", "", str(json.loads(e["sent"]).get("id", "")))
                block = int(digits) // 1_000_000 if digits else e["sent"]
                windows[block] = max(windows.get(block, 0), e.get("ms", 0))
        if c.get("wave") is not None:
            waves[c["wave"]] = max(waves.get(c["wave"], 0), n)
    chain = sum(waves.values())
    chain_s = chain * rtt
    try:
        per_s = next(l["per_second"] for l in report(f"{b}/{name}/load.json").get("load", []) if l["revision"] == rev)
    except (OSError, StopIteration, ValueError):
        per_s = 0.0
    requests = r.get("requests_sent") or len(sent)
    thr_s = requests / per_s if per_s else 0.0
    win_s = sum(windows.values()) / 1000
    floor = max(chain_s, thr_s) + win_s
    ratio = ow / mw
    goals.append((name, ratio >= 10, floor > 0 and mw <= 2 * floor, mk * 1024 < 50_000_000, mw / chain_s if chain_s else float("nan")))
    if ratio < 10 and floor >= ow / 10:
        bound.append(f"{name}: 10× would be {ow / 10:.3f} s, under the floor of {floor:.3f} s that the server's own "
                     f"throughput sets for these {requests} requests")
    md(f"| {name} | {rev} | {checks}, {ow:.3f} s, {mib(ok)} | {len(cases)} ({judged}), {mw:.3f} s, {mib(mk)} | {m1:.3f} s | "
       f"{rtt * 1000:.2f} ms{rtt_note} | {chain} × rtt = {chain_s:.3f} s | {requests} / {per_s:.0f} per s = {thr_s:.3f} s | "
       f"{win_s:.3f} s | {floor:.3f} s | {down(ratio)}× | {mw / floor if floor else float('nan'):.1f}× |")
md("", f"Over the four servers: official {tot_o:.3f} s, mcpcert {tot_m:.3f} s, **{down(tot_o / tot_m)}× faster**.", "",
   "Goals (issue 15): " + "; ".join(
       f"{n}: 10× {'met' if t else 'NOT met'}, within 2× of the floor {'met' if f else 'NOT met'} "
       f"(of the chain alone: {c:.1f}×), under 50 MB {'met' if m else 'NOT met'}"
       for n, t, f, m, c in goals) + ".", "")
if bound:
    md("Out of reach for any client that sends these requests: " + "; ".join(bound) + ".", "")

# 2. overhead
md("## mcpcert's own overhead on the reference server", "",
   "The whole catalogue against the bundled reference server (dual era, the fixture profile),",
   "as the main job runs it. \"exchanges\" counts the request/response pairs in the report's",
   "transcripts (one shown in two cases counts twice), so time per exchange is an upper bound that",
   "includes process start, judging and report writing. The raw round trip is `scripts/rawrtt.py`:",
   "300 `tools/list` requests back to back on one connection or pipe, judging nothing.",
   "",
   "| transport | cases (judged) | wall | cases/s | exchanges | wall per exchange | raw round trip | ratio |",
   "|---|---|---|---|---|---|---|---|")
for t in ["stdio", "http"]:
    w, k = times(f"{b}/overhead/{t}.*.time")
    r = report(f"{b}/overhead/{t}.1.json")
    judged = sum(1 for c in r["cases"] if c["verdict"] != "n/a")
    ex = sum(1 for c in r["cases"] for e in c.get("transcript", []) if e.get("sent") is not None)
    raw = float(open(f"{b}/overhead/raw-{t}.txt").read().split()[0])
    per = w / ex if ex else float("nan")
    md(f"| {t} | {len(r['cases'])} ({judged}) | {w:.3f} s | {judged / w:.0f} | {ex} | {per * 1000:.2f} ms | "
       f"{raw * 1000:.3f} ms | {per / raw:.0f}× |")
md("")

# 3. 10,000 tools
w, k = times(f"{b}/many/run.*.time")
r = report(f"{b}/many/run.1.json")
walk = next(c for c in r["cases"] if c["id"] == "2026-07-28/tools/list-walk")
md("## 10,000 tools walked and admitted", "",
   "`fixtures/hostile/hostile.py many-tools 10000` (one page of 10,000 small tools, about 0.6 MB of JSON) over",
   "stdio, the tool suite only (`tools/`): the walk, every descriptor admitted, the calls allowed.",
   "The goal is in megabytes (50,000,000 bytes, about 47.7 MiB); the table shows MiB.",
   "",
   "| wall | peak RSS (GNU time) | peak RSS (report) | list-walk verdict | goal: under 50 MB |",
   "|---|---|---|---|---|",
   f"| {w:.3f} s | {mib(k)} | {mib(r.get('peak_rss_kib') or 0)} | {walk['verdict']} | "
   f"{'met' if k * 1024 < 50_000_000 else 'not met'} |",
   "")

text = "\n".join(lines) + "\n"
open(out, "w").write(text)
print(text, end="")

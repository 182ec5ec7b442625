#!/usr/bin/env python3
"""Turn the raw figures of scripts/bench.sh into a Markdown report.

usage: bench.py BENCH_DIR REPS FAST OFFICIAL_VERSION OUT.md

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

b, reps, fast, official_version, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]


def times(pattern):
    """(median seconds, median peak KiB) over the files scripts/lib/timed.py wrote."""
    secs, kib = [], []
    for f in sorted(glob.glob(pattern)):
        lines = [l for l in open(f).read().splitlines() if l.strip()]
        s, k = lines[-1].split()[:2]
        secs.append(float(s))
        kib.append(int(k))
    if not secs:
        sys.exit(f"bench: no figures for {pattern}")
    return statistics.median(secs), statistics.median(kib)


def busy(pattern):
    """The median CPU seconds of the server's busiest thread during each run
    (the third figure timed.py writes with MCPCERT_BENCH_SERVER), or 0.0."""
    xs = []
    for f in sorted(glob.glob(pattern)):
        fields = [l for l in open(f).read().splitlines() if l.strip()][-1].split()
        if len(fields) > 2:
            xs.append(float(fields[2]))
    return statistics.median(xs) if xs else 0.0


def down(x):
    """x to one decimal, rounded down: 9.98× must not read as the 10× it misses."""
    return f"{math.floor(x * 10 + 1e-9) / 10:.1f}"


def mib(k):
    return f"{k / 1024:.1f} MiB"


def report(path):
    return json.load(open(path))


STATEFUL = {"logging/setLevel", "resources/subscribe", "resources/unsubscribe"}


def read_only_tools(cases):
    """Tool names a tools/list page of the report marks readOnlyHint: true."""
    ro = set()
    for c in cases:
        for e in c.get("transcript", []):
            if e.get("rpc_method") != "tools/list":
                continue
            for f in e.get("frames", []):
                try:
                    v = json.loads(f["raw"])
                except (ValueError, KeyError, TypeError):
                    continue
                for t in (v.get("result") or {}).get("tools", []) if isinstance(v, dict) else []:
                    if isinstance(t, dict) and (t.get("annotations") or {}).get("readOnlyHint") is True:
                        ro.add(t.get("name"))
    return ro


def depth(exchanges):
    """The longest run of a case's requests that came one after another
    (none overlapping the next): the requests that had to wait for each
    other, as far as the transcript shows. Listen streams are windows, not
    steps."""
    spans = sorted(((e["sent_at_ms"], e["sent_at_ms"] + e.get("ms", 0)) for e in exchanges
                    if e.get("sent_at_ms") is not None and not e.get("label", "").startswith("subscriptions/listen")),
                   key=lambda x: x[1])
    n, last = 0, -1
    for start, end in spans:
        if start >= last:
            n, last = n + 1, end
    return n


def state_changes(c, ro, listed):
    """What a case sends that may change what other requests see: tools/call
    of a listed tool not marked read-only (a name the server does not list
    runs nothing), logging/setLevel, a (un)subscription, a DELETE. As the
    bodies sent (a shared fact's shown by several cases is the same)."""
    out = []
    for e in c.get("transcript", []):
        if e.get("sent_at_ms") is None:
            continue
        if e.get("http_method") == "DELETE" or e.get("rpc_method") in STATEFUL:
            out.append(e.get("sent") or e.get("label"))
        elif e.get("rpc_method") == "tools/call":
            try:
                name = json.loads(e["sent"])["params"]["name"]
            except (ValueError, KeyError, TypeError):
                name = None
            if name in listed and name not in ro:
                out.append(e["sent"])
    return out


def independent_floor(r, rev):
    """(chain in round trips, windows in seconds) for the cases of `rev` in
    report `r`, whatever mcpcert's schedule: the cases that change state
    (protocol: they must not overlap anything) each add their own chain;
    between two of them every other case could run at once, so each such
    stretch adds its longest chain. A case's chain is its requests that
    came one after another (`depth`), plus the pages of the shared walk of
    a list when it sends a request naming an item of that list and shows
    none of the walk's pages itself."""
    cases = [c for c in r["cases"] if c["revision"] == rev]
    ro = read_only_tools(cases)
    # The most pages any walk of a list had ("… page N" in its labels).
    pages = {}
    for c in cases:
        for e in c.get("transcript", []):
            m = e.get("rpc_method") or ""
            n = re.search(r"\bpage (\d+)", e.get("label", ""))
            if m.endswith("/list") and n:
                pages[m] = max(pages.get(m, 0), int(n.group(1)))
    listed = set()
    for c in cases:
        for e in c.get("transcript", []):
            for f in e.get("frames", []) if e.get("rpc_method") == "tools/list" else []:
                try:
                    listed.update(t.get("name") for t in json.loads(f["raw"]).get("result", {}).get("tools", []) if isinstance(t, dict))
                except (ValueError, KeyError, TypeError, AttributeError):
                    pass
    # A state change shown by several cases (a shared fact's) counts once.
    counted = set()
    needs = {"tools/call": "tools/list", "prompts/get": "prompts/list", "resources/read": "resources/list"}
    chain, stretch = 0, 0
    windows = {}
    # Lists walked before the stretch began, and in it.
    done, walking = set(), set()
    for c in cases:
        tr = [e for e in c.get("transcript", []) if e.get("sent_at_ms") is not None]
        d = depth(tr)
        methods = {e.get("rpc_method") for e in tr}
        walking |= {m for m in methods if m in pages}
        for m, lst in needs.items():
            if m in methods and lst not in methods and lst not in done:
                d += pages.get(lst, 0)
                walking.add(lst)
                break
        for e in tr:
            if e.get("label", "").startswith("subscriptions/listen"):
                digits = re.sub(r"\D", "", str(json.loads(e["sent"]).get("id", "")))
                block = int(digits) // 1_000_000 if digits else e["sent"]
                windows[block] = max(windows.get(block, 0), e.get("ms", 0))
        changes = state_changes(c, ro, listed)
        key = tuple(sorted(changes))
        if changes and key not in counted:
            counted.add(key)
            chain += stretch + d
            stretch = 0
            done |= walking
        elif not changes:
            stretch = max(stretch, d)
    return chain + stretch, sum(windows.values()) / 1000


lines = []
md = lambda *ls: lines.extend(ls)
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
md("# mcpcert benchmarks",
   "",
   f"Written by `scripts/bench.sh` on {time.strftime('%Y-%m-%d', time.gmtime())}: {os.cpu_count()} cores ({cpu}),",
   f"medians of {reps} runs each (mcpcert's default run on loopback: of {reps * fast}), mcpcert as the dist build (the release tarballs; `docs/bench.md`'s build part compares the `cargo install` build), {official_version} on Node 24.",
   "Wall time and peak RSS are taken around each whole run by `scripts/lib/timed.py`: a monotonic",
   "clock, to the microsecond, and GNU time's peak RSS (for the official suite: its Node process).",
   "These are measurements of one machine on one day, not guarantees; CI does not run them.",
   "")

# 1. side by side
md("## mcpcert and the official suite on the same HTTP servers", "",
   "Both are asked for one revision (`--spec-version` / `--revision`) of the same server, as",
   "`scripts/compare-official.sh` does, one after the other, each starting once the server has",
   "settled (its threads used under 2 ms of CPU in 100 ms: a Node server goes on working after a",
   "run, and the next one, whichever tool it is, should not pay for it). \"checks\" counts the official suite's verdict lines",
   "(INFO lines left out); \"cases\" counts mcpcert's cases of that revision, and how many got a",
   "verdict other than n/a. The scopes overlap but are not the same: `docs/interop.md` maps them.",
   "",
   "\"server round trip\" is the median of 100 raw `tools/list` requests (`scripts/rawrtt.py`; for",
   "the 2025-11-25 server, in a session rawrtt.py opens first), the least any client pays per",
   "request. mcpcert runs with",
   "its default `-j` (over HTTP 32 requests in flight) and with `-j 1` (one case and one request",
   "at a time).",
   "",
   "The floor is the least time any client needs to send mcpcert's requests and wait out its",
   "windows. It has four parts:",
   "",
   "- **chain**: the longest chain of requests that must wait for each other, whatever mcpcert's",
   "  schedule (its waves, `-j`, what it runs alone): the cases that change state add their own",
   "  chains, and between two of them only the longest chain of the rest counts (worked out as in",
   "  \"The same servers across a network\" below), times the round trip. It assumes the server",
   "  answers any number of requests at once as fast as one.",
   "- **throughput**: the requests the run sent (`requests_sent` in report.json: every HTTP",
   "  request, probes and notifications included) over the most requests per second",
   "  the server answered when crowded: mcpcert's own `--load 8` replay, eight connections at",
   "  once, in runs of their own (the median rate of as many runs as each other figure). A server",
   "  that answers one request at a time (one Python or Node process) cannot serve the run faster",
   "  than this, however the requests are spread.",
   "- **server busy**: the CPU time the server's busiest thread (of every process the server",
   "  started) used while mcpcert's `-j 1` run sent the same requests one at a time, the median",
   "  of its runs (`scripts/lib/timed.py`, from the kernel's per-thread run time). A server that",
   "  answers on one thread (a Node or Python event loop) needs at least that long for them,",
   "  whoever sends them. It catches what the `--load` replay leaves out: that replay repeats",
   "  the run's read-only requests, while the run also opens and ends sessions (on the",
   "  2025-11-25 server each `initialize` builds a server object of its own).",
   "- **windows**: time the checks wait on purpose, for what a server sends unasked: a",
   "  `subscriptions/listen` stream watched until it is acknowledged (and, with a trigger, until",
   "  the change it causes has had 100 ms to arrive); the streams one check opens are watched at",
   "  once, so per check (per block of request ids) the longest watch, however many cases show it;",
   "  the median over mcpcert's default runs (an acknowledgement takes a millisecond or two on",
   "  loopback, and one slow run's figure would stand for all).",
   "",
   "floor = max(chain, throughput, server busy) + windows. Process start, judging and writing the reports",
   "come on top of it. \"one case\" is mcpcert's wall for a run of a single case (process start, the",
   "catalogue, the revision probe, one request at most, the three reports, exit): what every run costs,",
   "whatever the server.",
   "",
   "| server | revision | official: checks, wall, peak RSS | mcpcert: cases (judged), wall, peak RSS | mcpcert -j 1 | mcpcert: one case | round trip | chain | throughput | server busy | windows | floor | faster than official | wall / floor |",
   "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
tot_o = tot_m = 0.0
goals = []
bound = []
rates = {}  # name: the server's --load 8 requests per second (loopback)
for name, rev in [("refserver", "2026-07-28"), ("fastmcp", "2026-07-28"), ("rmcp", "2026-07-28"), ("server-everything", "2025-11-25")]:
    ow, ok = times(f"{b}/{name}/official.*.time")
    mw, mk = times(f"{b}/{name}/mcpcert.*.time")
    m1, _ = times(f"{b}/{name}/mcpcert-j1.*.time")
    one, _ = times(f"{b}/{name}/one.*.time")
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
    sent = set()
    for c in r["cases"]:
        for e in c.get("transcript", []):
            if e.get("sent") is not None:
                sent.add((e.get("http_method"), e["sent"], json.dumps(e.get("sent_headers", []))))
    chain, _ = independent_floor(r, rev)
    # The windows end when the server acknowledges (a millisecond or two on
    # loopback): the median over every default run, not one run's.
    win_s = statistics.median(independent_floor(report(f), rev)[1] for f in sorted(glob.glob(f"{b}/{name}/mcpcert.*.json")))
    chain_s = chain * rtt
    loads = []
    for f in sorted(glob.glob(f"{b}/{name}/load.*.json")):
        try:
            loads.append(next(l["per_second"] for l in report(f).get("load", []) if l["revision"] == rev))
        except (OSError, StopIteration, ValueError):
            pass
    per_s = statistics.median(loads) if loads else 0.0
    rates[name] = per_s
    requests = r.get("requests_sent") or len(sent)
    thr_s = requests / per_s if per_s else 0.0
    busy_s = busy(f"{b}/{name}/mcpcert-j1.*.time")
    floor = max(chain_s, thr_s, busy_s) + win_s
    ratio = ow / mw
    goals.append((name, ratio >= 10, mw / (floor + one) if floor + one else float("nan"), mk * 1024 < 50_000_000))
    if ratio < 10 and floor >= ow / 10:
        bound.append(f"{name}: 10× would be {ow / 10:.3f} s, under the floor of {floor:.3f} s that the server's own "
                     f"throughput sets for these {requests} requests")
    md(f"| {name} | {rev} | {checks}, {ow:.3f} s, {mib(ok)} | {len(cases)} ({judged}), {mw:.3f} s, {mib(mk)} | {m1:.3f} s | {one:.3f} s | "
       f"{rtt * 1000:.2f} ms{rtt_note} | {chain} × rtt = {chain_s:.3f} s | {requests} / {per_s:.0f} per s = {thr_s:.3f} s | "
       f"{busy_s:.3f} s | {win_s:.3f} s | {floor:.3f} s | {down(ratio)}× | {mw / floor if floor else float('nan'):.1f}× |")
md("", f"Over the four servers: official {tot_o:.3f} s, mcpcert {tot_m:.3f} s, **{down(tot_o / tot_m)}× faster**.", "",
   "Goals (issues 15 and 24): " + "; ".join(
       f"{n}: 10× {'met' if t else 'NOT met'}, under 50 MB {'met' if m else 'NOT met'}; wall / (floor + one case) {f:.1f}×"
       for n, t, f, m in goals) + ".",
   "",
   "The floor counts no client work; what mcpcert adds to it is at least its fixed cost, the \"one case\"",
   "column (process start, catalogue, probe, reports). Issue 53 retired the goal of the loopback runs",
   "within 1.5× of the floor: a few milliseconds there are not where users wait (the stdio table below is).",
   "")
if bound:
    md("Out of reach for any client that sends these requests: " + "; ".join(bound) + ".", "")

# 1b. at a distance
delays = sorted({int(os.path.basename(d).rsplit("-", 1)[1]) for d in glob.glob(f"{b}/latency/*-*")})
if delays:
    md("## The same servers across a network", "",
       "Each server of the table above behind `scripts/delay-proxy.py`, a loopback TCP proxy that holds every",
       "chunk of bytes half the added latency in each direction (so each round trip pays it once more), and a",
       "new connection's first bytes one added latency more (as a TCP handshake costs a round trip before",
       "data flows). \"round trip\" is the server's own (on loopback, the table above) plus the added",
       "latency. K is mcpcert's `-j 1` wall over its default `-j` wall.",
       "",
       "The floor here does not follow mcpcert's schedule (its waves, `-j`, what it runs alone). It is",
       "worked out from the default run's report.json (`scripts/bench.py`, `independent_floor`):",
       "",
       "- a case's **chain** is the run of its requests that came one after another (none overlapping the",
       "  next, by `sent_at_ms` and `ms`), plus the pages of the shared walk of a list when the case sends a",
       "  request naming an item of that list (tools/call, prompts/get, resources/read) and shows none of the",
       "  walk's pages itself;",
       "- the cases that **change state** (a tools/call of a tool whose listing does not say",
       "  `readOnlyHint: true`, logging/setLevel, resources/(un)subscribe, a DELETE) must each have the server",
       "  to themselves, so their chains add up; between two of them every other case could run at once, so",
       "  each such stretch adds only its longest chain;",
       "- **throughput**: the requests this run sent (`requests_sent`) over the server's own rate when",
       "  crowded (the loopback `--load 8` figure of the table above): a server that serves one request at a",
       "  time cannot serve them faster, however far away the client is. The chain assumes a server that",
       "  answers any number at once as fast as one; both are lower bounds for any client, so the floor takes",
       "  the larger;",
       "- **windows**: the `subscriptions/listen` watches, as in the table above.",
       "",
       "floor = max(chain × round trip, throughput) + windows. It leaves out what any client pays on top (new",
       "connections' handshakes, process start, judging), so it is below what can be reached.",
       "",
       "| server | revision | added | round trip | official | mcpcert | mcpcert -j 1 | K | chain | throughput | windows | floor | mcpcert / floor | faster than official |",
       "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    lat_goals = []
    for name, rev in [("refserver", "2026-07-28"), ("fastmcp", "2026-07-28"), ("rmcp", "2026-07-28"), ("server-everything", "2025-11-25")]:
        for d in delays:
            o = f"{b}/latency/{name}-{d}"
            if not os.path.isdir(o):
                continue
            ow, _ = times(f"{o}/official.*.time")
            mw, _ = times(f"{o}/mcpcert.*.time")
            m1, _ = times(f"{o}/mcpcert-j1.*.time")
            # The proxy adds `d` to each round trip: the server's own (on
            # loopback, the table above) plus d.
            rtt = float(open(f"{b}/{name}/raw.txt").read().split()[0]) + d / 1000
            rl = report(f"{o}/mcpcert.1.json")
            chain, win = independent_floor(rl, rev)
            per_s = rates.get(name, 0.0)
            sent_n = rl.get("requests_sent") or 0
            thr = sent_n / per_s if per_s else 0.0
            floor = max(chain * rtt, thr) + win
            k = m1 / mw
            md(f"| {name} | {rev} | {d} ms | {rtt * 1000:.1f} ms | {ow:.3f} s | {mw:.3f} s | {m1:.3f} s | {down(k)} | "
               f"{chain} × rtt = {chain * rtt:.3f} s | {sent_n} / {per_s:.0f} per s = {thr:.3f} s | {win:.3f} s | "
               f"{floor:.3f} s | {mw / floor:.1f}× | {down(ow / mw)}× |")
            if d == max(delays):
                lat_goals.append((name, d, mw <= 2 * floor, k >= 6, mw / floor, k))
    md("", "Goals (issue 24) at the largest added latency: " + "; ".join(
        f"{n} at {d} ms: within 2× of the floor {'met' if f else 'NOT met'} ({r:.1f}×), "
        f"6× faster than -j 1 {'met' if g else 'NOT met'} (K = {down(k)})"
        for n, d, f, g, r, k in lat_goals) + ".", "")

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
print(text, end="")
# The parts other scripts keep in the same file stay (bench-stdio.sh,
# bench-build.sh).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
import mdblock  # noqa: E402
for block in mdblock.kept(out):
    text += "\n" + block + "\n"
open(out, "w").write(text)

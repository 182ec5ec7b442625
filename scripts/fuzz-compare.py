#!/usr/bin/env python3
"""fuzz-compare.py MCPCERT REFSERVER MCP_FUZZER TARGETS OUT: mcpcert's fuzzer
and mcp-fuzzer (PyPI, pinned by scripts/fuzz-compare.sh) side by side: on the
reference server over stdio and HTTP, clean and with each of its fuzz faults,
and on the interop servers TARGETS (a JSON list written by fuzz-compare.sh:
name, transport, endpoint, mcpcert's extra options). What each reports, how
many inputs it sent and how long it took. Writes OUT/summary.json and
OUT/summary.md (the figures docs/fuzz.md quotes).

Each tool gets the same target and a comparable amount of input (neither
has a time budget the other can share: mcp-fuzzer has no such option):
mcpcert `--count 60` per class, mcp-fuzzer `--mode all` (its tool-argument
and protocol fuzzing) with `--runs 10 --runs-per-type 10`. Whether a tool
"found" a reference-server fault is decided from its own report: mcpcert,
the fault's target case is red; mcp-fuzzer, a kind of finding (category) the
clean run over the same transport does not have, or another exit (its counts
vary from run to run at one seed). On the interop servers there is no clean
run to compare with: both tools' findings are listed, to be judged by hand
(docs/fuzz.md). Throughput is measured apart, on like inputs (JSON
messages), three times each, the median kept."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

mcpcert, refserver, fuzzer, targets_file, out = sys.argv[1:6]
out = os.path.abspath(out)
os.makedirs(out, exist_ok=True)

# Fault: transport, the case that must turn red.
FAULTS = [
    ("fuzz-crash-deep-nesting", "stdio", "2026-07-28/fuzz/params"),
    ("fuzz-crash-deep-nesting", "http", "2026-07-28/fuzz/params"),
    ("fuzz-parse-error-wrong-id", "stdio", "2026-07-28/fuzz/framing"),
    ("fuzz-parse-error-wrong-id", "http", "2026-07-28/fuzz/framing"),
    ("fuzz-reply-to-notification", "stdio", "2026-07-28/fuzz/envelope"),
    ("fuzz-reply-to-notification", "http", "2026-07-28/fuzz/envelope"),
    ("fuzz-hang-invalid-utf8", "stdio", "2026-07-28/fuzz/framing"),
    ("fuzz-500-huge-body", "http", "2026-07-28/fuzz/framing/conventions"),
    ("fuzz-bidi-description", "stdio", "2026-07-28/fuzz/descriptors"),
    ("fuzz-accepts-beyond-maximum", "stdio", "2026-07-28/fuzz/arguments"),
    ("fuzz-accepts-beyond-maximum", "http", "2026-07-28/fuzz/arguments"),
]


def timed(cmd, cwd=None, timeout=900):
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
        code = p.returncode
    except subprocess.TimeoutExpired:
        code = "timeout"
    return time.perf_counter() - start, code


class Refserver:
    """The reference server over HTTP on a free port of 127.0.0.1."""

    def __init__(self, faults):
        args = [refserver, "--http", "0"]
        for f in faults:
            args += ["--fault", f]
        self.p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = self.p.stdout.readline()
        self.url = line.split()[2] if line.startswith("listening on") else None

    def stop(self):
        self.p.kill()
        self.p.wait()


def endpoint(transport, faults):
    """(endpoint, stop) for the reference server with these faults."""
    if transport == "stdio":
        return " ".join([refserver] + [f"--fault {f}" for f in faults]), lambda: None
    s = Refserver(faults)
    return s.url, s.stop


def run_mcpcert(name, transport, target, extra, count=60, classes=()):
    d = os.path.join(out, name, "mcpcert")
    cmd = [mcpcert, "fuzz", f"--{transport}", target, "--seed", "1", "--count", str(count), "--out", d, *extra]
    for c in classes:
        cmd += ["--class", c]
    wall, code = timed(cmd)
    try:
        rep = json.load(open(os.path.join(d, "report.json")))
    except (OSError, ValueError):
        return {"wall_s": round(wall, 3), "exit": code, "inputs": 0, "red": {}, "problem": "no report"}
    inputs = int(rep["notices"][0].split()[0]) if rep.get("notices") else 0
    red = {c["id"]: c["verdict"] for c in rep["cases"] if c["verdict"] in ("fail", "warn", "error")}
    return {"wall_s": round(wall, 3), "exit": code, "inputs": inputs, "red": red}


def run_fuzzer(name, transport, target, mode="all", runs=10):
    d = os.path.join(out, name, "mcp-fuzzer")
    os.makedirs(d, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        wall, code = timed(
            [fuzzer, "--mode", mode, "--protocol", transport, "--endpoint", target, "--runs", str(runs), "--runs-per-type",
             str(runs), "--seed", "1", "--no-network", "--output-dir", d, "--timeout", "5"],
            cwd=home,
        )
    summary, findings = {}, []
    try:
        summary = json.load(open(os.path.join(d, "run_summary.json")))
    except (OSError, ValueError):
        pass
    try:
        f = json.load(open(os.path.join(d, "findings.json")))
        findings = f if isinstance(f, list) else f.get("findings", [])
    except (OSError, ValueError):
        pass
    types = summary.get("protocols", {}).get("by_type", {})
    inputs = sum(t.get("total_runs", 0) for t in types.values()) + summary.get("tools", {}).get("total_runs", 0)
    cats = {}
    for x in findings:
        key = f'{x.get("category")}:{x.get("target")}'
        cats[key] = cats.get(key, 0) + 1
    return {"wall_s": round(wall, 3), "exit": code, "inputs": inputs, "findings": cats}


def both(name, transport, start, extra=()):
    """Each tool on a server of its own (`start` gives an endpoint and a
    stop): a fault that kills an HTTP server leaves the other tool one."""
    r = {"transport": transport}
    for tool, go in [("mcpcert", lambda t: run_mcpcert(name, transport, t, list(extra))),
                     ("mcp-fuzzer", lambda t: run_fuzzer(name, transport, t))]:
        target, stop = start()
        r[tool] = go(target)
        stop()
    print(f"{name}: mcpcert {r['mcpcert']['wall_s']} s, mcp-fuzzer {r['mcp-fuzzer']['wall_s']} s", flush=True)
    return r


results = {}
for transport in ["stdio", "http"]:
    results[f"clean-{transport}"] = both(f"clean-{transport}", transport, lambda t=transport: endpoint(t, []))
for fault, transport, case in FAULTS:
    name = f"{fault}-{transport}"
    r = both(name, transport, lambda t=transport, f=fault: endpoint(t, [f]))
    m, f, clean = r["mcpcert"], r["mcp-fuzzer"], results[f"clean-{transport}"]["mcp-fuzzer"]
    m["found"] = case in m["red"]
    # A kind of finding (a category) the clean run does not have at all,
    # or another exit.
    clean_cats = {k.split(":")[0] for k in clean["findings"]}
    new = sorted({k.split(":")[0] for k in f["findings"]} - clean_cats)
    f["differs_from_clean"] = {"new_categories": new, "exit": f["exit"] != clean["exit"]}
    f["found"] = bool(new or f["exit"] != clean["exit"])
    r["fault"], r["case"] = fault, case
    results[name] = r

interop = json.load(open(targets_file))
for t in interop:
    # Started once by fuzz-compare.sh (each survives both tools).
    results[t["name"]] = {**both(t["name"], t["transport"], lambda t=t: (t["endpoint"], lambda: None), t.get("mcpcert", [])),
                          "interop": True}


def median_rate(make):
    runs = [make() for _ in range(3)]
    rates = sorted(runs, key=lambda x: x["per_s"])
    return {**rates[1], "rates": [x["per_s"] for x in runs]}


# Throughput on like inputs: mcpcert's envelope and params classes (JSON
# messages, as mcp-fuzzer's protocol mode sends) against mcp-fuzzer's
# protocol mode, on the clean server.
throughput = {}
for transport, count, runs in [("stdio", 1000, 80), ("http", 300, 25)]:
    def m_run(transport=transport, count=count):
        target, stop = endpoint(transport, [])
        r = run_mcpcert(f"throughput-{transport}", transport, target, [], count=count, classes=["envelope", "params"])
        stop()
        return {"inputs": r["inputs"], "wall_s": r["wall_s"], "per_s": round(r["inputs"] / r["wall_s"], 1)}

    def f_run(transport=transport, runs=runs):
        target, stop = endpoint(transport, [])
        r = run_fuzzer(f"throughput-{transport}", transport, target, mode="protocol", runs=runs)
        stop()
        return {"inputs": r["inputs"], "wall_s": r["wall_s"], "per_s": round(r["inputs"] / r["wall_s"], 1) if r["wall_s"] else 0}

    throughput[transport] = {"mcpcert": median_rate(m_run), "mcp-fuzzer": median_rate(f_run)}
    print(f"throughput {transport}: {throughput[transport]}", flush=True)
json.dump({"results": results, "throughput": throughput}, open(os.path.join(out, "summary.json"), "w"), indent=1)


def short(red):
    return ", ".join(f'{k.split("/", 1)[1]} ({v})' for k, v in sorted(red.items())) or "none"


lines = ["### The reference server's faults", "",
         "| set-up | mcpcert: inputs, wall, red cases | mcp-fuzzer: inputs, wall, finding kinds the clean run lacks | found by mcpcert / mcp-fuzzer |",
         "|---|---|---|---|"]
for name, r in results.items():
    if r.get("interop"):
        continue
    m, f = r["mcpcert"], r["mcp-fuzzer"]
    diff = f.get("differs_from_clean", {})
    what = "(the clean run)" if "fault" not in r else (
        ", ".join(diff.get("new_categories", [])) + (" another exit" if diff.get("exit") else "") or "nothing new")
    found = "—" if "fault" not in r else f'{"yes" if m["found"] else "NO"} / {"yes" if f["found"] else "no"}'
    lines.append(f'| {name} | {m["inputs"]}, {m["wall_s"]} s, {short(m["red"])} | {f["inputs"]}, {f["wall_s"]} s, {what} | {found} |')
lines += ["", "### The interop servers", "",
          "| set-up | mcpcert: inputs, wall, red cases | mcp-fuzzer: inputs, wall, exit, findings by kind |", "|---|---|---|---|"]
for name, r in results.items():
    if not r.get("interop"):
        continue
    m, f = r["mcpcert"], r["mcp-fuzzer"]
    kinds = {}
    for k, v in f["findings"].items():
        kinds[k.split(":")[0]] = kinds.get(k.split(":")[0], 0) + v
    shown = ", ".join(f"{k}: {v}" for k, v in sorted(kinds.items())) or "none"
    lines.append(f'| {name} | {m["inputs"]}, {m["wall_s"]} s, {short(m["red"])} | {f["inputs"]}, {f["wall_s"]} s, exit {f["exit"]}, {shown} |')
lines.append("")
for transport, t in throughput.items():
    tm, tf = t["mcpcert"], t["mcp-fuzzer"]
    ratio = tm["per_s"] / tf["per_s"] if tf["per_s"] else 0
    lines.append(f"Throughput over {transport} (JSON messages; the clean reference server; median of three): mcpcert "
                 f"{tm['inputs']} inputs in {tm['wall_s']} s, {tm['per_s']:.0f}/s (runs: {tm['rates']}); mcp-fuzzer "
                 f"{tf['inputs']} in {tf['wall_s']} s, {tf['per_s']:.0f}/s (runs: {tf['rates']}): {ratio:.1f}x.")
    lines.append("")
for transport in ["stdio", "http"]:
    cats = results[f"clean-{transport}"]["mcp-fuzzer"]["findings"]
    kinds = ", ".join(f"{k}: {v}" for k, v in sorted(cats.items()))
    lines.append(f"mcp-fuzzer's findings on the clean server over {transport}: {sum(cats.values())} ({kinds or 'none'}).")
    lines.append("")
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines))
print("\n".join(lines))

#!/usr/bin/env python3
"""fuzz-compare.py MCPCERT REFSERVER MCP_FUZZER OUT: mcpcert's fuzzer and
mcp-fuzzer (PyPI, pinned by scripts/fuzz-compare.sh) side by side on the
reference server over stdio, clean and with each of its fuzz faults: what
each reports, how many inputs it sent and how long it took. Writes
OUT/summary.json and OUT/summary.md (the figures docs/fuzz.md quotes).

Each tool gets the same target and a comparable amount of input:
mcpcert `--count 60` per class (four classes; headers are HTTP only),
mcp-fuzzer protocol mode `--runs-per-type 10` over its 24 request types.
Whether a tool "found" a fault is decided from its own report: mcpcert, the
fault's target case is red; mcp-fuzzer, a kind of finding (category) the
clean run does not have, or another exit (its counts vary from run to run at
one seed). Its findings are listed, to be judged by hand (docs/fuzz.md).
Throughput is measured apart, on like inputs (JSON messages)."""
import json
import os
import subprocess
import sys
import tempfile
import time

mcpcert, refserver, fuzzer, out = sys.argv[1], sys.argv[2], sys.argv[3], os.path.abspath(sys.argv[4])
os.makedirs(out, exist_ok=True)

# Fault: the case that must turn red (stdio).
FAULTS = {
    "fuzz-crash-deep-nesting": "2026-07-28/fuzz/params",
    "fuzz-parse-error-wrong-id": "2026-07-28/fuzz/framing",
    "fuzz-reply-to-notification": "2026-07-28/fuzz/envelope",
    "fuzz-hang-invalid-utf8": "2026-07-28/fuzz/framing",
    "fuzz-bidi-description": "2026-07-28/fuzz/descriptors",
}


def timed(cmd, cwd=None, timeout=600):
    start = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
        code = p.returncode
    except subprocess.TimeoutExpired:
        code = "timeout"
    return time.perf_counter() - start, code


def run_mcpcert(name, command):
    d = os.path.join(out, name, "mcpcert")
    wall, code = timed([mcpcert, "fuzz", "--stdio", command, "--seed", "1", "--count", "60", "--out", d])
    rep = json.load(open(os.path.join(d, "report.json")))
    inputs = int(rep["notices"][0].split()[0]) if rep.get("notices") else 0
    red = sorted(c["id"] for c in rep["cases"] if c["verdict"] in ("fail", "warn", "error"))
    return {"wall_s": round(wall, 3), "exit": code, "inputs": inputs, "requests": rep.get("requests_sent", 0), "red": red}


def run_fuzzer(name, command, runs=10):
    d = os.path.join(out, name, "mcp-fuzzer")
    os.makedirs(d, exist_ok=True)
    with tempfile.TemporaryDirectory() as home:
        wall, code = timed(
            [fuzzer, "--mode", "protocol", "--protocol", "stdio", "--endpoint", command, "--runs-per-type", str(runs),
             "--seed", "1", "--no-network", "--output-dir", d, "--timeout", "5"],
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
    runs = sum(t.get("total_runs", 0) for t in types.values())
    failures = {k: t.get("failures", 0) for k, t in types.items() if t.get("failures")}
    cats = {}
    for x in findings:
        key = f'{x.get("category")}:{x.get("target")}'
        cats[key] = cats.get(key, 0) + 1
    return {"wall_s": round(wall, 3), "exit": code, "inputs": runs, "findings": cats, "failures": failures}


results = {}
for name in ["clean", *FAULTS]:
    command = refserver if name == "clean" else f"{refserver} --fault {name}"
    results[name] = {"mcpcert": run_mcpcert(name, command), "mcp-fuzzer": run_fuzzer(name, command)}
    print(f"{name}: mcpcert {results[name]['mcpcert']['wall_s']} s, mcp-fuzzer {results[name]['mcp-fuzzer']['wall_s']} s", flush=True)

clean_f = results["clean"]["mcp-fuzzer"]
for name, target in FAULTS.items():
    m, f = results[name]["mcpcert"], results[name]["mcp-fuzzer"]
    m["found"] = target in m["red"]
    # Its counts vary from run to run at the same seed: what counts is a
    # kind of finding (a category) the clean run does not have at all, or
    # another exit.
    clean_cats = {k.split(":")[0] for k in clean_f["findings"]}
    new = sorted({k.split(":")[0] for k in f["findings"]} - clean_cats)
    f["differs_from_clean"] = {"new_categories": new, "exit": f["exit"] != clean_f["exit"]}
    f["found"] = bool(new or f["exit"] != clean_f["exit"])

# Throughput on like inputs: mcpcert's envelope and params classes (JSON
# messages, as mcp-fuzzer's protocol mode sends) against mcp-fuzzer's
# protocol mode, about 2,000 inputs each, on the clean server.
tp_m = os.path.join(out, "throughput", "mcpcert")
wall_m, _ = timed([mcpcert, "fuzz", "--stdio", refserver, "--seed", "1", "--count", "1000", "--class", "envelope", "--class", "params", "--out", tp_m])
inputs_m = int(json.load(open(os.path.join(tp_m, "report.json")))["notices"][0].split()[0])
tp_f = run_fuzzer("throughput", refserver, runs=80)
throughput = {
    "mcpcert": {"inputs": inputs_m, "wall_s": round(wall_m, 3), "per_s": round(inputs_m / wall_m, 1)},
    "mcp-fuzzer": {"inputs": tp_f["inputs"], "wall_s": tp_f["wall_s"], "per_s": round(tp_f["inputs"] / tp_f["wall_s"], 1) if tp_f["wall_s"] else 0},
}
results["_throughput"] = throughput
json.dump(results, open(os.path.join(out, "summary.json"), "w"), indent=1)
del results["_throughput"]


lines = ["| set-up | mcpcert: inputs, wall, red cases | mcp-fuzzer: inputs, wall, finding kinds the clean run lacks | found by mcpcert / mcp-fuzzer |", "|---|---|---|---|"]
for name, r in results.items():
    m, f = r["mcpcert"], r["mcp-fuzzer"]
    diff = f.get("differs_from_clean", {})
    what = "(the clean run)" if name == "clean" else (", ".join(diff.get("new_categories", [])) + (" another exit" if diff.get("exit") else "") or "nothing new")
    found = "—" if name == "clean" else f'{"yes" if m["found"] else "NO"} / {"yes" if f["found"] else "no"}'
    lines.append(f'| {name} | {m["inputs"]}, {m["wall_s"]} s, {", ".join(x.split("/", 1)[1] for x in m["red"]) or "none"} '
                 f'| {f["inputs"]}, {f["wall_s"]} s, {what} | {found} |')
lines.append("")
tm, tf = throughput["mcpcert"], throughput["mcp-fuzzer"]
ratio = tm["per_s"] / tf["per_s"] if tf["per_s"] else 0
lines.append(f"Throughput on like inputs (JSON messages; the clean server): mcpcert {tm['inputs']} inputs in {tm['wall_s']} s, "
             f"{tm['per_s']:.0f}/s; mcp-fuzzer {tf['inputs']} in {tf['wall_s']} s, {tf['per_s']:.0f}/s: {ratio:.1f}x.")
clean_cats = results["clean"]["mcp-fuzzer"]["findings"]
kinds = ", ".join(f"{k}: {v}" for k, v in sorted(clean_cats.items()))
lines.append(f"mcp-fuzzer's findings on the clean server (each a false finding unless docs/fuzz.md says otherwise): {sum(clean_cats.values())} ({kinds or 'none'}).")
open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))

#!/usr/bin/env python3
"""Check that `mcpcert lint` and `mcpcert run` agree on a server's tools.

Reads a run report, feeds the tools/list pages its walk received to
`mcpcert lint -`, and compares the tools lint rejects with the tools the
run's MUST/POLICY descriptor cases name. Exit 0 when they agree.
usage: lint-agrees.py REPORT.json MCPCERT
"""
import json
import subprocess
import sys

report, mcpcert = sys.argv[1], sys.argv[2]
r = json.load(open(report))
ok = True
for rev in ("2026-07-28", "2025-11-25"):
    walk = next((c for c in r["cases"] if c["id"] == f"{rev}/tools/list-walk"), None)
    if walk is None or walk["verdict"] not in ("pass", "fail"):
        continue
    pages = [f["raw"] for e in walk["transcript"] if e.get("rpc_method") == "tools/list" for f in e.get("frames", [])]
    note = " ".join(e.get("note", "") for e in walk["transcript"])
    if "page exchanges are shown" in note:
        print(f"{rev}: the report holds only some pages; not compared")
        continue
    out = subprocess.run([mcpcert, "lint", "-", "--revision", rev], input="\n".join(pages), capture_output=True, text=True)
    lint_rejected = sorted(l[len("REJECTED "):] for l in out.stdout.splitlines() if l.startswith("REJECTED "))
    run_rejected = set()
    for c in r["cases"]:
        if c["id"].startswith(f"{rev}/tools/descriptor-") and c["level"] in ("MUST", "POLICY") and c["verdict"] == "fail":
            for line in c["message"].splitlines():
                if line.startswith("  - "):
                    run_rejected.add(line[4:].split(": ", 1)[0])
    agree = lint_rejected == sorted(run_rejected)
    ok &= agree
    print(f"{rev}: lint rejects {lint_rejected or 'nothing'}, run rejects {sorted(run_rejected) or 'nothing'}: {'agree' if agree else 'DISAGREE'}")
sys.exit(0 if ok else 1)

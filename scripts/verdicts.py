#!/usr/bin/env python3
"""Compare a run report's verdicts with an expected-verdict file.

usage: verdicts.py REPORT.json EXPECTED.txt [--update]

EXPECTED.txt holds one line per case: `<verdict> <case id>`, sorted by id;
lines starting with # are comments. Any difference is printed as a diff and
makes the exit status 1; --update rewrites the file from the report.
"""
import difflib
import json
import sys

report, expected = sys.argv[1], sys.argv[2]
cases = json.load(open(report))["cases"]
got = sorted(f'{c["verdict"]} {c["id"]}' for c in cases)
got = sorted(got, key=lambda l: l.split(" ", 1)[1])
if "--update" in sys.argv:
    with open(expected, "w") as f:
        f.write("# expected mcpcert verdicts for this server (scripts/verdicts.py --update rewrites it)\n")
        f.write("\n".join(got) + "\n")
    sys.exit(0)
try:
    want = [l.rstrip("\n") for l in open(expected) if l.strip() and not l.startswith("#")]
except FileNotFoundError:
    print(f"no expected verdicts at {expected}; create them with --update")
    sys.exit(1)
if want == got:
    print(f"verdicts as expected ({len(got)} cases)")
    sys.exit(0)
sys.stdout.writelines(difflib.unified_diff([w + "\n" for w in want], [g + "\n" for g in got], expected, report))
sys.exit(1)

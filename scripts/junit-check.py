#!/usr/bin/env python3
"""Validate one mcpcert JUnit file against junit-10.xsd and read it back
with junitparser: its failure, error and skipped counts must be those the
report's verdicts and the --junit-warn / --junit-na styles make.

usage: junit-check.py XSD JUNIT.xml REPORT.json WARN_STYLE NA_STYLE
"""
import json
import sys

import junitparser
import xmlschema

xsd, junit, report, warn, na = sys.argv[1:6]
schema = xmlschema.XMLSchema(xsd)
errors = list(schema.iter_errors(junit))
if errors:
    print(f"{junit}: not valid against {xsd}:")
    for e in errors[:5]:
        print(f"  - {e.reason} at {e.path}")
    sys.exit(1)
r = json.load(open(report))
strict = r["strict"]
want = {"failure": 0, "error": 0, "skipped": 0, "passed": 0}
for c in r["cases"]:
    v = c["verdict"]
    b = (c.get("baseline") or {}).get("outcome")
    if b == "expected failure":
        want["skipped"] += 1
    elif b == "stale":
        want["failure"] += 1
    elif v == "fail" or (v == "warn" and (strict or warn == "as-failure")):
        want["failure"] += 1
    elif v == "error":
        want["error"] += 1
    elif (v == "warn" and warn == "as-skipped") or (v == "n/a" and na == "as-skipped"):
        want["skipped"] += 1
    else:
        want["passed"] += 1
got = {"failure": 0, "error": 0, "skipped": 0, "passed": 0}
xml = junitparser.JUnitXml.fromfile(junit)
for suite in xml:
    for case in suite:
        kinds = {type(x).__name__ for x in case.result}
        if "Failure" in kinds:
            got["failure"] += 1
        elif "Error" in kinds:
            got["error"] += 1
        elif "Skipped" in kinds:
            got["skipped"] += 1
        else:
            got["passed"] += 1
if got != want:
    print(f"{junit} (warn {warn}, n/a {na}): junitparser reads {got}, report.json makes {want}")
    sys.exit(1)

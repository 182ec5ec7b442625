#!/usr/bin/env python3
"""Read the reference server's fault list (JSON, stdin) and print, for each
fx-* fault, the requirement scenarios its target cases answer: one line
`fault<TAB>revision<TAB>scenario` each.

usage: mcpcert-refserver --list-faults --json | fault-scenarios.py SUITES_DIR
"""
import glob
import json
import sys

answers = {}
for f in glob.glob(f"{sys.argv[1]}/*/*.json"):
    doc = json.load(open(f))
    if "cases" not in doc:
        continue
    for c in doc["cases"]:
        answers[c["id"]] = c.get("answers", [])
seen = set()
for fault in json.load(sys.stdin):
    if not fault["name"].startswith("fx-"):
        continue
    for t in fault["targets"]:
        rev = t.split("/", 1)[0]
        for s in answers.get(t, []):
            key = (fault["name"], rev, s)
            if key not in seen:
                seen.add(key)
                print("\t".join(key))

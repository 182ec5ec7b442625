#!/usr/bin/env python3
"""Write docs/requirements.md from scripts/official-fixtures.sh --faults:
per requirement scenario, the official suite's verdict and mcpcert's on the
reference server with its fixtures, then each fixture fault as both judge it.

usage: requirements-doc.py OUT_DIR DOC.md OFFICIAL_VERSION
"""
import csv
import glob
import json
import os
import re
import sys

out, doc, version = sys.argv[1:4]


def official(rev):
    """scenario -> pass / fail / warn (worst check; INFO ignored)."""
    got = {}
    for f in glob.glob(f"{out}/official-{rev}/*/checks.json"):
        name = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", os.path.basename(os.path.dirname(f)))
        name = re.sub(r"^server-", "", name)
        statuses = {c["status"] for c in json.load(open(f))}
        got[name] = "fail" if "FAILURE" in statuses else "warn" if "WARNING" in statuses else "pass"
    return got


lines = [
    "# The requirement sets, judged by both tools",
    "",
    f"Written by `scripts/official-fixtures.sh --faults` (then `scripts/requirements-doc.py`) from one run of",
    f"conformance {version} (`--requirements REV`, and `--scenario` for the faults) and mcpcert",
    "(`--requirements REV`) against the reference server with its conformance fixtures",
    "(`mcpcert-refserver --http 0 --era dual --fixtures`), over HTTP, the only transport the",
    "official suite drives. A scenario's official verdict is its worst check (FAILURE, then",
    "WARNING); mcpcert's is the scenario verdict of its report. CI runs the same script and fails",
    "unless both tools pass every scored scenario of both sets on the clean server, and mcpcert",
    "fails (or, for a SHOULD, warns) every scenario a fixture fault targets.",
    "",
]
for rev in ["2026-07-28", "2025-11-25"]:
    off = official(rev)
    rep = json.load(open(f"{out}/mcpcert-{rev}/report.json"))
    q = rep["requirements"]
    lines += [f"## {rev}: {q['passed']} of {q['scored']} scored scenarios pass in mcpcert", "",
              "| scenario | counts | official | mcpcert | mcpcert cases |", "|---|---|---|---|---|"]
    for s in q["scenarios"]:
        counts = "scored" if s["scored"] else f"not scored ({s.get('reason', '')})"
        o = off.get(s["name"], "not run")
        lines.append(f"| `{s['name']}` | {counts} | {o} | {s['verdict']} | {len(s['cases'])} |")
    lines.append("")
rows = list(csv.DictReader(open(f"{out}/faults.tsv"), delimiter="\t"))
missed = [r for r in rows if r["official"] == "pass" and r["mcpcert"] in ("fail", "warn")]
lines += ["## Each fixture fault", "",
          f"{len(rows)} fault × scenario pairs; mcpcert fails or warns on all of them, the official suite",
          f"passes {len(missed)}: where it does, it does not check what the fault breaks (a false pass,",
          "named below), or (a SHOULD) reports a WARNING, which does not fail a scenario there.", "",
          "| fault | revision | scenario | official | mcpcert |", "|---|---|---|---|---|"]
for r in rows:
    lines.append(f"| `{r['fault']}` | {r['revision']} | `{r['scenario']}` | {r['official']} | {r['mcpcert']} |")
false = json.load(open("fixtures/interop/official-false-passes.json"))["false_passes"]
lines += ["", "## False passes of the official suite", "",
          "Where the official suite passes a scenario that mcpcert fails, the scenario's own description or",
          "the spec says the server is wrong; CI fails on any other such disagreement (mcpcert then judges",
          "beyond the scenario, which belongs in a case marked `beyond`), and on a pair named here that no",
          "longer disagrees (`fixtures/interop/official-false-passes.json`).", "",
          "| fault | scenario | revisions | why the official pass is false |", "|---|---|---|---|"]
for f in false:
    lines.append(f"| `{f['fault']}` | `{f['scenario']}` | {', '.join(f['revisions'])} | {f['why']} |")
lines += ["", "## Beyond the requirement set", "",
          "Cases that judge a scenario's subject more strictly than the scenario does (by the letter of the",
          "spec) are run with the set and shown beside the scenario, \"beyond the requirement set\"; they",
          "never decide its verdict, and a certificate claims nothing about them:", ""]
for rev in ["2026-07-28", "2025-11-25"]:
    rep = json.load(open(f"{out}/mcpcert-{rev}/report.json"))
    for s in rep["requirements"]["scenarios"]:
        for b in s.get("beyond", []):
            lines.append(f"- `{s['name']}` ({rev}): `{b['id']}`")
# The extension sets (REV+EXT): each extension scenario, from the requirement
# set's file and the suites' answers (no run: the official suite runs these
# scenarios and never scores them).
answers = {}
for f in sorted(glob.glob("suites/2026-07-28/*.json")):
    for c in json.load(open(f)).get("cases", []):
        for a in c.get("answers", []):
            answers.setdefault(a, []).append(c["id"])
req = json.load(open("suites/requirements/2026-07-28.json"))
lines += ["", "## 2026-07-28+tasks: the tasks extension", "",
          "The official suite runs its ten `tasks-*` scenarios against a server's fixture tools (`greet`,",
          "`slow_compute`, `failing_job`, `protocol_error_job`, `confirm_delete`, `multi_input`,",
          "`test_tool_with_task`) and never scores them (reason `extension`). `mcpcert run --requirements",
          "2026-07-28+tasks` scores those it judges, with the tools the config names in `[tasks]`; the",
          "others stay unscored and say why (`mcpcert list --requirements 2026-07-28+tasks`).", "",
          "| scenario | official suite | mcpcert (2026-07-28+tasks) | mcpcert cases |", "|---|---|---|---|"]
for sc in req["not_scored"]:
    if sc.get("extension") != "tasks":
        continue
    ours = f"not judged yet: {sc['unjudged']}" if sc.get("unjudged") else "scored"
    cases = ", ".join(f"`{c.split('/', 1)[1]}`" for c in answers.get(sc["name"], [])) or "—"
    lines.append(f"| `{sc['name']}` | run, not scored | {ours} | {cases} |")
open(doc, "w").write("\n".join(lines) + "\n")

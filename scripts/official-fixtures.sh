#!/usr/bin/env bash
# The reference server's conformance fixtures (--fixtures), checked by the
# official suite (@modelcontextprotocol/conformance, pinned in
# fixtures/interop/official): against the clean server it must pass every
# scored scenario of both requirement sets, or this script fails. With
# --faults, each fx-* fault is run too, and for each scenario the fault's
# target cases answer, the official suite's verdict is recorded beside
# mcpcert's (reports/official-fixtures/faults.tsv): where the official suite
# checks what the fault breaks, it must fail it as mcpcert does.
# Needs the npm registry for the install (as scripts/interop.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/interop-env.sh
setup_official
cargo build -q --workspace || die "building mcpcert failed"
m=$target/debug/mcpcert
out=reports/official-fixtures
rm -rf "$out"
mkdir -p "$out"
status=0
start_http refserver-fixtures "$out" || die "the reference server did not start"
for rev in 2026-07-28 2025-11-25; do
  PATH="$node24:$PATH" "$official" server --url "$url" --requirements "$rev" -o "$out/official-$rev" >"$out/official-$rev.log" 2>&1
  rc=$?
  "$m" run --http "$url" "${args[@]}" --requirements "$rev" --json "$out/mcpcert-$rev/report.json" \
    --junit "$out/mcpcert-$rev/junit.xml" --html "$out/mcpcert-$rev/report.html" >"$out/mcpcert-$rev.log" 2>&1
  mrc=$?
  printf 'official suite, requirement set %s, reference server with fixtures: exit %s; mcpcert: exit %s\n' "$rev" "$rc" "$mrc"
  if [ "$rc" -ne 0 ] || [ "$mrc" -ne 0 ]; then
    grep -E '^✗' "$out/official-$rev.log" | grep -v 'not scored' | head -20
    status=1
  fi
done
for p in $pids; do kill -- -"$p" 2>/dev/null; done
pids=""
[ "${1:-}" = "--faults" ] || exit $status

# Each fixture fault: the scenarios its target cases answer, judged by both.
printf 'fault\trevision\tscenario\tofficial\tmcpcert\n' >"$out/faults.tsv"
"$target/debug/mcpcert-refserver" --list-faults --json | python3 scripts/fault-scenarios.py suites >"$out/jobs.tsv" || die "mapping faults to scenarios failed"
while IFS=$'\t' read -r fault rev scenario; do
  start_http refserver-fixtures "$out" --fault "$fault" || die "the reference server did not start with $fault"
  d=$out/faults/$fault/$rev-$scenario
  mkdir -p "$d"
  PATH="$node24:$PATH" "$official" server --url "$url" --scenario "$scenario" --spec-version "$rev" -o "$d/official" >"$d/official.log" 2>&1
  if [ $? -eq 0 ]; then o=pass; else o=fail; fi
  "$m" run --http "$url" "${args[@]}" --requirements "$rev" --json "$d/report.json" --junit "$d/junit.xml" --html "$d/report.html" >"$d/mcpcert.log" 2>&1
  # A server that is gone (it once stopped answering between the two
  # tools' runs on a loaded machine) is started again for mcpcert: an
  # unreachable target judges nothing about the fault.
  if python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1])).get("target_problem") else 1)' "$d/report.json"; then
    echo "official-fixtures: $fault: the server did not answer mcpcert; once more on a new one" >&2
    for p in $pids; do kill -- -"$p" 2>/dev/null; done
    pids=""
    start_http refserver-fixtures "$out" --fault "$fault" || die "the reference server did not start with $fault"
    "$m" run --http "$url" "${args[@]}" --requirements "$rev" --json "$d/report.json" --junit "$d/junit.xml" --html "$d/report.html" >"$d/mcpcert.log" 2>&1
  fi
  v=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(next(s["verdict"] for s in r["requirements"]["scenarios"] if s["name"]==sys.argv[2]))' "$d/report.json" "$scenario")
  printf '%s\t%s\t%s\t%s\t%s\n' "$fault" "$rev" "$scenario" "$o" "$v" >>"$out/faults.tsv"
  for p in $pids; do kill -- -"$p" 2>/dev/null; done
  pids=""
done <"$out/jobs.tsv"
column -t -s $'\t' "$out/faults.tsv"
# mcpcert must fail every scenario a fault targets.
if awk -F'\t' 'NR > 1 && $5 != "fail" && $5 != "warn" { bad = 1 } END { exit !bad }' "$out/faults.tsv"; then
  echo "official-fixtures: a fixture fault left its scenario green in mcpcert" >&2
  status=1
fi
# Where the official suite passes and mcpcert fails, the pair must be a
# named false pass of the official suite (fixtures/interop/official-false-passes.json,
# shown in docs/requirements.md), and every named one must still disagree.
python3 - "$out/faults.tsv" fixtures/interop/official-false-passes.json <<'PY' || status=1
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
named = {(f["fault"], r, f["scenario"]) for f in json.load(open(sys.argv[2]))["false_passes"] for r in f["revisions"]}
disagree = {(r["fault"], r["revision"], r["scenario"]) for r in rows if r["official"] == "pass" and r["mcpcert"] == "fail"}
bad = 0
for d in sorted(disagree - named):
    print(f"official-fixtures: the official suite passes {d[2]} ({d[1]}) under fault {d[0]} and mcpcert fails it: "
          "either mcpcert goes beyond the scenario (make that case 'beyond') or name it as a false pass", file=sys.stderr)
    bad = 1
for d in sorted(named - disagree):
    if any(r["fault"] == d[0] and r["revision"] == d[1] for r in rows):
        print(f"official-fixtures: {d[0]} on {d[2]} ({d[1]}) is named as a false pass but the tools now agree: remove it", file=sys.stderr)
        bad = 1
sys.exit(bad)
PY
exit $status

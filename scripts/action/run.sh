#!/usr/bin/env bash
# The action's run step: mcpcert run from the INPUT_* variables; the reports
# go to INPUT_REPORTS; the summary line, mcpcert's exit code and the report
# paths go to GITHUB_OUTPUT, and `mcpcert summary` of report.json (the
# outcome, counts, failing cases with their reasons, warnings, certificate)
# to GITHUB_STEP_SUMMARY. Always exits 0: the action's last step fails the job
# with mcpcert's code, after the reports are uploaded.
set -uo pipefail
bin=${MCPCERT_BIN:-${RUNNER_TEMP:-/tmp}/mcpcert-bin/mcpcert}
reports=${INPUT_REPORTS:-mcpcert-reports}
args=(run)
[ -n "${INPUT_STDIO:-}" ] && args+=(--stdio "$INPUT_STDIO")
[ -n "${INPUT_URL:-}" ] && args+=(--http "$INPUT_URL")
[ -n "${INPUT_CONFIG:-}" ] && args+=(--config "$INPUT_CONFIG")
[ -n "${INPUT_REQUIREMENTS:-}" ] && args+=(--requirements "$INPUT_REQUIREMENTS")
[ -z "${INPUT_REQUIREMENTS:-}" ] && [ -n "${INPUT_REVISION:-}" ] && args+=(--revision "$INPUT_REVISION")
[ -n "${INPUT_EXPECTED_FAILURES:-}" ] && args+=(--expected-failures "$INPUT_EXPECTED_FAILURES")
[ "${INPUT_STRICT:-false}" = true ] && args+=(--strict)
args_in=${INPUT_ARGS:-}
if [ -n "${args_in//[[:space:]]/}" ]; then
  # Split as a shell would split words, quotes kept together ('a b' is one
  # argument), but nothing expanded: xargs reads quotes, runs no shell.
  words=$(mktemp)
  if ! printf '%s' "$INPUT_ARGS" | xargs printf '%s\0' >"$words" 2>/dev/null; then
    why="the args input does not split into arguments (an unmatched quote?): $INPUT_ARGS"
    echo "mcpcert action: $why" >&2
    [ -n "${GITHUB_OUTPUT:-}" ] && { echo "exit-code=2"; echo "summary=$why"; } >>"$GITHUB_OUTPUT"
    [ -n "${GITHUB_STEP_SUMMARY:-}" ] && printf '### mcpcert\n\n%s\n' "$why" >>"$GITHUB_STEP_SUMMARY"
    exit 0
  fi
  mapfile -d '' extra <"$words"
  rm -f "$words"
  args+=("${extra[@]}")
fi
args+=(--junit "$reports/junit.xml" --json "$reports/report.json" --html "$reports/report.html" --color never)
mkdir -p "$reports"
"$bin" "${args[@]}" | tee "$reports/console.txt"
code=${PIPESTATUS[0]}
summary=$(grep '^test result:' "$reports/console.txt" | tail -n 1)
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  {
    echo "exit-code=$code"
    echo "summary=$summary"
    echo "junit=$reports/junit.xml"
    echo "json=$reports/report.json"
    echo "html=$reports/report.html"
  } >>"$GITHUB_OUTPUT"
fi
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  # Built from report.json by mcpcert itself, never scraped from the console.
  if [ -s "$reports/report.json" ]; then
    "$bin" summary "$reports/report.json" >>"$GITHUB_STEP_SUMMARY" || echo "mcpcert: no summary (report.json unreadable)" >>"$GITHUB_STEP_SUMMARY"
  else
    printf '### mcpcert\n\nno report was written: `%s`\n' "$summary" >>"$GITHUB_STEP_SUMMARY"
  fi
fi
exit 0

#!/usr/bin/env bash
# The action's run step: mcpcert run from the INPUT_* variables; the reports
# go to INPUT_REPORTS; the summary line, mcpcert's exit code and the report
# paths go to GITHUB_OUTPUT, and the summary with the failures to
# GITHUB_STEP_SUMMARY. Always exits 0: the action's last step fails the job
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
if [ -n "${INPUT_ARGS:-}" ]; then
  read -r -a extra <<<"$INPUT_ARGS"
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
  {
    echo "### mcpcert"
    echo
    echo "\`$summary\`"
    echo
    failing=$(sed -n '/^failures:$/,$p' "$reports/console.txt" | grep '^    ' | sed 's/^    /- /' | head -n 50)
    if [ -n "$failing" ]; then
      echo "Failing cases:"
      echo
      echo "$failing"
    fi
    if grep -q '^certificate:' "$reports/console.txt"; then
      echo
      grep '^certificate:' "$reports/console.txt"
    fi
  } >>"$GITHUB_STEP_SUMMARY"
fi
exit 0

#!/usr/bin/env bash
# The main job: build mcpcert and the bundled reference server, then run
# every suite against the reference server over stdio and over HTTP.
# Reports land in reports/ (stdio) and reports/http/ (HTTP).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -q --workspace
bin=${CARGO_TARGET_DIR:-target}/debug
cfg=fixtures/refserver/mcpcert.toml
export REFSERVER_ANALYST_TOKEN="Bearer analyst-token" REFSERVER_OPERATOR_TOKEN="Bearer operator-token"
status=0
"$bin/mcpcert" run --stdio "$bin/mcpcert-refserver --era dual" --config "$cfg" \
  --load 8 --junit reports/junit.xml --json reports/report.json --html reports/report.html || status=$?

log=$(mktemp)
"$bin/mcpcert-refserver" --http 0 --era dual --sse >"$log" 2>/dev/null &
pid=$!
trap 'kill $pid 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 50); do grep -q listening "$log" && break; sleep 0.1; done
url=$(awk '/listening on/ {print $3}' "$log")
"$bin/mcpcert" run --http "$url" --config "$cfg" --allowed-origin http://localhost \
  --load 8 --junit reports/http/junit.xml --json reports/http/report.json --html reports/http/report.html || status=$?
exit $status

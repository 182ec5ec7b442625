#!/usr/bin/env bash
# The HTML report in a real browser: Debian's chromium, headless, driven by
# playwright-core (pinned in fixtures/html/package-lock.json) through
# fixtures/html/check.mjs, which asserts what a reader sees against the JSON
# report of the same run (header, order, folded n/a, index links, filters,
# spec links, the copy button, nothing fetched). Two reports: the reference
# server with its fixtures over HTTP (passing), and over stdio with faults
# that give failures, a warning and an expected failure; and matrix.html
# of three targets (fixtures/html/matrix-check.mjs). Screenshots
# land in reports/html-check/; with --update-docs they replace
# docs/report-passing.png and docs/report-failing.png.
# Installs chromium with apt-get when it is missing and this runs as root
# (CHROMIUM names another binary); playwright-core goes to
# $MCPCERT_INTEROP_DIR/html (default .interop/html).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/interop-env.sh
update_docs=${1:-}
chromium=${CHROMIUM:-$(command -v chromium || true)}
if [ -z "$chromium" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    printf 'html-check: installing chromium with apt-get\n'
    (DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null ||
      { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }) ||
      die "apt-get install chromium failed"
    chromium=$(command -v chromium) || die "chromium is not on PATH after the install"
  else
    die "no chromium: install Debian's chromium package, or set CHROMIUM to a Chromium binary"
  fi
fi
export CHROMIUM=$chromium
npm_ci fixtures/html "$dir/html"
cp fixtures/html/check.mjs fixtures/html/matrix-check.mjs "$dir/html/"
cargo build -q --workspace || die "building mcpcert failed"
m=$target/debug/mcpcert
ref=$target/debug/mcpcert-refserver
out=reports/html-check
rm -rf "$out"
mkdir -p "$out"
status=0

# Passing: the reference server with its fixtures, over HTTP.
log=$out/server.log
port=$(free_port)
url=http://127.0.0.1:$port/mcp
serve "$url" "$log" "$ref" --http "$port" --era dual --sse --fixtures || exit 2
"$m" run --http "$url" --allowed-origin http://localhost --out "$out/passing" --quiet >"$out/passing.log" 2>&1
[ $? = 0 ] || { cat "$out/passing.log"; die "the passing run did not pass"; }

# Failing: faults that break MUSTs and a SHOULD, one that several cases see
# (error-id-null: one root cause), and a baseline that expects one of the
# failures, over stdio.
base=$out/expected-failures.toml
printf '[expected]\n"2026-07-28/conformance/tools-call-image" = "known: the image is not base64 yet"\n' >"$base"
"$m" run --stdio "$ref --era dual --fixtures --fault discover-no-ttl --fault order-varies --fault fx-image-not-base64 --fault fx-audio-wrong-mime --fault error-id-null" \
  --out "$out/failing" --expected-failures "$base" --quiet >"$out/failing.log" 2>&1
[ $? = 1 ] || { cat "$out/failing.log"; die "the failing run did not fail"; }

for which in passing failing; do
  node "$dir/html/check.mjs" "$out/$which/report.html" "$out/$which/report.json" "$out/report-$which.png" || status=1
done

# matrix.html: three targets, one failing, over stdio.
printf '[[target]]\nname = "dual"\ncommand = "%s --stdio --era dual"\n\n[[target]]\nname = "broken"\ncommand = "%s --stdio --era modern --fault discover-no-ttl"\n\n[[target]]\nname = "legacy"\ncommand = "%s --stdio --era legacy"\n' "$ref" "$ref" "$ref" >"$out/targets.toml"
"$m" matrix "$out/targets.toml" --out "$out/matrix" >"$out/matrix.log" 2>&1
[ $? = 1 ] || { cat "$out/matrix.log"; die "the matrix with a broken target did not fail"; }
node "$dir/html/matrix-check.mjs" "$out/matrix/matrix.html" || status=1
if [ "$update_docs" = --update-docs ] && [ $status = 0 ]; then
  cp "$out/report-passing.png" "$out/report-failing.png" docs/
  printf 'html-check: docs/report-passing.png and docs/report-failing.png updated\n'
fi
exit $status

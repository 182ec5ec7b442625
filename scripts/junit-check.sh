#!/usr/bin/env bash
# mcpcert's JUnit, checked as CI systems read it: every --junit-warn and
# --junit-na style, on runs with pass, fail, warn, n/a, error and expected
# failures, validated against the JUnit XSD Jenkins' xunit plugin uses
# (junit-10.xsd, taken from the pytest sdist on PyPI, where pytest keeps a
# copy for its tests) and read back with junitparser, whose counts must be
# those of report.json. Needs PyPI for the installs (.interop/junit-venv).
set -uo pipefail
cd "$(dirname "$0")/.."
dir=${MCPCERT_INTEROP_DIR:-.interop}
target=${CARGO_TARGET_DIR:-target}
venv=$dir/junit-venv
die() { printf 'junit-check: %s\n' "$*" >&2; exit 2; }
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" || die "cannot create $venv"
if ! cmp -s fixtures/junit/requirements.txt "$venv/.mcpcert-requirements"; then
  "$venv/bin/pip" install -q --disable-pip-version-check -r fixtures/junit/requirements.txt || die "pip install failed"
  cp fixtures/junit/requirements.txt "$venv/.mcpcert-requirements"
fi
xsd=$dir/junit-10.xsd
if [ ! -s "$xsd" ]; then
  tmp=$(mktemp -d)
  "$venv/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary :all: pytest==8.3.4 -d "$tmp" || die "pytest sdist download failed"
  tar xzf "$tmp"/pytest-8.3.4.tar.gz -C "$tmp" pytest-8.3.4/testing/example_scripts/junit-10.xsd || die "no junit-10.xsd in the pytest sdist"
  cp "$tmp"/pytest-8.3.4/testing/example_scripts/junit-10.xsd "$xsd"
  rm -rf "$tmp"
fi
cargo build -q --workspace || die "building mcpcert failed"
m=$target/debug/mcpcert
ref=$target/debug/mcpcert-refserver
out=reports/junit-check
rm -rf "$out"
mkdir -p "$out"
base=$(mktemp)
printf '[expected]\n"2026-07-28/lifecycle/discover-result-shape" = "known"\n' >"$base"
status=0
n=0
# Faults that give a fail, a SHOULD warn and a POLICY warn; a timeout gives errors.
for style in "as-pass as-skipped" "as-skipped as-skipped" "as-failure as-skipped" "as-pass as-pass" "as-failure as-pass"; do
  set -- $style
  for server in "--era modern --fault discover-no-ttl --fault order-varies --fault ping-alive" "--era dual"; do
    n=$((n + 1))
    d=$out/$n
    "$m" run --stdio "$ref --stdio $server" --junit-warn "$1" --junit-na "$2" --expected-failures "$base" \
      --junit "$d/junit.xml" --json "$d/report.json" --html "$d/report.html" >"$d.log" 2>&1
    "$venv/bin/python" scripts/junit-check.py "$xsd" "$d/junit.xml" "$d/report.json" "$1" "$2" || status=1
  done
done
rm -f "$base"
[ $status = 0 ] && echo "junit-check: $n reports valid against junit-10.xsd and read back with the counts of report.json"
exit $status

#!/usr/bin/env bash
# The GitHub Action's shell steps, run here as a runner would run them:
# install.sh from a release folder (file:// URL, sha256 checked), then run.sh
# against the reference server, clean, broken and certified; GITHUB_OUTPUT
# and GITHUB_STEP_SUMMARY are files we read back. Also checks that
# action.yml names scripts that exist and maps every input run.sh reads.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "action-check: $*" >&2; exit 1; }
cargo build -q --workspace
ref=$(pwd)/$target/debug/mcpcert-refserver

# action.yml and the scripts agree.
for s in $(grep -o 'scripts/action/[a-z-]*\.sh' action.yml | sort -u); do [ -x "$s" ] || fail "action.yml runs $s, which is missing"; done
for v in $(grep -o 'INPUT_[A-Z][A-Z_]*' scripts/action/run.sh | sort -u); do
  grep -q "^        $v: \${{ inputs\." action.yml || fail "run.sh reads $v, which action.yml does not set"
done

# Install from a release folder, as from GitHub releases.
version=$(grep -m1 '^version' Cargo.toml | cut -d'"' -f2)
MCPCERT_PROFILE=dev scripts/release-build.sh "$work/release" >/dev/null
export RUNNER_TEMP=$work/runner GITHUB_PATH=$work/path
mkdir -p "$RUNNER_TEMP"
MCPCERT_VERSION=$version MCPCERT_RELEASE_URL=file://$work/release bash scripts/action/install.sh >/dev/null
[ -x "$RUNNER_TEMP/mcpcert-bin/mcpcert" ] || fail "install.sh did not install mcpcert"
grep -q "$RUNNER_TEMP/mcpcert-bin" "$GITHUB_PATH" || fail "install.sh did not add mcpcert to GITHUB_PATH"
# A wrong checksum is refused.
cp -r "$work/release" "$work/bad"
echo "0000000000000000000000000000000000000000000000000000000000000000  mcpcert-$version-x86_64-unknown-linux-gnu.tar.gz" >"$work/bad/mcpcert-$version-x86_64-unknown-linux-gnu.tar.gz.sha256"
if RUNNER_TEMP=$work/runner2 MCPCERT_VERSION=$version MCPCERT_RELEASE_URL=file://$work/bad bash scripts/action/install.sh >/dev/null 2>&1; then
  fail "install.sh accepted a tarball whose sha256 does not match"
fi

step() { # NAME, then INPUT_* assignments
  local name=$1; shift
  export GITHUB_OUTPUT=$work/$name.out GITHUB_STEP_SUMMARY=$work/$name.md
  : >"$GITHUB_OUTPUT"; : >"$GITHUB_STEP_SUMMARY"
  env "$@" INPUT_REPORTS="$work/$name" bash scripts/action/run.sh >"$work/$name.log" 2>&1 || fail "run.sh must exit 0 (the action's last step fails the job)"
  [ -s "$work/$name/junit.xml" ] && [ -s "$work/$name/report.json" ] && [ -s "$work/$name/report.html" ] || fail "$name: reports missing"
}
step clean INPUT_STDIO="$ref --stdio --era dual"
grep -q '^exit-code=0$' "$work/clean.out" || fail "clean: exit-code is not 0: $(cat "$work/clean.out")"
grep -q '^summary=test result: ok\.' "$work/clean.out" || fail "clean: no summary output"
step broken INPUT_STDIO="$ref --stdio --era modern --fault discover-no-ttl" INPUT_REVISION=2026-07-28
grep -q '^exit-code=1$' "$work/broken.out" || fail "broken: exit-code is not 1"
grep -q -- '- 2026-07-28/lifecycle/discover-result-shape' "$work/broken.md" || fail "broken: the step summary does not list the failing case"
step certified INPUT_STDIO="$ref --stdio --era dual --fixtures" INPUT_REQUIREMENTS=2026-07-28 INPUT_STRICT=true
grep -q '^exit-code=0$' "$work/certified.out" || fail "certified: exit-code is not 0"
grep -q '^certificate: ' "$work/certified.md" || fail "certified: the step summary names no certificate"
[ -s "$work/certified/certificate.json" ] || fail "certified: no certificate.json"
echo "action-check: install (sha256 checked, a bad one refused) and run (clean, broken, certified) behave as the action needs"

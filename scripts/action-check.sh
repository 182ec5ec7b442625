#!/usr/bin/env bash
# The GitHub Action's shell steps, run here as a runner would run them:
# install.sh from a release folder (file:// URL, sha256 checked) and from
# source (built once, then reused from the cached folder with no cargo on
# PATH, and built again when the source changes), then run.sh
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

# version: source, cached. action.yml is YAML (GitHub refuses an action it
# cannot parse) and caches the folder install.sh builds into, keyed on
# install.sh --source-key, saving it right after a build.
python3 - <<'PY' || fail "action.yml: the source build's cache steps are not as install.sh needs"
try:
    import yaml
except ImportError:
    import sys
    print("action-check: PyYAML missing (pip install pyyaml): action.yml not parsed", file=sys.stderr)
    raise SystemExit(0)
steps = {s.get("name"): s for s in yaml.safe_load(open("action.yml"))["runs"]["steps"]}
key, restore, install, save = (steps[n] for n in ("Key the mcpcert build", "Restore the mcpcert build", "Install mcpcert", "Save the mcpcert build"))
names = list(steps)
assert names.index("Key the mcpcert build") < names.index("Restore the mcpcert build") < names.index("Install mcpcert") < names.index("Save the mcpcert build"), names
assert key["if"] == restore["if"] == "inputs.version == 'source'" and "install.sh\" --source-key" in key["run"], key
assert restore["uses"] == "actions/cache/restore@v4" and save["uses"] == "actions/cache/save@v4", (restore, save)
for s in (restore, save):
    assert s["with"] == {"path": "${{ runner.temp }}/mcpcert-source", "key": "${{ steps.source-key.outputs.key }}"}, s
assert key["id"] == "source-key" and install["id"] == "install" and "steps.install.outputs.built == 'true'" in save["if"], save
PY
cargo_fails=$work/no-cargo
mkdir -p "$cargo_fails"
printf '#!/bin/sh\necho "action-check: cargo called ($*)" >&2\nexit 97\n' >"$cargo_fails/cargo"
chmod +x "$cargo_fails/cargo"
src=$work/source
mkdir -p "$src"
# The workspace's debug build (built above): the cold install is a copy.
src_install() { env RUNNER_TEMP="$src" GITHUB_PATH="$src/path" GITHUB_OUTPUT="$src/out" MCPCERT_VERSION=source MCPCERT_PROFILE=dev "$@" bash scripts/action/install.sh >/dev/null 2>"$src/err"; }
key=$(MCPCERT_PROFILE=dev bash scripts/action/install.sh --source-key)
[[ $key =~ ^[0-9a-f]{64}$ ]] || fail "install.sh --source-key printed no sha256: $key"
src_install || fail "the cold source install failed: $(cat "$src/err")"
built=$src/mcpcert-source/bin/mcpcert
[ -x "$built" ] && [ "$(cat "$built.source-key")" = "$key" ] || fail "the source install left no binary stamped with its key in RUNNER_TEMP/mcpcert-source/bin"
grep -qx 'built=true' "$src/out" || fail "the cold source install did not output built=true (action.yml saves the cache on it)"
! grep -q reused "$src/err" || fail "the cold source install said it reused a build"
stamp_before=$(ls -li --time-style=full-iso "$built")
# The second install: cargo fails if called.
: >"$src/out"
: >"$src/path"
src_install PATH="$cargo_fails:$PATH" || fail "the second source install did not reuse the cached build: $(cat "$src/err")"
grep -qx "mcpcert: cached build for source ${key:0:12} reused" "$src/err" || fail "the second source install did not say it reused the build: $(cat "$src/err")"
[ "$(readlink "$src/mcpcert-bin/mcpcert")" = "$built" ] && [ "$(ls -li --time-style=full-iso "$built")" = "$stamp_before" ] || fail "the second source install did not put the same binary on PATH"
grep -qx "$src/mcpcert-bin" "$src/path" || fail "the second source install did not add mcpcert to GITHUB_PATH"
! grep -q built "$src/out" || fail "the second source install output built=true (the cache would be saved again)"
# The key is where the source is not, and what it is: a copy has the same
# key; a copy with one suite changed has another, and builds (cargo called).
copy=$work/copy
mkdir -p "$copy/harness" "$copy/scripts"
cp Cargo.toml Cargo.lock "$copy/"
cp -r harness/Cargo.toml harness/src harness/schemas "$copy/harness/"
cp -r suites "$copy/harness/suites"
cp -r scripts/action "$copy/scripts/"
[ "$(MCPCERT_PROFILE=dev bash "$copy/scripts/action/install.sh" --source-key)" = "$(MCPCERT_PROFILE=dev bash scripts/action/install.sh --source-key)" ] || fail "a copy of the source elsewhere has another key"
echo " " >>"$copy/harness/suites/2026-07-28/10-lifecycle.json"
[ "$(MCPCERT_PROFILE=dev bash "$copy/scripts/action/install.sh" --source-key)" != "$key" ] || fail "a changed suite does not change the source key"
if env RUNNER_TEMP="$src" MCPCERT_VERSION=source MCPCERT_PROFILE=dev PATH="$cargo_fails:$PATH" bash "$copy/scripts/action/install.sh" >/dev/null 2>"$src/err"; then
  fail "a changed source reused the cached build"
fi
grep -q 'action-check: cargo called (install ' "$src/err" || fail "a changed source did not build: $(cat "$src/err")"
[ "$(MCPCERT_PROFILE=release bash scripts/action/install.sh --source-key)" != "$key" ] || fail "the profile is not in the source key"

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
# Failures (one of them a root cause several cases share) and warnings: the
# step summary lists exactly the cases report.json says fail the run, each
# once with its one-line reason, and exactly its warnings.
step broken INPUT_STDIO="$ref --stdio --era modern --fault discover-no-ttl --fault error-id-null --fault order-varies" INPUT_REVISION=2026-07-28
grep -q '^exit-code=1$' "$work/broken.out" || fail "broken: exit-code is not 1"
python3 - "$work/broken.md" "$work/broken/report.json" <<'PY' || fail "broken: the step summary does not match report.json"
import json, re, sys
md = open(sys.argv[1]).read()
r = json.load(open(sys.argv[2]))
def section(title):
    m = re.search(r"^\*\*" + title + r"\*\* \((\d+)[^\n]*\n\n((?:[ ]*- [^\n]*\n)*)", md, re.M)
    assert m, f"no {title} section:\n{md}"
    return int(m.group(1)), m.group(2)
def first(s): return (s or "").split("\n")[0]
failing = [c for c in r["cases"] if c["verdict"] in ("fail", "error") and not c.get("baseline")]
warns = [c for c in r["cases"] if c["verdict"] == "warn"]
assert failing and warns, "the broken run needs failures and warnings"
n, body = section("Failing cases")
listed = re.findall(r"^\s*- `([^`]+)` \((\w+), ([A-Z ]+|POLICY)\): ", body, re.M)
assert n == len(failing), (n, len(failing))
assert sorted(i for i, _, _ in listed) == sorted(c["id"] for c in failing), (listed, [c["id"] for c in failing])
for c in failing:
    line = next(l for l in body.splitlines() if f"`{c['id']}`" in l)
    assert f"({c['verdict']}, {c['level']})" in line, line
    assert first(c["message"])[:40].replace("`", "\\`").replace("*", "\\*").replace("_", "\\_")[:20] in line, (line, first(c["message"]))
roots = r.get("roots", [])
assert roots, "error-id-null gives a root cause"
assert md.count("- root cause (") == len([g for g in roots if any(c["id"] in g["cases"] + g.get("frames_of", []) for c in failing)])
wn, wbody = section("Warnings")
assert wn == len(warns) and sorted(re.findall(r"^- `([^`]+)`", wbody, re.M)) == sorted(c["id"] for c in warns), (wn, wbody)
assert "frame:" not in md and "----" not in md, "console text leaked into the summary"
s = r["summary"]
assert f"| {s['total']} | {s['pass']} | {s['fail']} | {s['warn']} | {s['n/a']} | {s['error']} |" in md, "counts"
assert ("**FAILED**: " + "; ".join(r["outcome"]["why"])) in md.replace("\\", ""), "outcome"
PY
# A quoted argument in `args` stays one argument (a baseline whose path has a space).
printf '[expected]\n"2026-07-28/lifecycle/discover-result-shape" = "known"\n"2026-07-28/wire/server-frames-valid" = "known"\n' >"$work/known failures.toml"
step quoted INPUT_STDIO="$ref --stdio --era modern --fault discover-no-ttl" INPUT_REVISION=2026-07-28 INPUT_ARGS="--expected-failures '$work/known failures.toml' --quiet"
grep -q '^exit-code=0$' "$work/quoted.out" || fail "quoted: a quoted args word was split: $(cat "$work/quoted.out")"
grep -q '2 expected failures' "$work/quoted.md" || fail "quoted: the summary does not count the expected failure"
# An unmatched quote is said, with exit-code 2, not run half-split.
export GITHUB_OUTPUT=$work/badargs.out GITHUB_STEP_SUMMARY=$work/badargs.md
: >"$GITHUB_OUTPUT"
env INPUT_STDIO="$ref --stdio" INPUT_ARGS="--skip 'unclosed" INPUT_REPORTS="$work/badargs" bash scripts/action/run.sh >/dev/null 2>&1 || fail "badargs: run.sh must exit 0"
grep -q '^exit-code=2$' "$work/badargs.out" || fail "badargs: an unmatched quote in args does not give exit-code 2"
# The artifact and check names are inputs, and publishing can be skipped.
grep -q 'name: ${{ inputs.artifact-name }}' action.yml || fail "action.yml: the artifact name is not the artifact-name input"
grep -q "if: always() && inputs.publish-junit == 'true'" action.yml || fail "action.yml: publishing the JUnit report cannot be skipped"
step certified INPUT_STDIO="$ref --stdio --era dual --fixtures" INPUT_REQUIREMENTS=2026-07-28 INPUT_STRICT=true
grep -q '^exit-code=0$' "$work/certified.out" || fail "certified: exit-code is not 0"
grep -q '^certificate: ' "$work/certified.md" || fail "certified: the step summary names no certificate"
[ -s "$work/certified/certificate.json" ] || fail "certified: no certificate.json"
echo "action-check: install (sha256 checked, a bad one refused; version: source built once, then reused without cargo, rebuilt when the source changes) and run (clean, broken with its exact summary, quoted args, certified) behave as the action needs"

#!/usr/bin/env bash
# The published-crate layout works: `cargo package -p mcpcert` holds the
# suites, the requirement sets and the wire schemas, and mcpcert installed
# from that package (into a temporary root, `cargo install --path` on the
# unpacked crate) runs with no repository around it. Also runs the
# release's build-and-checksum script (in the dev profile, to be quick) and
# checks what it made. Needs crates.io for the package's resolution.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${CARGO_TARGET_DIR:-target}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo package -q -p mcpcert --no-verify --allow-dirty
crate=$(ls "$target"/package/mcpcert-*.crate | sort | tail -n 1)
tar tzf "$crate" >"$work/files"
for f in suites/suite.schema.json suites/requirements/2026-07-28.json suites/2026-07-28/10-lifecycle.json schemas/2026-07-28.json; do
  grep -q "/$f\$" "$work/files" || { echo "install-check: $f is not in $crate" >&2; exit 1; }
done
tar xzf "$crate" -C "$work"
src=$(ls -d "$work"/mcpcert-*/)
cargo install -q --locked --debug --path "$src" --root "$work/root" --target-dir "$target/install-check"
cd "$work"   # no repository here
n=$("$work/root/bin/mcpcert" list | tail -n 1 | awk '{print $1}')
[ "$n" -gt 100 ] || { echo "install-check: the installed mcpcert lists $n cases" >&2; exit 1; }
"$work/root/bin/mcpcert" list --requirements 2026-07-28 >"$work/req"
grep -q "37 scored scenarios" "$work/req" || { echo "install-check: no requirement set" >&2; exit 1; }
"$work/root/bin/mcpcert" run --list 2026-07-28/lifecycle/ >"$work/runlist"
grep -q discover-result-shape "$work/runlist" || { echo "install-check: run --list" >&2; exit 1; }
cd - >/dev/null
echo "install-check: mcpcert installed from $(basename "$crate") lists $n cases and the requirement sets, outside the repository"
# The release build and checksum (dev profile here; the release workflow uses dist).
MCPCERT_PROFILE=dev scripts/release-build.sh "$work/dist" >/dev/null
tarball=$(ls "$work"/dist/mcpcert-*.tar.gz)
(cd "$work/dist" && sha256sum -c --quiet "$(basename "$tarball").sha256") || { echo "install-check: the checksum does not match" >&2; exit 1; }
tar xzf "$tarball" -C "$work/dist"
"$work"/dist/mcpcert-*/mcpcert --version >"$work/version"
grep -q '^mcpcert ' "$work/version" || { echo "install-check: the packed binary does not run" >&2; exit 1; }
echo "install-check: release tarball $(basename "$tarball") and its sha256 verified"

#!/usr/bin/env bash
# Build the mcpcert binary for this machine and pack it for a release:
# OUT/mcpcert-VERSION-TARGET.tar.gz (the binary, README, licence notes) and
# OUT/mcpcert-VERSION-TARGET.tar.gz.sha256. The release workflow runs it and
# attaches both; scripts/install-check.sh runs it in the dev profile.
# usage: release-build.sh OUT_DIR   (MCPCERT_PROFILE=dist by default)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: release-build.sh OUT_DIR}
profile=${MCPCERT_PROFILE:-dist}
target=${CARGO_TARGET_DIR:-target}
cargo build -q --locked -p mcpcert --profile "$profile"
dir=$([ "$profile" = dev ] && echo debug || echo "$profile")
version=$(grep -m1 '^version' Cargo.toml | cut -d'"' -f2)
triple=$(rustc -vV | awk '/^host:/ {print $2}')
name=mcpcert-$version-$triple
mkdir -p "$out/$name"
cp "$target/$dir/mcpcert" README.md "$out/$name/"
# The README links the docs pages and their screenshots.
mkdir -p "$out/$name/docs"
cp docs/*.md docs/*.png "$out/$name/docs/"
tar czf "$out/$name.tar.gz" -C "$out" "$name"
rm -rf "${out:?}/$name"
(cd "$out" && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
echo "$out/$name.tar.gz"

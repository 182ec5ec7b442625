#!/usr/bin/env bash
# The action's install step: put mcpcert on PATH. MCPCERT_BIN (a binary
# already there) wins; MCPCERT_VERSION=source builds from the action's own
# checkout with cargo; otherwise the release tarball of MCPCERT_VERSION is
# downloaded from MCPCERT_RELEASE_URL (default: the repository's GitHub
# releases) and checked against its sha256.
set -euo pipefail
bin_dir=${RUNNER_TEMP:-/tmp}/mcpcert-bin
mkdir -p "$bin_dir"
here=$(cd "$(dirname "$0")/../.." && pwd)
if [ -n "${MCPCERT_BIN:-}" ]; then
  ln -sf "$MCPCERT_BIN" "$bin_dir/mcpcert"
elif [ "${MCPCERT_VERSION:-}" = source ]; then
  cargo install --locked --path "$here/harness" --root "$bin_dir/.." >/dev/null
  ln -sf "$bin_dir/../bin/mcpcert" "$bin_dir/mcpcert"
else
  version=${MCPCERT_VERSION:?set MCPCERT_VERSION}
  # Releases carry a Linux x86-64 binary only; elsewhere build from source.
  if [ "$(uname -s)/$(uname -m)" != Linux/x86_64 ] && [ -z "${MCPCERT_RELEASE_URL:-}" ]; then
    echo "mcpcert action: release binaries are built for Linux x86-64 only; this runner is $(uname -s)/$(uname -m): set the input version: source (builds with cargo)" >&2
    exit 1
  fi
  triple=x86_64-unknown-linux-gnu
  name=mcpcert-$version-$triple
  base=${MCPCERT_RELEASE_URL:-https://github.com/${MCPCERT_REPO:?set MCPCERT_REPO}/releases/download/v$version}
  tmp=$(mktemp -d)
  curl -fsSL "$base/$name.tar.gz" -o "$tmp/$name.tar.gz"
  curl -fsSL "$base/$name.tar.gz.sha256" -o "$tmp/$name.tar.gz.sha256"
  (cd "$tmp" && sha256sum -c --quiet "$name.tar.gz.sha256")
  tar xzf "$tmp/$name.tar.gz" -C "$tmp"
  install -m 0755 "$tmp/$name/mcpcert" "$bin_dir/mcpcert"
  rm -rf "$tmp"
fi
"$bin_dir/mcpcert" --version
if [ -n "${GITHUB_PATH:-}" ]; then echo "$bin_dir" >>"$GITHUB_PATH"; fi

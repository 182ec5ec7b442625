#!/usr/bin/env bash
# The action's install step: put mcpcert on PATH. MCPCERT_BIN (a binary
# already there) wins; MCPCERT_VERSION=source builds from the action's own
# source with cargo, once per source key (below); otherwise the release
# tarball of MCPCERT_VERSION is downloaded from MCPCERT_RELEASE_URL
# (default: the repository's GitHub releases) and checked against its sha256.
#
# The source build is installed in RUNNER_TEMP/mcpcert-source (the folder
# action.yml caches) and stamped with its key: the sha256 of what makes the
# binary (the workspace's Cargo.toml and Cargo.lock; harness/Cargo.toml,
# src, schemas and suites, which the binary embeds), the OS and machine,
# `rustc -vV` and the cargo profile. A folder stamped with the same key is
# reused without cargo; a new mcpcert commit, toolchain or runner builds
# once. `install.sh --source-key` prints the key (action.yml keys its cache
# with it). MCPCERT_PROFILE (default release) and CARGO_TARGET_DIR are for
# the checks: scripts/action-check.sh installs the workspace's debug build.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
profile=${MCPCERT_PROFILE:-release}
if command -v sha256sum >/dev/null; then sha256=(sha256sum); else sha256=(shasum -a 256); fi

source_key() {
  local inputs=() p
  for p in Cargo.toml Cargo.lock rust-toolchain rust-toolchain.toml .cargo/config .cargo/config.toml \
    harness/Cargo.toml harness/build.rs harness/src harness/schemas harness/suites; do
    if [ -e "$here/$p" ]; then inputs+=("$p"); fi
  done
  {
    # Paths relative to the source, so the key does not depend on where the
    # action is; -L: harness/suites is a link to the top-level suites/.
    (cd "$here" && find -L "${inputs[@]}" -type f -print0 | LC_ALL=C sort -z | xargs -0 "${sha256[@]}")
    echo "os: $(uname -s) $(uname -m)"
    # The toolchain cargo will build with (rustup picks it by this folder).
    rustc -vV 2>/dev/null || echo "rustc: none"
    echo "profile: $profile"
  } | "${sha256[@]}" | cut -c1-64
}
if [ "${1:-}" = --source-key ]; then
  source_key
  exit 0
fi

bin_dir=${RUNNER_TEMP:-/tmp}/mcpcert-bin
mkdir -p "$bin_dir"
if [ -n "${MCPCERT_BIN:-}" ]; then
  ln -sf "$MCPCERT_BIN" "$bin_dir/mcpcert"
elif [ "${MCPCERT_VERSION:-}" = source ]; then
  root=${RUNNER_TEMP:-/tmp}/mcpcert-source
  stamp=$root/bin/mcpcert.source-key
  key=$(source_key)
  if [ -x "$root/bin/mcpcert" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$key" ]; then
    echo "mcpcert: cached build for source ${key:0:12} reused" >&2
  else
    echo "mcpcert: building source ${key:0:12} with cargo (profile $profile): minutes on a small runner, once per mcpcert source" >&2
    rm -f "$stamp"
    cargo install --locked --force --profile "$profile" --path "$here/harness" --root "$root" >/dev/null
    echo "$key" >"$stamp"
    # action.yml saves the folder in the cache only after a build.
    if [ -n "${GITHUB_OUTPUT:-}" ]; then echo "built=true" >>"$GITHUB_OUTPUT"; fi
  fi
  ln -sf "$root/bin/mcpcert" "$bin_dir/mcpcert"
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

#!/usr/bin/env bash
# mcpcert's fuzzer beside mcp-fuzzer (PyPI, pinned): on the reference server
# over stdio and HTTP, clean and with each of its fuzz faults, and on the
# interop servers of scripts/interop.sh whose tools reach nothing outside
# the machine (mcp-fuzzer calls every tool with arguments of its own; the
# filesystem servers of the corpus are left out). Which faults each finds,
# what else each reports, inputs per second. Writes
# reports/fuzz-compare/summary.{json,md}; docs/fuzz.md quotes a run of it.
# A benchmark, not a test: CI does not run it. Needs Python 3 with pip and
# Node 20 with npm (the interop servers).
set -euo pipefail
# mcp-fuzzer calls every tool (server-everything's get-env among them) and
# writes what they return into its reports: it and the servers it meets run
# with an environment that holds only what they need.
if [ -z "${FUZZ_COMPARE_SCRUBBED:-}" ]; then
  exec env -i FUZZ_COMPARE_SCRUBBED=1 PATH="$PATH" HOME="$HOME" LANG=C.UTF-8 \
    ${CARGO_HOME:+CARGO_HOME="$CARGO_HOME"} ${RUSTUP_HOME:+RUSTUP_HOME="$RUSTUP_HOME"} bash "$0" "$@"
fi
cd "$(dirname "$0")/.."
MCP_FUZZER_VERSION=0.7.0
cargo build -q --release --locked -p mcpcert -p mcpcert-refserver
. scripts/lib/interop-env.sh
setup_servers
setup_corpus
fz=$dir/mcp-fuzzer
if [ ! -x "$fz/bin/mcp-fuzzer" ]; then
  python3 -m venv "$fz"
  "$fz/bin/pip" install -q "mcp-fuzzer==$MCP_FUZZER_VERSION"
fi
out=reports/fuzz-compare
rm -rf "$out"
mkdir -p "$out/logs"
# Interop targets: name, transport, endpoint, mcpcert's options (the
# set-up's config: its call policy for the arguments class).
targets=$out/targets.json
{
  printf '['
  sep=
  entry() { printf '%s{"name": "%s", "transport": "%s", "endpoint": "%s", "mcpcert": [%s]}' "$sep" "$1" "$2" "$3" "$4"; sep=,; }
  entry mcp-server-time-stdio stdio "$venv/bin/mcp-server-time --local-timezone UTC" ''
  entry fastmcp-stdio stdio "$venv/bin/fastmcp run $root/fixtures/interop/fastmcp_server.py --transport stdio --no-banner" \
    '"--config", "fixtures/interop/fastmcp.toml"'
  entry server-everything-stdio stdio "node $everything stdio" '"--config", "fixtures/interop/server-everything.toml"'
  entry rmcp-stdio stdio "$rmcp stdio" '"--config", "fixtures/interop/rmcp.toml"'
  entry time-mcp-1.12-stdio stdio "$corpus/py/mcp-1.12/bin/mcp-server-time --local-timezone UTC" ''
  for s in fastmcp server-everything rmcp; do
    start_http "$s" "$out/logs"
    entry "$s-http" http "$url" "\"${args[0]}\", \"${args[1]}\""
  done
  printf ']\n'
} >"$targets"
python3 scripts/fuzz-compare.py "$PWD/target/release/mcpcert" "$PWD/target/release/mcpcert-refserver" "$fz/bin/mcp-fuzzer" \
  "$targets" "$out"

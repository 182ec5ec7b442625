#!/usr/bin/env bash
# mcpcert's fuzzer beside mcp-fuzzer (PyPI, pinned) on the reference server
# over stdio, clean and with each of its fuzz faults: which faults each
# finds, what else each reports, inputs per second. Writes
# reports/fuzz-compare/summary.{json,md}; docs/fuzz.md quotes a run of it.
# A benchmark, not a test: CI does not run it. Needs Python 3 with pip.
set -euo pipefail
cd "$(dirname "$0")/.."
MCP_FUZZER_VERSION=0.7.0
cargo build -q --release --locked -p mcpcert -p mcpcert-refserver
venv=.interop/mcp-fuzzer
if [ ! -x "$venv/bin/mcp-fuzzer" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "mcp-fuzzer==$MCP_FUZZER_VERSION"
fi
out=reports/fuzz-compare
rm -rf "$out"
python3 scripts/fuzz-compare.py "$PWD/target/release/mcpcert" "$PWD/target/release/mcpcert-refserver" "$PWD/$venv/bin/mcp-fuzzer" "$out"

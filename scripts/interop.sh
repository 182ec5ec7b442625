#!/usr/bin/env bash
# Run mcpcert against real servers from the registries and check that
# `mcpcert lint` agrees with the run on each server's tools:
#   PyPI mcp-server-time (stdio), a small fastmcp server (stdio and HTTP on
#   127.0.0.1), npm @modelcontextprotocol/server-everything (stdio, and HTTP
#   bound to 127.0.0.1 by fixtures/interop/loopback.cjs).
# Each run's verdicts are compared with fixtures/interop/expected/<name>.txt
# (MCPCERT_UPDATE_EXPECTED=1 rewrites them); any change fails the script.
# Reports go to reports/interop/<name>/. Needs network access to PyPI and npm
# for the installs ($MCPCERT_VENV and $MCPCERT_NPM_DIR reuse earlier ones).
set -uo pipefail
cd "$(dirname "$0")/.."
venv=${MCPCERT_VENV:-.venv-interop}
npmdir=${MCPCERT_NPM_DIR:-.npm-interop}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q mcp-server-time==2026.10.19 fastmcp==4.2.3
mkdir -p "$npmdir"
[ -f "$npmdir/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ] ||
  npm install -q --no-audit --no-fund --prefix "$npmdir" @modelcontextprotocol/server-everything@2026.8.31
export PATH="$(cd "$venv" && pwd)/bin:$PATH"
cargo build -q -p mcpcert
m=${CARGO_TARGET_DIR:-target}/debug/mcpcert
out=reports/interop
status=0
run() {
  name=$1; shift
  "$m" run "$@" --junit "$out/$name/junit.xml" --json "$out/$name/report.json" --html "$out/$name/report.html" >"$out/$name.log" 2>&1
  echo "$name: mcpcert exit $? ($(tail -n 1 "$out/$name.log"))"
  python3 scripts/lint-agrees.py "$out/$name/report.json" "$m" | sed "s/^/  lint vs run, /" || status=1
  python3 scripts/verdicts.py "$out/$name/report.json" "fixtures/interop/expected/$name.txt" ${MCPCERT_UPDATE_EXPECTED:+--update} | sed "s/^/  /" || status=1
}
mkdir -p "$out"
run mcp-server-time --stdio 'mcp-server-time --local-timezone UTC'
run fastmcp-stdio --stdio 'fastmcp run fixtures/interop/fastmcp_server.py --transport stdio --no-banner' --config fixtures/interop/fastmcp.toml
run server-everything-stdio --stdio "node $npmdir/node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio" \
  --config fixtures/interop/server-everything.toml
# Each HTTP server runs in a session of its own, so the whole process group
# (wrappers and their children) is killed at the end.
setsid fastmcp run fixtures/interop/fastmcp_server.py --transport http --host 127.0.0.1 --port 3105 --no-banner >/dev/null 2>&1 &
pids="$!"
trap 'for p in $pids; do kill -- -$p 2>/dev/null; done' EXIT
for _ in $(seq 1 60); do curl -s -o /dev/null http://127.0.0.1:3105/mcp && break; sleep 0.5; done
run fastmcp-http --http http://127.0.0.1:3105/mcp --config fixtures/interop/fastmcp.toml --allowed-origin http://localhost
PORT=3102 setsid node --require ./fixtures/interop/loopback.cjs "$npmdir/node_modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp >/dev/null 2>&1 &
pids="$pids $!"
for _ in $(seq 1 60); do curl -s -o /dev/null http://127.0.0.1:3102/mcp && break; sleep 0.5; done
run server-everything-http --http http://127.0.0.1:3102/mcp --config fixtures/interop/server-everything.toml
exit $status

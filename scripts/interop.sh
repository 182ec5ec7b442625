#!/usr/bin/env bash
# Run mcpcert against real servers from the registries:
#   PyPI mcp-server-time (stdio); a small fastmcp server (stdio and HTTP);
#   npm @modelcontextprotocol/server-everything (stdio, and HTTP bound to
#   127.0.0.1 by fixtures/interop/loopback.cjs); a small rmcp server from
#   crates.io (stdio and HTTP), fixtures/interop/rmcp-server.
# Everything is installed at pinned versions (fixtures/interop/requirements.txt,
# fixtures/interop/npm/package-lock.json, rmcp-server/Cargo.lock) into
# $MCPCERT_INTEROP_DIR (default .interop), and reused when already there.
# For each server: `mcpcert lint` must agree with the run on its tools, and the
# verdicts must equal fixtures/interop/expected/<name>.txt (a diff is printed;
# MCPCERT_UPDATE_EXPECTED=1 rewrites the files). Any difference fails the
# script. Reports go to reports/interop/<name>/. HTTP servers listen on
# 127.0.0.1 only, on free ports, and their process groups are killed at exit.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/interop-env.sh
setup_servers
status=0
say() { printf '%s\n' "$*"; }

# --- runs --------------------------------------------------------------------
out=reports/interop
mkdir -p "$out"
run() {
  name=$1; shift
  mkdir -p "$out/$name"
  local t0=$SECONDS
  "$m" run "$@" --junit "$out/$name/junit.xml" --json "$out/$name/report.json" \
    --html "$out/$name/report.html" >"$out/$name.log" 2>&1
  say "$name: mcpcert exit $? in $((SECONDS - t0)) s ($(grep "^test result:" "$out/$name.log" | tail -n 1))"
  python3 scripts/lint-agrees.py "$out/$name/report.json" "$m" | sed "s/^/  lint vs run, /"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  python3 scripts/verdicts.py "$out/$name/report.json" "fixtures/interop/expected/$name.txt" \
    ${MCPCERT_UPDATE_EXPECTED:+--update} | sed "s/^/  /"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
}
run mcp-server-time --stdio 'mcp-server-time --local-timezone UTC'
run fastmcp-stdio --stdio 'fastmcp run fixtures/interop/fastmcp_server.py --transport stdio --no-banner' \
  --config fixtures/interop/fastmcp.toml
run server-everything-stdio --stdio "node $everything stdio" --config fixtures/interop/server-everything.toml
run rmcp-stdio --stdio "$rmcp stdio" --config fixtures/interop/rmcp.toml

for server in fastmcp server-everything rmcp; do
  if start_http "$server" "$out"; then
    run "$server-http" --http "$url" "${args[@]}"
  else status=1; fi
done
exit $status

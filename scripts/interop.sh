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
root=$(pwd)
dir=${MCPCERT_INTEROP_DIR:-.interop}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
target=${CARGO_TARGET_DIR:-target}
status=0
say() { printf '%s\n' "$*"; }
die() { say "interop: $*" >&2; exit 2; }

# --- installs (pinned) -------------------------------------------------------
venv=${MCPCERT_VENV:-$dir/venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv" || die "cannot create a venv in $venv"
if ! cmp -s fixtures/interop/requirements.txt "$venv/.mcpcert-requirements"; then
  "$venv/bin/pip" install -q --disable-pip-version-check -r fixtures/interop/requirements.txt ||
    die "pip install of fixtures/interop/requirements.txt failed"
  cp fixtures/interop/requirements.txt "$venv/.mcpcert-requirements"
fi
npmdir=$dir/npm
mkdir -p "$npmdir"
if ! cmp -s fixtures/interop/npm/package-lock.json "$npmdir/package-lock.json" ||
   [ ! -d "$npmdir/node_modules" ]; then
  cp fixtures/interop/npm/package.json fixtures/interop/npm/package-lock.json "$npmdir/"
  (cd "$npmdir" && npm ci -q --no-audit --no-fund) || die "npm ci in $npmdir failed"
fi
everything=$npmdir/node_modules/@modelcontextprotocol/server-everything/dist/index.js
cargo build -q --release --locked --manifest-path fixtures/interop/rmcp-server/Cargo.toml \
  --target-dir "$target/interop-rmcp" || die "building fixtures/interop/rmcp-server failed"
rmcp=$(cd "$target/interop-rmcp/release" && pwd)/mcpcert-interop-rmcp
cargo build -q -p mcpcert || die "building mcpcert failed"
m=$target/debug/mcpcert
export PATH="$venv/bin:$PATH"

# --- runs --------------------------------------------------------------------
out=reports/interop
mkdir -p "$out"
run() {
  name=$1; shift
  mkdir -p "$out/$name"
  local t0=$SECONDS
  "$m" run "$@" --junit "$out/$name/junit.xml" --json "$out/$name/report.json" \
    --html "$out/$name/report.html" >"$out/$name.log" 2>&1
  say "$name: mcpcert exit $? in $((SECONDS - t0)) s ($(tail -n 1 "$out/$name.log"))"
  python3 scripts/lint-agrees.py "$out/$name/report.json" "$m" | sed "s/^/  lint vs run, /"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
  python3 scripts/verdicts.py "$out/$name/report.json" "fixtures/interop/expected/$name.txt" \
    ${MCPCERT_UPDATE_EXPECTED:+--update} | sed "s/^/  /"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
}
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
pids=""
trap 'for p in $pids; do kill -- -$p 2>/dev/null; done' EXIT
# Starts an HTTP server in a session of its own (so the whole process group,
# wrappers and children, can be killed) and waits until it answers.
serve() {
  local url=$1; shift
  setsid "$@" >"$out/server-$(basename "$url" | tr -c 'a-z0-9\n' _).log" 2>&1 &
  local pid=$!
  pids="$pids $pid"
  for _ in $(seq 1 120); do
    curl -s -o /dev/null "$url" && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  say "interop: the server for $url did not start: $*" >&2
  return 1
}

run mcp-server-time --stdio 'mcp-server-time --local-timezone UTC'
run fastmcp-stdio --stdio 'fastmcp run fixtures/interop/fastmcp_server.py --transport stdio --no-banner' \
  --config fixtures/interop/fastmcp.toml
run server-everything-stdio --stdio "node $everything stdio" --config fixtures/interop/server-everything.toml
run rmcp-stdio --stdio "$rmcp stdio" --config fixtures/interop/rmcp.toml

port=$(free_port)
if serve "http://127.0.0.1:$port/mcp" fastmcp run fixtures/interop/fastmcp_server.py \
    --transport http --host 127.0.0.1 --port "$port" --no-banner; then
  run fastmcp-http --http "http://127.0.0.1:$port/mcp" --config fixtures/interop/fastmcp.toml \
    --allowed-origin http://localhost
else status=1; fi
port=$(free_port)
if PORT=$port serve "http://127.0.0.1:$port/mcp" node --require "$root/fixtures/interop/loopback.cjs" \
    "$everything" streamableHttp; then
  run server-everything-http --http "http://127.0.0.1:$port/mcp" --config fixtures/interop/server-everything.toml
else status=1; fi
port=$(free_port)
if serve "http://127.0.0.1:$port/mcp" "$rmcp" http "$port"; then
  run rmcp-http --http "http://127.0.0.1:$port/mcp" --config fixtures/interop/rmcp.toml
else status=1; fi
exit $status

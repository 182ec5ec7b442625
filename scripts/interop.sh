#!/usr/bin/env bash
# Run mcpcert against real servers from the registries:
#   PyPI mcp-server-time (stdio); a small fastmcp server (stdio and HTTP);
#   npm @modelcontextprotocol/server-everything (stdio, and HTTP bound to
#   127.0.0.1 by fixtures/interop/loopback.cjs); a small rmcp server from
#   crates.io (stdio and HTTP), fixtures/interop/rmcp-server; and the corpus of
#   older SDK generations, fixtures/interop/corpus (2024-11-05 over stdio and
#   HTTP with SSE, 2025-03-26 and 2025-06-18 over Streamable HTTP and stdio,
#   a dual-era TS v2 server, fastmcp-tasks serving the tasks extension of
#   2026-07-28 over stdio and HTTP, the skills extension of fastmcp and of
#   the TS SDK v2, and the Python SDK's MCP Apps, over stdio; see
#   docs/interop.md); and two protected servers
#   (fastmcp's JWT verifier, the Python SDK's token verifier) trusting
#   mcpcert's built-in test issuer, judged with [auth].
# Everything is installed at pinned versions (fixtures/interop/requirements.txt,
# fixtures/interop/npm/package-lock.json, rmcp-server/Cargo.lock) into
# $MCPCERT_INTEROP_DIR (default .interop), and reused when already there.
# The runs are one `mcpcert matrix` over a targets file written here
# (reports/interop/targets.toml: the HTTP servers are started first, on free
# ports of 127.0.0.1), -j $MCPCERT_INTEROP_JOBS at a time (default: 2 on a
# machine of 2 cores or fewer, else 4: each run starts server processes of
# its own, and the start-up timeout must measure the servers); then
# `mcpcert diff --any-change` against fixtures/interop/expected/<name>.txt
# (any difference fails the script; MCPCERT_UPDATE_EXPECTED=1 rewrites the
# files from the run); each set-up runs with the default -j and again with
# -j 1, both with the load check (--load 8), and the two must give the same
# verdicts; each HTTP set-up runs twice more behind scripts/delay-proxy.py
# (10 ms added per round trip), with the default -j and -j 1, and must give
# the verdicts it gets on loopback; and for each server `mcpcert lint` must agree with the
# run on its tools; and the reproducers of every case that failed, warned or
# errored are replayed against its server by scripts/reproducers-check.py
# (each request must get the HTTP status, over stdio and over HTTP with SSE
# the kind of answer, it got in the run). Reports go to reports/interop/ (matrix.html, junit.xml,
# <name>/). The HTTP servers' process groups are killed at exit.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/interop-env.sh
setup_servers
status=0
say() { printf '%s\n' "$*"; }

# --- the targets ------------------------------------------------------------
out=reports/interop
rm -rf "$out" "$out-j1" "$out-delay" "$out-delay-j1"
mkdir -p "$out"
targets=$out/targets.toml
: >"$targets"
# The HTTP set-ups again, each behind scripts/delay-proxy.py adding 10 ms per
# round trip: a server across a network.
delayed=$out/targets-delay.toml
: >"$delayed"
q() { python3 -c 'import json, sys; print(json.dumps(sys.argv[1]))' "$1"; }
# add_target NAME command|url VALUE [MCPCERT OPTIONS...]: a [[target]] table
# (in $into, default $targets); --config FILE becomes its config (absolute:
# the file lives in reports/).
add_target() {
  local name=$1 kind=$2 value=$3 cfg="" extra=() sep="" a
  shift 3
  while [ $# -gt 0 ]; do
    if [ "$1" = --config ]; then cfg=$root/$2; shift 2; else extra+=("$1"); shift; fi
  done
  {
    printf '[[target]]\nname = %s\n%s = %s\n' "$(q "$name")" "$kind" "$(q "$value")"
    [ -z "$cfg" ] || printf 'config = %s\n' "$(q "$cfg")"
    if [ ${#extra[@]} -gt 0 ]; then
      printf 'args = ['
      for a in "${extra[@]}"; do printf '%s%s' "$sep" "$(q "$a")"; sep=", "; done
      printf ']\n'
    fi
    printf '\n'
  } >>"${into:-$targets}"
}
add_target mcp-server-time command 'mcp-server-time --local-timezone UTC'
add_target fastmcp-stdio command 'fastmcp run fixtures/interop/fastmcp_server.py --transport stdio --no-banner' \
  --config fixtures/interop/fastmcp.toml
add_target server-everything-stdio command "node $everything stdio" --config fixtures/interop/server-everything.toml
add_target rmcp-stdio command "$rmcp stdio" --config fixtures/interop/rmcp.toml
# The corpus of older SDK generations (fixtures/interop/corpus): servers that
# speak 2024-11-05, 2025-03-26 or 2025-06-18 only, and one dual-era TS v2 server.
setup_corpus
N=node_modules/@modelcontextprotocol
add_target corpus-fs-2024-stdio command \
  "node $corpus/npm/fs-2024/$N/server-filesystem/dist/index.js $corpus/fsroot" --config fixtures/interop/corpus/fs-2024.toml
add_target corpus-memory-2024-stdio command \
  "env MEMORY_FILE_PATH=$corpus/memory.json node $corpus/npm/memory-2024/$N/server-memory/dist/index.js" \
  --config fixtures/interop/corpus/memory-2024.toml
add_target corpus-time-mcp-1.0-stdio command "$corpus/py/mcp-1.0/bin/mcp-server-time --local-timezone UTC" \
  --config fixtures/interop/corpus/time.toml
add_target corpus-time-mcp-1.12-stdio command "$corpus/py/mcp-1.12/bin/mcp-server-time --local-timezone UTC" \
  --config fixtures/interop/corpus/time.toml
add_target corpus-fs-v2-stdio command "node $corpus/npm/fs-v2/$N/server-filesystem/dist/index.js $corpus/fsroot"
# A server of the tasks extension (2026-07-28): fastmcp-tasks 4.1.4.
add_target ext-tasks-stdio command "$corpus/py/fastmcp-tasks-4.1/bin/python fixtures/interop/corpus/tasks_server.py" \
  --config fixtures/interop/corpus/tasks.toml
# Servers of the skills extension: fastmcp's skill provider, and the TS SDK
# v2's (the script goes beside the fs-v2 install, whose packages it imports).
add_target ext-skills-fastmcp-stdio command "python fixtures/interop/skills_server.py"
cp fixtures/interop/corpus/skills_server.mjs "$corpus/npm/fs-v2/"
add_target ext-skills-ts-stdio command "node $corpus/npm/fs-v2/skills_server.mjs"
# An MCP Apps server: the Python SDK's Apps extension.
add_target ext-apps-stdio command "python fixtures/interop/apps_server.py" --config fixtures/interop/apps.toml
# The same servers described by a registry server.json (`run --server-json`):
# mcp-server-time from PyPI and server-everything from npm, at the versions
# pinned above, installed by mcpcert into its own cache; their verdicts must
# be those of the command targets (checked below), and fastmcp's remote
# entry (added with the HTTP servers) those of fastmcp-http.
sj=$out/server-json
mkdir -p "$sj"
sjcache=$(cd "$dir" && pwd)/server-json-cache
pin() { grep -i "^$1==" fixtures/interop/requirements.txt | cut -d= -f3; }
everything_version=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["packages"]["node_modules/@modelcontextprotocol/server-everything"]["version"])' fixtures/interop/npm/package-lock.json)
cat >"$sj/time.json" <<JSON
{"\$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
 "name": "io.github.modelcontextprotocol/time", "description": "Time and timezone conversion", "version": "$(pin mcp-server-time)",
 "packages": [{"registryType": "pypi", "registryBaseUrl": "https://pypi.org", "identifier": "mcp-server-time",
   "version": "$(pin mcp-server-time)", "runtimeHint": "uvx", "transport": {"type": "stdio"},
   "packageArguments": [{"type": "named", "name": "--local-timezone", "default": "UTC"}]}]}
JSON
cat >"$sj/everything.json" <<JSON
{"\$schema": "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json",
 "name": "io.github.modelcontextprotocol/everything", "description": "Exercises the protocol", "version": "$everything_version",
 "packages": [{"registryType": "npm", "identifier": "@modelcontextprotocol/server-everything", "version": "$everything_version",
   "transport": {"type": "stdio"}, "packageArguments": [{"type": "positional", "value": "stdio"}]}]}
JSON
add_server_json() { # NAME FILE PICK [MCPCERT OPTIONS...]
  local name=$1 file=$2 pick=$3
  shift 3
  add_target "$name" server_json "$file" --cache "$sjcache" "$@"
  printf 'pick = %s\n\n' "$(q "$pick")" >>"$targets"
}
add_server_json sj-time-pypi "$root/$sj/time.json" pypi
add_server_json sj-everything-npm "$root/$sj/everything.json" npm --config fixtures/interop/server-everything.toml
for server in fastmcp server-everything rmcp corpus-everything-2025-06 corpus-mcp-1.9 corpus-mcp-1.3 ext-tasks; do
  if start_http "$server" "$out"; then
    # The Python SDK 1.9.4's session manager shuts down for good when a
    # request names a session it has ended (docs/interop-corpus.md): the
    # case that ends one is skipped there, so that the rest is judged.
    [ "$server" = corpus-mcp-1.9 ] && args+=(--skip http-ended-session-404)
    # The Python SDK 1.3.0 ends an SSE session on an unknown method, and for a
    # moment after that the server drops new connections, so that whichever
    # request comes next fails (docs/interop-corpus.md): that case is skipped.
    [ "$server" = corpus-mcp-1.3 ] && args+=(--skip lifecycle/unknown-method)
    add_target "$server-http" url "$url" "${args[@]}"
    if [ "$server" = fastmcp ]; then
      # fastmcp's remote entry: the URL a template over a variable, and a
      # header whose value is a secret input given by MCPCERT_INPUT_API_KEY.
      printf '{"name": "io.github.example/fastmcp-remote", "description": "fastmcp over HTTP", "version": "1.0.0",\n "remotes": [{"type": "streamable-http", "url": "%s", "variables": {"mcp_path": {"default": "%s"}},\n   "headers": [{"name": "X-Api-Key", "value": "{api_key}", "variables": {"api_key": {"isRequired": true, "isSecret": true}}}]}]}\n' \
        "${url%/*}/{mcp_path}" "${url##*/}" >"$sj/fastmcp-remote.json"
      add_server_json sj-fastmcp-remote "$root/$sj/fastmcp-remote.json" remote "${args[@]}"
    fi
    hostport=${url#http://}
    hostport=${hostport%%/*}
    setsid python3 scripts/delay-proxy.py 0 "$hostport" 10 >"$out/proxy-$server.log" 2>&1 &
    pids="$pids $!"
    for _ in $(seq 1 50); do grep -q listening "$out/proxy-$server.log" && break; sleep 0.1; done
    into=$delayed add_target "$server-http" url "http://$(awk '/listening on/ {print $3}' "$out/proxy-$server.log")/${url#http://*/}" "${args[@]}"
  else status=1; fi
done

# Protected servers (issue 25), trusting mcpcert's test issuer: fastmcp's
# JWT verifier, and the Python SDK's token verifier. Loopback only: their
# audience is their own URL, which a proxy's URL is not.
for server in fastmcp-auth sdk-auth; do
  if start_http "$server" "$out"; then
    add_target "$server-http" url "$url" "${args[@]}"
  else status=1; fi
done

# --- the runs, the verdicts, lint ----------------------------------------------
jobs=${MCPCERT_INTEROP_JOBS:-$(if [ "$(nproc)" -le 2 ]; then echo 2; else echo 4; fi)}
export MCPCERT_INPUT_API_KEY=mcpcert-interop-key-7d2e
"$m" matrix "$targets" -j "$jobs" --out "$out" -- --load 8
[ -s "$out/matrix.json" ] || { say "interop: no matrix.json"; exit 1; }
say "a server.json target against the same server's command or URL target:"
for pair in sj-time-pypi:mcp-server-time sj-everything-npm:server-everything-stdio sj-fastmcp-remote:fastmcp-http; do
  a=${pair%%:*} b=${pair#*:}
  if [ -s "$out/$a/verdicts.txt" ] && "$m" diff "$out/$b/verdicts.txt" "$out/$a/verdicts.txt" --any-change >"$out/$a.diff" 2>&1; then
    say "  $a: the verdicts of $b"
  else say "  $a: differs from $b:"; sed "s/^/    /" "$out/$a.diff"; status=1; fi
done
if grep -rq mcpcert-interop-key-7d2e "$out"/sj-fastmcp-remote; then say "  sj-fastmcp-remote: the secret input appears in its reports"; status=1; fi
# The same set-ups with one case at a time: the verdicts must not change.
"$m" matrix "$targets" -j "$jobs" --out "$out-j1" -- -j 1 --load 8 >"$out-j1.log" 2>&1
say "verdicts with -j 1 against the default -j:"
"$m" diff "$out-j1" "$out" --any-change | sed "s/^/  /"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
# The HTTP set-ups 10 ms away, with the default -j and with -j 1: the
# verdicts must be those of the run on loopback.
"$m" matrix "$delayed" -j "$jobs" --out "$out-delay" -- --load 8 >"$out-delay.log" 2>&1
"$m" matrix "$delayed" -j "$jobs" --out "$out-delay-j1" -- -j 1 --load 8 >"$out-delay-j1.log" 2>&1
say "verdicts 10 ms away, -j 1 against the default -j:"
"$m" diff "$out-delay-j1" "$out-delay" --any-change | sed "s/^/  /"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
say "verdicts 10 ms away against those on loopback:"
mkdir -p "$out-delay/loopback"
for v in "$out-delay"/*/verdicts.txt; do
  name=$(basename "$(dirname "$v")")
  cp "$out/$name/verdicts.txt" "$out-delay/loopback/$name.txt"
done
"$m" diff "$out-delay/loopback" "$out-delay" --any-change | sed "s/^/  /"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
if [ -n "${MCPCERT_UPDATE_EXPECTED:-}" ]; then
  for v in "$out"/*/verdicts.txt; do
    name=$(basename "$(dirname "$v")")
    { echo "# expected mcpcert verdicts for this server (MCPCERT_UPDATE_EXPECTED=1 scripts/interop.sh rewrites it)"
      grep -v '^#' "$v"; } >"fixtures/interop/expected/$name.txt"
  done
  say "interop: fixtures/interop/expected/ rewritten from the run"
fi
say "verdicts against fixtures/interop/expected/:"
"$m" diff fixtures/interop/expected "$out" --any-change | sed "s/^/  /"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
for r in "$out"/*/report.json; do
  name=$(basename "$(dirname "$r")")
  python3 scripts/lint-agrees.py "$r" "$m" | sed "s/^/  $name: lint vs run, /"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
done
# A printed reproducer must reproduce its verdict: the reproducers of the
# loopback runs' failures, warnings and errors, replayed against the servers
# (over HTTP still up; over stdio started again by the pipe). The protected
# servers' curl lines make their tokens with `mcpcert auth-token`.
say "reproducers replayed against the servers:"
replayed=()
for name in fastmcp-http server-everything-http rmcp-http corpus-everything-2025-06-http corpus-mcp-1.9-http corpus-mcp-1.3-http \
  ext-tasks-http fastmcp-auth-http sdk-auth-http \
  mcp-server-time fastmcp-stdio server-everything-stdio rmcp-stdio corpus-fs-2024-stdio corpus-memory-2024-stdio \
  corpus-time-mcp-1.0-stdio corpus-time-mcp-1.12-stdio corpus-fs-v2-stdio ext-tasks-stdio ext-skills-fastmcp-stdio \
  ext-skills-ts-stdio ext-apps-stdio sj-time-pypi sj-everything-npm sj-fastmcp-remote; do
  [ -s "$out/$name/report.json" ] && replayed+=("$out/$name/report.json")
done
PATH="$(cd "$(dirname "$m")" && pwd):$PATH" python3 scripts/reproducers-check.py "${replayed[@]}" | sed "s/^/  /"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
exit $status

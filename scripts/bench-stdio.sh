#!/usr/bin/env bash
# The stdio bench (not part of CI's pass/fail): what a stdio run costs where
# users wait, process starts. For every stdio set-up of scripts/interop.sh
# and for the reference server with a start delay (--start-delay 1500, for
# 2026-07-28 alone and for both eras), each run alone, one after the other:
# the server processes the run started, the server's start time S (the
# slowest first answer the run saw), wall, and wall / S; beside the same
# server's HTTP run where interop has one (fastmcp, server-everything,
# rmcp). The goals written beside them (issue 53): the reference server,
# without a config (roles would add a process each), at most 4 processes and
# 5 S for 2026-07-28, at most 2 more for both eras; fastmcp-stdio and
# mcp-server-time within 3 x (the HTTP run's wall + 3 S). Medians of $MCPCERT_BENCH_REPS runs (default 3),
# mcpcert as a release build. Keeps the table in docs/bench.md (between its
# stdio markers; scripts/bench.sh keeps that part). Raw: reports/bench-stdio/.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/interop-env.sh
setup_servers
setup_corpus
cargo build -q --release -p mcpcert || die "release build failed"
M=$target/release/mcpcert
ref=$target/debug/mcpcert-refserver
reps=${MCPCERT_BENCH_REPS:-3}
b=reports/bench-stdio
rm -rf "$b"
mkdir -p "$b"
N=node_modules/@modelcontextprotocol
# name|command|config (empty: none)|the HTTP set-up of the same server
setups=(
  "refserver, 2026-07-28, 1.5 s start|$ref --stdio --era modern --start-delay 1500||"
  "refserver, both eras, 1.5 s start|$ref --stdio --era dual --start-delay 1500||"
  "mcp-server-time|mcp-server-time --local-timezone UTC||"
  "fastmcp-stdio|fastmcp run fixtures/interop/fastmcp_server.py --transport stdio --no-banner|fixtures/interop/fastmcp.toml|fastmcp"
  "server-everything-stdio|node $everything stdio|fixtures/interop/server-everything.toml|server-everything"
  "rmcp-stdio|$rmcp stdio|fixtures/interop/rmcp.toml|rmcp"
  "corpus-fs-2024-stdio|node $corpus/npm/fs-2024/$N/server-filesystem/dist/index.js $corpus/fsroot|fixtures/interop/corpus/fs-2024.toml|"
  "corpus-memory-2024-stdio|env MEMORY_FILE_PATH=$corpus/memory.json node $corpus/npm/memory-2024/$N/server-memory/dist/index.js|fixtures/interop/corpus/memory-2024.toml|"
  "corpus-time-mcp-1.0-stdio|$corpus/py/mcp-1.0/bin/mcp-server-time --local-timezone UTC|fixtures/interop/corpus/time.toml|"
  "corpus-time-mcp-1.12-stdio|$corpus/py/mcp-1.12/bin/mcp-server-time --local-timezone UTC|fixtures/interop/corpus/time.toml|"
  "corpus-fs-v2-stdio|node $corpus/npm/fs-v2/$N/server-filesystem/dist/index.js $corpus/fsroot||"
)
export REFSERVER_ANALYST_TOKEN="Bearer analyst-token" REFSERVER_OPERATOR_TOKEN="Bearer operator-token"
: >"$b/setups.txt"
k=0
for s in "${setups[@]}"; do
  IFS='|' read -r name cmd cfg http <<<"$s"
  k=$((k + 1))
  o=$b/$k
  mkdir -p "$o"
  printf '%s|%s\n' "$k" "$name" >>"$b/setups.txt"
  c=()
  [ -z "$cfg" ] || c=(--config "$cfg")
  for i in $(seq 1 "$reps"); do
    python3 scripts/lib/timed.py "$o/stdio.$i.time" "$M" run --stdio "$cmd" "${c[@]}" \
      --json "$o/stdio.$i.json" --junit "$o/junit.xml" --html "$o/report.html"
  done
  if [ -n "$http" ]; then
    start_http "$http" "$o" || exit 1
    for i in $(seq 1 "$reps"); do
      python3 scripts/lib/timed.py "$o/http.$i.time" "$M" run --http "$url" "${args[@]}" \
        --json "$o/http.$i.json" --junit "$o/junit-http.xml" --html "$o/report-http.html"
    done
    # The server is stopped before the next set-up's runs.
    kill -9 -- -"${pids##* }" 2>/dev/null
  fi
  echo "bench-stdio: $name done" >&2
done
python3 scripts/bench-stdio.py "$b" "$reps" docs/bench.md

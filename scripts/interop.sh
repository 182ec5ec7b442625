#!/usr/bin/env bash
# Run mcpcert against real servers from PyPI: mcp-server-time (stdio) and a
# small fastmcp server (stdio and HTTP on 127.0.0.1). Reports go to
# reports/interop/<name>/. Needs network access to PyPI for the install.
set -uo pipefail
cd "$(dirname "$0")/.."
venv=${MCPCERT_VENV:-.venv-interop}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/pip" install -q mcp-server-time fastmcp
export PATH="$(cd "$venv" && pwd)/bin:$PATH"
cargo build -q -p mcpcert
m=target/debug/mcpcert
out=reports/interop
run() { name=$1; shift; "$m" run "$@" --junit "$out/$name/junit.xml" --json "$out/$name/report.json" --html "$out/$name/report.html"; echo "$name: exit $?"; }
run mcp-server-time --stdio 'mcp-server-time --local-timezone UTC'
run fastmcp-stdio --stdio 'fastmcp run fixtures/interop/fastmcp_server.py --transport stdio --no-banner'
fastmcp run fixtures/interop/fastmcp_server.py --transport http --host 127.0.0.1 --port 3105 --no-banner >/dev/null 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null' EXIT
for _ in $(seq 1 60); do curl -s -o /dev/null http://127.0.0.1:3105/mcp && break; sleep 0.5; done
run fastmcp-http --http http://127.0.0.1:3105/mcp

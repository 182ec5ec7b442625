#!/usr/bin/env bash
# A conformance board over a fixture snapshot of real registry servers
# (fixtures/board/snapshot.json: npm and PyPI packages pinned, of several SDK
# generations; some need a secret, one version does not exist, one ships only
# an MCPB bundle; two remotes, mcpcert's reference server started here on
# loopback, one of them protected by OAuth), over two nights:
#   night 1: every server installed into $MCPCERT_INTEROP_DIR/board-cache
#            and run (`mcpcert board`, -j 2), installer and server in the
#            sandbox (bubblewrap: installed here with apt-get when missing);
#   night 2: the snapshot again with one change (the reference remote's next
#            version, which breaks a MUST): only that server runs again, and
#            the other remote (remotes are judged every night);
# then the same first night in 3 shards, merged, must give night 1's
# board.json; the site is checked in headless chromium
# (fixtures/html/board-check.mjs: index, filters, search, badges, the
# regression, a server's page and its report) and each server's outcome
# against fixtures/board/expected.txt (MCPCERT_UPDATE_EXPECTED=1 rewrites
# it). Reports: reports/board/ (site/, the shards, logs, a screenshot).
# With --bench: the board bench instead (docs/bench.md, "Board: servers per
# hour"): night 1 with an empty package cache, then again (--force) with the
# cache it filled, on this machine; then the board at registry scale
# (scripts/lib/board_scale.py, "Board: at registry scale": 25,000 synthetic
# servers, two nights, the site's size, the index's first load in chromium),
# whose status (1 past one of its limits) is the script's.
set -uo pipefail
bench=${1:-}
cd "$(dirname "$0")/.."
. scripts/lib/interop-env.sh
chromium=${CHROMIUM:-$(command -v chromium || true)}
if [ -z "$chromium" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    (DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null ||
      { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }) ||
      die "apt-get install chromium failed"
    chromium=$(command -v chromium) || die "chromium is not on PATH after the install"
  else
    die "no chromium: install Debian's chromium package, or set CHROMIUM to a Chromium binary"
  fi
fi
export CHROMIUM=$chromium
# The board starts packages only in a sandbox: bubblewrap.
if ! command -v bwrap >/dev/null; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >/dev/null ||
      { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap >/dev/null; } ||
      die "apt-get install bubblewrap failed"
  else
    die "no bwrap: install bubblewrap (the board starts packages only in its sandbox)"
  fi
fi
npm_ci fixtures/html "$dir/html"
cp fixtures/html/board-check.mjs fixtures/html/board-scale-check.mjs "$dir/html/"
cargo build -q --workspace || die "building mcpcert failed"
m=$(cd "$target/debug" && pwd)/mcpcert
ref=$(cd "$target/debug" && pwd)/mcpcert-refserver
out=reports/board
rm -rf "$out"
mkdir -p "$out/work"
status=0
say() { printf '%s\n' "$*"; }
pids=""
trap 'for p in $pids; do kill -- -$p 2>/dev/null; done' EXIT
# start_ref NAME ARGS…: the reference server on a free port; sets $url.
start_ref() {
  local name=$1 port
  shift
  port=$(free_port)
  setsid "$ref" --http "$port" "$@" >"$out/$name.log" 2>&1 &
  pids="$pids $!"
  for _ in $(seq 1 50); do grep -q listening "$out/$name.log" && break; sleep 0.1; done
  url=http://127.0.0.1:$port/mcp
}
start_ref ref-1 --era dual
ref_url=$url
start_ref ref-2 --era dual --fault discover-no-ttl
ref_url_2=$url
"$m" auth-setup --port "$(free_port)" --key-file "$out/work/issuer-keys.json" --out "$out/work/issuer.json" >/dev/null || die "auth-setup failed"
start_ref auth --era dual --auth "$out/work/issuer.json"
auth_url=$url
# snapshot NIGHT VERSION URL: the fixture with the reference remote's
# version and URL, as one listing page.
snapshot() {
  mkdir -p "$out/snapshot-$1"
  sed -e "s|@REF_VERSION@|$2|" -e "s|@REF_URL@|$3|" -e "s|@AUTH_URL@|$auth_url|" fixtures/board/snapshot.json >"$out/snapshot-$1/page-0001.json"
}
snapshot 1 1.0.0 "$ref_url"
snapshot 2 1.0.1 "$ref_url_2"
# The values some servers need, as an operator gives them, each to its own
# server (board --inputs): a folder for the filesystem servers and a
# repository for git (both shared with the sandboxed server), a database
# file for sqlite (in the server's private /tmp).
mkdir -p "$out/work/files"
git init -q "$out/work/repo" && git -C "$out/work/repo" -c user.name=t -c user.email=t@mcpcert.invalid commit -q --allow-empty -m init
cat >"$out/work/inputs.toml" <<'TOML'
["io.github.modelcontextprotocol/filesystem"]
allowed_directory = { path = "files" }
["io.github.mcpcert-fixture/filesystem-2025-03"]
allowed_directory = { path = "files" }
["io.github.modelcontextprotocol/git"]
repository = { path = "repo" }
["io.github.modelcontextprotocol/sqlite"]
db_path = "/tmp/mcpcert-board.sqlite"
TOML
# Installs resolve dependencies as of a fixed day (npm's `before`), and the
# Python ones the interop pins have at those versions (a pip constraint), so
# that an outcome changes only when this fixture does.
export npm_config_before=2026-12-01T00:00:00.000Z
grep -v '^mcp-server-' fixtures/interop/requirements.txt >"$out/work/constraints.txt"
export PIP_CONSTRAINT=$(pwd)/$out/work/constraints.txt
cache=$dir/board-cache
board() { "$m" board --cache "$cache" --inputs "$out/work/inputs.toml" -j 2 --budget-s 90 "$@"; }

if [ "$bench" = --bench ]; then
  cache=$(pwd)/$out/bench-cache
  rm -rf "$cache"
  t0=$(date +%s.%N)
  board "$out/snapshot-1" --out "$out/bench-cold" --night cold >"$out/bench-cold.log" 2>&1 || { cat "$out/bench-cold.log"; die "the cold night failed"; }
  t1=$(date +%s.%N)
  board "$out/snapshot-1" --out "$out/bench-cold" --night warm --force >"$out/bench-warm.log" 2>&1 || { cat "$out/bench-warm.log"; die "the warm night failed"; }
  t2=$(date +%s.%N)
  python3 - "$t0" "$t1" "$t2" "$out/bench-cold/board.json" "$(nproc)" <<'PY'
import json, sys
sys.path.insert(0, "scripts/lib")
import mdblock
t0, t1, t2 = map(float, sys.argv[1:4])
from board_servers import servers
outcomes = [s["_meta"]["io.github.mcpcert/conformance"]["outcome"] for s in servers(sys.argv[4])]
ran = sum(o in ("pass", "fail", "crashed", "no-answer", "unreachable", "protected", "hung") for o in outcomes)
n = len(outcomes)
cold, warm = t1 - t0, t2 - t1
mdblock.put("docs/bench.md", "board", [
    "## Board: servers per hour",
    "",
    f"`scripts/board.sh --bench`: `mcpcert board -j 2` over the fixture snapshot ({n} servers: {ran} run, the other {n - ran} settled without a run: a secret missing, an install that fails, no entry this machine can run), on this machine ({sys.argv[5]} CPUs), each package in a network namespace of its own. Cold: an empty package cache (every npm and PyPI package installed from the registries); warm: the cache the cold night filled, every server run again (`--force`).",
    "",
    "| night | wall time | servers per hour |",
    "|---|---|---|",
    f"| cold cache | {cold:.0f} s | {n * 3600 / cold:.0f} |",
    f"| warm cache | {warm:.0f} s | {n * 3600 / warm:.0f} |",
    "",
    "A server's run takes what its catalogue takes (a few seconds for most; a server that never answers costs the start-up timeout of each revision probe, 15 s each), and `--budget-s` bounds it. The registry's mix differs from the fixture's: more remotes (each a run over the network) and more servers needing a secret (no run at all).",
])
print(f"board bench: cold {cold:.0f} s, warm {warm:.0f} s, {n} servers")
PY
  # Then the board at registry scale (docs/bench.md, "Board: at registry
  # scale"): 25,000 synthetic servers over two nights, the site's size and
  # the index's first load; its status is the bench's (exit 1 past a limit).
  python3 scripts/lib/board_scale.py --mcpcert "$m" --refserver "$ref" --html-dir "$dir/html" --work "$out/bench-scale"
  exit $?
fi

started=$SECONDS
board "$out/snapshot-1" --out "$out/site" --night night-1 >"$out/night-1.log" 2>&1 || { cat "$out/night-1.log"; die "night 1 failed"; }
say "board: night 1 in $((SECONDS - started)) s"
mkdir -p "$out/night-1" && cp -r "$out/site/board.json" "$out/site/board" "$out/night-1/"
started=$SECONDS
board "$out/snapshot-2" --out "$out/site" --night night-2 >"$out/night-2.log" 2>&1 || { cat "$out/night-2.log"; die "night 2 failed"; }
say "board: night 2 in $((SECONDS - started)) s"
ran=$(sed -n 's/^board: \([0-9]*\) server(s) run,.*/\1/p' "$out/night-2.log")
# The changed server, and the other remote (a remote is judged every night).
if [ "$ran" != 2 ]; then say "board: night 2 ran ${ran:-no} servers again, not 2 (the changed one and the other remote)"; status=1; fi

# The first night in three shards, merged: the same board.json.
for k in 1 2 3; do
  board "$out/snapshot-1" --out "$out/part$k" --night night-1 --shard "$k/3" >"$out/part$k.log" 2>&1 || { cat "$out/part$k.log"; status=1; }
done
"$m" board --merge "$out/part1" "$out/part2" "$out/part3" --out "$out/merged" --night night-1 >"$out/merge.log" 2>&1 || { cat "$out/merge.log"; status=1; }
python3 - "$out/night-1/board.json" "$out/merged/board.json" <<'PY' || status=1
import json, sys
sys.path.insert(0, "scripts/lib")
from board_servers import servers
KEY = "io.github.mcpcert/conformance"
def stable(p):
    out = {}
    for s in servers(p):
        m = dict(s["_meta"][KEY])
        m.pop("checkedAt")
        # The wording of a crash is a race; so is how far a server that
        # lacks the network gets before it dies (its outcome is not).
        if m["outcome"] in ("crashed", "hung", "needs-network", "needs-service"):
            for k in ("reason", "counts", "judged", "failing", "report", "revisions"):
                m.pop(k, None)
        out[s["server"]["name"]] = m
    return out
a, b = stable(sys.argv[1]), stable(sys.argv[2])
bad = [n for n in sorted(set(a) | set(b)) if a.get(n) != b.get(n)]
for n in bad:
    print(f"  {n}: one run {a.get(n)}\n    shards merged {b.get(n)}")
print(f"board: 3 shards merged against one run: {len(a)} servers, {len(bad)} differ")
sys.exit(1 if bad else 0)
PY

# Each server's outcome against the expected ones.
python3 -c '
import sys
sys.path.insert(0, "scripts/lib")
from board_servers import servers
for s in servers(sys.argv[1]):
    print(s["_meta"]["io.github.mcpcert/conformance"]["outcome"], s["server"]["name"])
' "$out/site/board.json" >"$out/outcomes.txt"
if [ -n "${MCPCERT_UPDATE_EXPECTED:-}" ]; then
  { echo "# expected outcomes of scripts/board.sh's second night (MCPCERT_UPDATE_EXPECTED=1 rewrites it)"; cat "$out/outcomes.txt"; } >fixtures/board/expected.txt
fi
if diff <(grep -v '^#' fixtures/board/expected.txt) "$out/outcomes.txt" >"$out/outcomes.diff"; then
  say "board: $(wc -l <"$out/outcomes.txt") outcomes as expected"
else
  say "board: outcomes differ from fixtures/board/expected.txt:"; sed 's/^/  /' "$out/outcomes.diff"; status=1
fi
node "$dir/html/board-check.mjs" "$out/site" io.github.mcpcert-fixture/reference-remote "$out/board.png" || status=1
# No file of the site, its gzipped reports included, holds a path of the
# runner: the working folder, the package cache, the home folder.
python3 - "$out/site" "$(pwd)" "$cache" "$HOME" <<'PY' || status=1
import gzip, os, re, sys
site, roots = sys.argv[1], [r.rstrip("/") for r in sys.argv[2:] if len(r) > 1]
# A root as a path: followed by a separator or the end (/root, not /roots).
pats = [(r, re.compile(re.escape(r) + r"(?=[/\\\"'\s<&)]|$)")) for r in roots]
bad = []
for d, _, files in os.walk(site):
    for f in files:
        p = os.path.join(d, f)
        data = gzip.open(p).read() if f.endswith(".gz") else open(p, "rb").read()
        text = data.decode("utf-8", "replace")
        bad += [f"{p}: holds {r}" for r, pat in pats if pat.search(text)]
for b in bad[:20]:
    print(f"  {b}")
print(f"board: {len(bad)} file(s) of the site hold a path of the runner")
sys.exit(1 if bad else 0)
PY
exit $status

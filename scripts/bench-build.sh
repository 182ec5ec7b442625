#!/usr/bin/env bash
# What the build costs a user, and what the tuning that used to ride on it
# bought (issue 53, item 4); not part of CI's pass/fail:
#  1. `cargo install --locked --path harness` from an empty target folder
#     (the release profile), and `cargo build --profile dist` (fat LTO, one
#     codegen unit: the release tarballs) likewise: wall and CPU time;
#  2. the two binaries side by side on the runs users wait on: the
#     reference server over HTTP (the whole catalogue) and the 10,000-tool
#     list over stdio (fixtures/hostile/hostile.py many-tools 10000, the tool
#     suite), wall and peak RSS; the latter also with glibc held to one malloc
#     arena (GLIBC_TUNABLES=glibc.malloc.arena_max=1, what cli/heap.rs did
#     with mallopt until issue 53).
# Medians of $MCPCERT_BENCH_REPS runs (default 5). Keeps the table in
# docs/bench.md (its "build" part; scripts/bench.sh keeps it). Raw figures:
# reports/bench-build/.
set -uo pipefail
cd "$(dirname "$0")/.."
b=reports/bench-build
rm -rf "$b"
mkdir -p "$b"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
reps=${MCPCERT_BENCH_REPS:-5}
timed() { python3 scripts/lib/timed.py "$@"; }
# CPU seconds too: GNU time's user and system time of the build.
build() { # build NAME CMD...: "<wall> <user+sys>" into $b/NAME.build
  local start end
  start=$(date +%s.%N)
  /usr/bin/time -f '%U %S' -o "$b/$1.cpu" "${@:2}" >/dev/null 2>"$b/$1.log" || { cat "$b/$1.log" >&2; exit 1; }
  end=$(date +%s.%N)
  echo "$(awk "BEGIN {print $end - $start}") $(awk '{print $1 + $2}' "$b/$1.cpu")" >"$b/$1.build"
}
build install cargo install -q --locked --path harness --root "$work/root" --target-dir "$work/install"
build dist cargo build -q --locked -p mcpcert --profile dist --target-dir "$work/dist"
cargo build -q -p mcpcert-refserver || exit 1
ref=${CARGO_TARGET_DIR:-target}/debug/mcpcert-refserver
for kind in install dist; do
  if [ "$kind" = install ]; then m=$work/root/bin/mcpcert; else m=$work/dist/dist/mcpcert; fi
  log=$work/ref.log
  setsid "$ref" --http 0 --era dual >"$log" 2>/dev/null &
  pid=$!
  for _ in $(seq 1 50); do grep -q listening "$log" && break; sleep 0.1; done
  url=$(awk '/listening on/ {print $3}' "$log")
  for i in $(seq 1 "$reps"); do
    timed "$b/$kind.http.$i.time" "$m" run --http "$url" --allowed-origin http://localhost --out "$work/out-http"
    timed "$b/$kind.many.$i.time" "$m" run --stdio "python3 fixtures/hostile/hostile.py many-tools 10000" tools/ --out "$work/out-many"
    GLIBC_TUNABLES=glibc.malloc.arena_max=1 timed "$b/$kind.many-arena.$i.time" "$m" run \
      --stdio "python3 fixtures/hostile/hostile.py many-tools 10000" tools/ --out "$work/out-many"
  done
  kill -9 -- -"$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  echo "bench-build: $kind done" >&2
done
python3 scripts/bench-build.py "$b" "$reps" docs/bench.md

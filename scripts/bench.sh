#!/usr/bin/env bash
# Benchmarks (not part of CI's pass/fail). In one run, side by side:
#  1. mcpcert vs the official conformance suite on the same HTTP servers
#     (wall time and peak RSS of each whole run, one revision each), mcpcert
#     with its default -j and with -j 1, beside the floor: the longest chain
#     of requests that depend on each other times the server's round trip,
#     the requests sent over the server's throughput when crowded, or the CPU
#     time the server's busiest thread spent on them (whichever is longest),
#     plus the observation windows the checks wait out; and mcpcert's run of
#     one case (what every run costs, whatever the server);
#  2. mcpcert's own overhead on the bundled reference server: cases per
#     second over stdio and HTTP, and time per exchange against a raw
#     loopback round trip (scripts/rawrtt.py) on the same server;
#  3. a 10,000-tool list (fixtures/hostile/hostile.py many-tools) walked and
#     admitted: wall time and peak RSS;
#  4. the servers of 1 across a network: each behind scripts/delay-proxy.py
#     adding 10 ms and 40 ms per round trip (and one to a new connection's
#     first bytes), mcpcert (default -j and -j 1) and the official suite,
#     beside a floor that does not follow mcpcert's schedule (see bench.py).
# MCPCERT_BENCH_DELAYS (default "10 40") sets the delays in milliseconds.
# Each measurement is repeated $MCPCERT_BENCH_REPS times (default 3), and
# mcpcert's default run on loopback $MCPCERT_BENCH_FAST times as often
# (default 3); the median is reported. mcpcert is the dist build (the release tarballs: fat
# LTO; scripts/bench-build.sh compares it with what `cargo install` builds). Prints a Markdown table and
# keeps it in docs/bench.md. Raw figures: reports/bench/.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/interop-env.sh
setup_servers
setup_official
cargo build -q --profile dist -p mcpcert || die "dist build failed"
M=$target/dist/mcpcert
reps=${MCPCERT_BENCH_REPS:-3}
# mcpcert's own runs on loopback, per round (MCPCERT_BENCH_FAST, default 3)
fast=${MCPCERT_BENCH_FAST:-3}
b=reports/bench
rm -rf "$b"
mkdir -p "$b"
timed() { # timed FILE CMD...: "<seconds> <peak KiB>" into FILE
  python3 scripts/lib/timed.py "$@"
}

# 1. side by side on the same HTTP servers
for s in refserver:2026-07-28 fastmcp:2026-07-28 rmcp:2026-07-28 server-everything:2025-11-25; do
  name=${s%%:*} rev=${s#*:}
  # The one case: the probe's own answer judged (2025-11-25: no request of
  # its own), or one server/discover.
  if [ "$rev" = 2026-07-28 ]; then one=$rev/lifecycle/discover-result-shape; else one=$rev/lifecycle/initialize-result-shape; fi
  start_http "$name" "$b" || exit 1
  mkdir -p "$b/$name"
  # The server's session (start_http starts it with setsid, last in $pids):
  # timed.py also writes the CPU time its busiest thread used during each run.
  export MCPCERT_BENCH_SERVER=${pids##* }
  for i in $(seq 1 "$reps"); do
    PATH="$node24:$PATH" timed "$b/$name/official.$i.time" \
      "$official" server --url "$url" --suite all --spec-version "$rev" -o "$b/$name/official.$i"
    timed "$b/$name/mcpcert.$i.time" "$M" run --http "$url" "${args[@]}" --revision "$rev" \
      --json "$b/$name/mcpcert.$i.json" --junit "$b/$name/junit.xml" --html "$b/$name/report.html"
    # A run of tens of milliseconds is measured more often (the machine's
    # noise is as large as the figure): $fast runs a round, the median of all.
    for k in $(seq 2 "$fast"); do
      timed "$b/$name/mcpcert.$i-$k.time" "$M" run --http "$url" "${args[@]}" --revision "$rev" \
        --json "$b/$name/mcpcert.$i-$k.json" --junit "$b/$name/junit.xml" --html "$b/$name/report.html"
    done
    timed "$b/$name/mcpcert-j1.$i.time" "$M" run --http "$url" "${args[@]}" --revision "$rev" -j 1 \
      --json "$b/$name/mcpcert-j1.$i.json" --junit "$b/$name/junit-j1.xml" --html "$b/$name/report-j1.html"
    # What every run costs, whatever the server: a run of one case (process
    # start, catalogue, revision probe, one request at most, reports, exit).
    for k in $(seq 1 "$fast"); do
      timed "$b/$name/one.$i-$k.time" "$M" run --http "$url" "${args[@]}" --revision "$rev" "$one" --exact \
        --json "$b/$name/one.json" --junit "$b/$name/junit-one.xml" --html "$b/$name/report-one.html"
    done
  done
  # the server's throughput when crowded: mcpcert's own --load replay (8
  # connections at once), in runs of their own, untimed (bench.py takes the
  # median rate: one replay lasts tens of milliseconds on loopback)
  for i in $(seq 1 "$reps"); do
    "$M" run --http "$url" "${args[@]}" --revision "$rev" --load 8 -q \
      --json "$b/$name/load.$i.json" --junit "$b/$name/junit-load.xml" --html "$b/$name/report-load.html" >/dev/null 2>&1
  done
  # the server's own floor: a raw round trip (a 2025-11-25 server in a
  # session of rawrtt.py's own)
  if [ "$rev" = 2026-07-28 ]; then
    python3 scripts/rawrtt.py --http "$url" 100 >"$b/$name/raw.txt"
  else
    python3 scripts/rawrtt.py --http-2025 "$url" 100 >"$b/$name/raw.txt"
  fi
  unset MCPCERT_BENCH_SERVER
  echo "bench: $name done" >&2
done

# 2. overhead on the reference server, over stdio and HTTP
cfg=fixtures/refserver/mcpcert.toml
ref="$target/debug/mcpcert-refserver"
mkdir -p "$b/overhead"
for i in $(seq 1 "$reps"); do
  timed "$b/overhead/stdio.$i.time" "$M" run --stdio "$ref --era dual" --config "$cfg" \
    --json "$b/overhead/stdio.$i.json" --junit "$b/overhead/junit.xml" --html "$b/overhead/report.html"
done
start_http refserver "$b/overhead" || exit 1
for i in $(seq 1 "$reps"); do
  timed "$b/overhead/http.$i.time" "$M" run --http "$url" "${args[@]}" \
    --json "$b/overhead/http.$i.json" --junit "$b/overhead/junit.xml" --html "$b/overhead/report.html"
done
python3 scripts/rawrtt.py --http "$url" 300 >"$b/overhead/raw-http.txt"
python3 scripts/rawrtt.py --stdio "$ref --era dual" 300 >"$b/overhead/raw-stdio.txt"
echo "bench: overhead done" >&2

# 3. 10,000 tools walked and admitted (the tool suite only)
mkdir -p "$b/many"
for i in $(seq 1 "$reps"); do
  timed "$b/many/run.$i.time" "$M" run --stdio "python3 fixtures/hostile/hostile.py many-tools 10000" tools/ \
    --json "$b/many/run.$i.json" --junit "$b/many/junit.xml" --html "$b/many/report.html"
done

# 4. the same HTTP servers across a network: behind a loopback proxy that
# adds latency to every round trip
delays=${MCPCERT_BENCH_DELAYS:-10 40}
for s in refserver:2026-07-28 fastmcp:2026-07-28 rmcp:2026-07-28 server-everything:2025-11-25; do
  name=${s%%:*} rev=${s#*:}
  # The one case: the probe's own answer judged (2025-11-25: no request of
  # its own), or one server/discover.
  if [ "$rev" = 2026-07-28 ]; then one=$rev/lifecycle/discover-result-shape; else one=$rev/lifecycle/initialize-result-shape; fi
  start_http "$name" "$b" || exit 1
  hostport=${url#http://}
  hostport=${hostport%%/*}
  path=/${url#http://*/}
  for d in $delays; do
    o=$b/latency/$name-$d
    mkdir -p "$o"
    setsid python3 scripts/delay-proxy.py 0 "$hostport" "$d" >"$o/proxy.log" 2>&1 &
    proxy=$!
    pids="$pids $proxy"
    for _ in $(seq 1 50); do grep -q listening "$o/proxy.log" && break; sleep 0.1; done
    purl=http://$(awk '/listening on/ {print $3}' "$o/proxy.log")$path
    for i in $(seq 1 "$reps"); do
      PATH="$node24:$PATH" timed "$o/official.$i.time" \
        "$official" server --url "$purl" --suite all --spec-version "$rev" -o "$o/official.$i"
      timed "$o/mcpcert.$i.time" "$M" run --http "$purl" "${args[@]}" --revision "$rev" \
        --json "$o/mcpcert.$i.json" --junit "$o/junit.xml" --html "$o/report.html"
      timed "$o/mcpcert-j1.$i.time" "$M" run --http "$purl" "${args[@]}" --revision "$rev" -j 1 \
        --json "$o/mcpcert-j1.$i.json" --junit "$o/junit-j1.xml" --html "$o/report-j1.html"
    done
    kill -9 -- -"$proxy" 2>/dev/null
    wait "$proxy" 2>/dev/null
    echo "bench: $name at $d ms done" >&2
  done
done

mkdir -p docs
python3 scripts/bench.py "$b" "$reps" "$fast" "$(cd "$dir/official" && PATH="$node24:$PATH" "$official" --version)" docs/bench.md

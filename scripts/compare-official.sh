#!/usr/bin/env bash
# Side by side with the official suite: run @modelcontextprotocol/conformance
# (pinned in fixtures/interop/official, on the Node 24 it needs) and mcpcert
# against the same HTTP servers, then write docs/interop.md from both results
# and fixtures/interop/official-map.json (which official check answers which
# mcpcert case, and why they may differ). Fails if a difference is not
# explained in the map. Raw results: reports/compare/<server>/. Then
# scripts/official-fixtures.sh --faults and docs/requirements.md: both
# tools' verdict per required scenario and per fixture fault.
# Needs the registries for the installs (as scripts/interop.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/interop-env.sh
setup_servers
setup_official
out=reports/compare
rm -rf "$out"
mkdir -p "$out"
# server name, the revision both tools are asked to test
sets="refserver:2026-07-28 fastmcp:2026-07-28 rmcp:2026-07-28 server-everything:2025-11-25"
for s in $sets; do
  name=${s%%:*} rev=${s#*:}
  start_http "$name" "$out" || exit 1
  mkdir -p "$out/$name"
  PATH="$node24:$PATH" /usr/bin/time -f '%e %M' -o "$out/$name/official.time" \
    "$official" server --url "$url" --suite all --spec-version "$rev" -o "$out/$name/official" \
    >"$out/$name/official.log" 2>&1
  /usr/bin/time -f '%e %M' -o "$out/$name/mcpcert.time" \
    "$m" run --http "$url" "${args[@]}" --revision "$rev" --json "$out/$name/report.json" \
    --junit "$out/$name/junit.xml" --html "$out/$name/report.html" >"$out/$name/mcpcert.log" 2>&1
  printf '%s (%s): official %s s, mcpcert %s s\n' "$name" "$rev" \
    "$(tail -n1 "$out/$name/official.time" | cut -d' ' -f1)" "$(tail -n1 "$out/$name/mcpcert.time" | cut -d' ' -f1)"
done
official_version=$(cd "$dir/official" && PATH="$node24:$PATH" "$official" --version)
python3 scripts/compare-official.py "$out" fixtures/interop/official-map.json docs/interop.md \
  "conformance $official_version" $sets || exit 1
# Per required scenario and per fixture fault, on the reference server with
# its conformance fixtures: docs/requirements.md.
scripts/official-fixtures.sh --faults >"$out/official-fixtures.log" 2>&1 || { cat "$out/official-fixtures.log"; exit 1; }
python3 scripts/requirements-doc.py reports/official-fixtures docs/requirements.md "$official_version"
echo "compare: wrote docs/requirements.md"

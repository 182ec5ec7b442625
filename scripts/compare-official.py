#!/usr/bin/env python3
"""Write docs/interop.md from an official-suite run and an mcpcert run per server.

usage: compare-official.py OUT_DIR MAP.json DOC.md OFFICIAL_VERSION NAME:REV...

OUT_DIR/<name>/official/*/checks.json  the official suite's results
OUT_DIR/<name>/report.json             mcpcert's JSON report
OUT_DIR/<name>/{official,mcpcert}.time "<seconds> <peak RSS KiB>" (GNU time)

MAP.json says which mcpcert cases answer each official check (`mcpcert`, case
ids without the revision) and why verdicts may differ (`why`, or per server
`why_by_server`); `fixture_patterns` recognise an official failure that only
means "the server lacks the official fixture tool or prompt". Every
difference must have an explanation: the script exits 1 and marks the row
UNEXPLAINED otherwise.
"""
import glob
import json
import re
import sys

out_dir, map_file, doc, official_version = sys.argv[1:5]
sets = [s.split(":", 1) for s in sys.argv[5:]]
cmap = json.load(open(map_file))
checks_map = cmap["checks"]
fixture_res = [re.compile(p) for p in cmap["fixture_patterns"]]

OFFICIAL = {"SUCCESS": "pass", "FAILURE": "fail", "WARNING": "warn", "SKIPPED": "n/a"}
RANK = {"fail": 5, "error": 4, "warn": 3, "pass": 2, "n/a": 1}


def worst(verdicts):
    vs = [v for v in verdicts if v]
    return max(vs, key=RANK.get) if vs else None


def official_results(name):
    """check id -> (verdict, first message, needs-fixture), worst over repeats."""
    got = {}
    for f in sorted(glob.glob(f"{out_dir}/{name}/official/*/checks.json")):
        for c in json.load(open(f)):
            v = OFFICIAL.get(c["status"])
            if v is None:  # INFO: a trace line, not a verdict
                continue
            msg = (c.get("errorMessage") or "").strip()
            fixture = v == "fail" and any(r.search(msg) for r in fixture_res)
            old = got.get(c["id"])
            if old is None or RANK[v] > RANK[old[0]]:
                got[c["id"]] = (v, msg, fixture)
    return got


def timing(name, tool):
    try:
        last = open(f"{out_dir}/{name}/{tool}.time").read().split("\n")
        secs, kib = [l for l in last if l.strip()][-1].split()
        return float(secs), int(kib)
    except (OSError, ValueError):
        return None, None


def cell(s):
    return s.replace("|", "\\|").replace("\n", " ")


lines = []
unexplained = 0
mapped_cases = {c for m in checks_map.values() for c in m.get("mcpcert", [])}
known_cases = set()
totals = {"both": 0, "agree": 0}
lines += [
    "# mcpcert and the official conformance suite, side by side",
    "",
    f"Written by `scripts/compare-official.sh` from one run of {official_version} (`--suite all`)",
    "and mcpcert (`--revision` the same) against the same HTTP servers on 127.0.0.1.",
    "`fixtures/interop/official-map.json` says which mcpcert cases answer each official check and",
    "why their verdicts may differ; the script fails if a difference has no explanation.",
    "Verdicts are normalised: SUCCESS = pass, FAILURE = fail, WARNING = warn, SKIPPED = n/a",
    "(INFO lines are traces, not verdicts). A check repeated inside the official run counts with",
    "its worst result; several mcpcert cases answering one check count with their worst verdict.",
    "\"fixture\" marks an official failure that says the server lacks the official suite's fixture",
    "tool or prompt (e.g. `test_simple_text`), not that it broke a rule.",
    "",
    "The official suite speaks 2025-11-25 and 2026-07-28 only; the interop corpus of older servers",
    "(2024-11-05, 2025-03-26, 2025-06-18), with every verdict that is not a pass judged, is in",
    "[interop-corpus.md](interop-corpus.md).",
    "",
]
summary = ["| server | revision | checks both make | agree | differ | official wall / peak RSS | mcpcert wall / peak RSS |",
           "|---|---|---|---|---|---|---|"]
bodies = []
for name, rev in sets:
    off = official_results(name)
    try:
        report = json.load(open(f"{out_dir}/{name}/report.json"))
    except OSError:
        print(f"compare: no mcpcert report for {name}", file=sys.stderr)
        sys.exit(2)
    ours = {c["id"].split("/", 1)[1]: c for c in report["cases"] if c["id"].startswith(rev + "/")}
    known_cases.update(c["id"].split("/", 1)[1] for c in report["cases"])
    rows_same, rows_diff, official_only = [], [], []
    used = set()
    for cid, (ov, omsg, fixture) in sorted(off.items()):
        m = checks_map.get(cid, {})
        cases = [c for c in m.get("mcpcert", []) if c in ours]
        if not cases:
            official_only.append((cid, ov, fixture, omsg))
            continue
        used.update(cases)
        mv = worst(ours[c]["verdict"] for c in cases)
        shown_o = ov + (" (fixture)" if fixture else "")
        shown_m = ", ".join(f"`{c}` {ours[c]['verdict']}" for c in cases)
        if ov == mv:
            rows_same.append(f"| `{cid}` | {shown_o} | {shown_m} |")
            continue
        why = m.get("why_by_server", {}).get(name) or m.get("why")
        if not why and fixture:
            why = cmap["fixture_why"]
        if not why:
            why = "UNEXPLAINED"
            unexplained += 1
            print(f"compare: {name}: {cid}: official {ov} ({omsg[:100]}), mcpcert {mv}: no explanation in the map",
                  file=sys.stderr)
        rows_diff.append(f"| `{cid}` | {shown_o} | {shown_m} | {cell(why)} |")
    both = len(rows_same) + len(rows_diff)
    totals["both"] += both
    totals["agree"] += len(rows_same)
    ot, om = timing(name, "official")
    mt, mm = timing(name, "mcpcert")
    fmt = lambda t, k: f"{t:.2f} s / {k // 1024} MiB" if t is not None else "?"
    summary.append(f"| {name} | {rev} | {both} | {len(rows_same)} | {len(rows_diff)} | {fmt(ot, om)} | {fmt(mt, mm)} |")
    ours_only = sorted(c for c in ours if c not in used)
    judged = [c for c in ours_only if ours[c]["verdict"] != "n/a"]
    b = [f"## {name} ({rev})", ""]
    b += [f"### Where the verdicts differ ({len(rows_diff)})", ""]
    if rows_diff:
        b += ["| official check | official | mcpcert | why |", "|---|---|---|---|"] + rows_diff
    else:
        b += ["None."]
    b += ["", f"### Where they agree ({len(rows_same)})", ""]
    b += ["| official check | verdict | mcpcert |", "|---|---|---|"] + rows_same if rows_same else ["None."]
    b += ["", f"### Checked by the official suite only ({len(official_only)})", ""]
    b += [", ".join(f"`{c}` {v}{' (fixture)' if fx else ''}" for c, v, fx, _ in official_only) or "None."]
    b += ["", f"### Checked by mcpcert only ({len(ours_only)}; {len(judged)} with a verdict other than n/a)", ""]
    b += [", ".join(f"`{c}` {ours[c]['verdict']}" for c in ours_only) or "None."]
    bodies += b + [""]

# A case named in the map that no report knows is a typo, and would make a
# check look unanswered by mcpcert.
unknown = sorted(mapped_cases - known_cases)
if unknown:
    print(f"compare: the map names mcpcert cases that do not exist: {unknown}", file=sys.stderr)
    unexplained += len(unknown)
lines += ["## Summary", ""] + summary + [""]
lines += [f"Over all servers the two tools make {totals['both']} comparable checks and agree on {totals['agree']}.",
          "Wall time and peak RSS are for the whole run of each tool (GNU time; the official suite's",
          "figure is its Node process); `scripts/bench.sh` measures the same with repetitions.", ""]
lines += ["## What each covers that the other does not", ""] + cmap["coverage_notes"] + [""]
lines += bodies
# The protected server of scripts/interop.sh (the official suite has no
# server-side auth checks to compare): its verdicts judged by hand.
lines += [
    "## Protected servers: fastmcp and the Python SDK behind their token verifiers (authorization)",
    "",
    "Not compared (the official suite checks only the client side of auth): `scripts/interop.sh` runs two",
    "servers that trust mcpcert's built-in test issuer (`mcpcert auth-setup`), each requiring the scope",
    "`mcp:read`; expected verdicts in `fixtures/interop/expected/fastmcp-auth-http.txt` and `sdk-auth-http.txt`.",
    "",
    "- `fixtures/interop/fastmcp_auth_server.py`: FastMCP 4.2.3's `JWTVerifier` (the issuer's RS256 public key,",
    "  `iss`, `aud` = its own URL, `required_scopes`) with `RemoteAuthProvider` for the metadata.",
    "- `fixtures/interop/sdk_auth_server.py`: the Python SDK 2.3.0's `MCPServer` with a token verifier of its",
    "  own (PyJWT: signature, `iss`, `aud`, `exp`) and `AuthSettings`; the SDK's bearer middleware answers.",
    "",
    "Every authorization case passes on both, except these, each judged:",
    "",
    "| server | case (2026-07-28 and 2025-11-25) | verdict | judgement |",
    "|---|---|---|---|",
    "| fastmcp | `auth/insufficient-scope` | warn | true (SHOULD): a valid token without `mcp:read` gets HTTP 401 `invalid_token`; the spec asks for 403 with `error=\"insufficient_scope\"`. The verifier refuses the whole token when a required scope is missing, so a client is told to get a new token, not a wider one. |",
    "| python-sdk | `auth/challenge-scope` | warn | true (SHOULD): the 401's challenge carries `error` and `resource_metadata` but no `scope`, although the server requires `mcp:read`. |",
    "| python-sdk | `auth/insufficient-scope` | warn | true (SHOULD): the 403 says `error=\"insufficient_scope\"` but names no `scope`, so a client cannot tell which scope to ask for. |",
    "",
    "Without `required_scopes`, as first set up, FastMCP's 401 challenge carried only `resource_metadata`, and",
    "its `auth/challenge-scope` warned too. The other verdicts that are not a pass are the servers' own, not",
    "auth's: for fastmcp those of the unprotected fastmcp server (its section above), with the run's token",
    "reaching every case; for the Python SDK, `wire/server-frames-valid` fails on 2025-11-25 (an error reply",
    "to a request without a session carries `id: null` although the request's id was readable; the schema",
    "allows only a string or integer there), and these warn, each a SHOULD the SDK does not keep:",
    "`tools/list-invalid-cursor` (an unknown cursor is served the first page, not -32602),",
    "`tools/call-unknown-tool` (an `isError` result, not -32602), `prompts/get-unknown` (-32603 on 2026-07-28,",
    "code 0 on 2025-11-25, not -32602), `tools/call-text-mirror` (the text block holds `2`, not the JSON of",
    "`structuredContent`). An `isError` result without `structuredContent` is not judged: the spec requires",
    "none (the POLICY warning `tools/call-error-structured` was retired).",
    "",
]
with open(doc, "w") as f:
    f.write("\n".join(lines).rstrip("\n") + "\n")
print(f"compare: wrote {doc}: {totals['both']} comparable checks, {totals['agree']} agree, "
      f"{unexplained} differences without an explanation")
sys.exit(1 if unexplained else 0)

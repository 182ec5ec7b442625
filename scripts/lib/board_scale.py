"""The board at registry scale (`scripts/board.sh --bench`, after the
cold/warm bench): a synthetic snapshot of 25,000 servers, of which F are
npm packages whose install is pre-seeded in the board's cache (mcpcert's
reference server, hard-linked, over stdio: judged, pass or fail) and the
rest settle without a package run (a secret nobody gives, an MCPB bundle
only, a remote on a host that cannot resolve). Two nights (the second
with 1% of the entries at a new version) into one site; measures wall
time, peak memory, the site's size per judged and per settled server and
its projection for 15,000 judged + 10,000 settled against GitHub Pages'
1 GB, and the index's first load in headless chromium
(fixtures/html/board-scale-check.mjs: bytes until load and network idle,
the search, the outcome and transport filters, nothing from outside).

    python3 scripts/lib/board_scale.py [--total 25000] [--fake 300] [--no-md]

Working files: reports/board/bench-scale/ (snapshots, cache, site, logs).
Writes the "board-scale" block of docs/bench.md (unless --no-md), prints
a one-line summary and exits 1 when the projection exceeds 1 GB, the
first load 1 MB, the board's peak RSS 300 MB, or a chromium check fails.
"""
import argparse
import functools
import gzip
import http.server
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts/lib"))
import mdblock  # noqa: E402

KEY = "io.github.mcpcert/conformance"
SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
JUDGED = ("pass", "fail")
GB = 1_000_000_000
MB = 1_000_000
RSS_LIMIT = 300 * MB  # the issue says 300 MB: decimal, the stricter reading (286 MiB)


def name_of(i):
    return f"io.github.bench-{i:05d}/server-{i:05d}"


def folder_of(name):
    # the board's rule for a plain name: `/` as `__`
    return name.replace("/", "__")


def plan(total, fake):
    """Each entry's kind, by index 1..total: 'ref' (pre-seeded install;
    'ref-fault' fails), 'secret', 'mcpb', 'remote'. The fakes are spread
    evenly and include the last entry, which the search looks for."""
    fakes = sorted({total - round(k * total / fake) for k in range(fake)}) if fake else []
    kinds = {}
    for k, i in enumerate(reversed(fakes)):
        kinds[i] = "ref-fault" if k % 10 == 5 else "ref"
    j = 0
    for i in range(1, total + 1):
        if i in kinds:
            continue
        j += 1
        kinds[i] = "mcpb" if j % 80 == 7 else "remote" if j % 500 == 13 else "secret"
    return kinds


def entry(i, kind, version):
    name = name_of(i)
    s = {
        "$schema": SCHEMA,
        "name": name,
        "title": f"Bench server {i:05d}",
        "description": f"Synthetic server {i:05d} of the board's registry-scale bench ({kind})",
        "version": version,
        "repository": {"url": f"https://github.com/bench-{i:05d}/server-{i:05d}", "source": "github"},
    }
    if kind.startswith("ref"):
        args = [{"type": "positional", "value": "--stdio"}, {"type": "named", "name": "--era", "value": "dual"}]
        if kind == "ref-fault":
            args.append({"type": "named", "name": "--fault", "value": "discover-no-ttl"})
        s["packages"] = [{
            "registryType": "npm", "registryBaseUrl": "https://registry.npmjs.org",
            "identifier": f"@mcpcert-bench/ref-{i:05d}", "version": version,
            "transport": {"type": "stdio"}, "packageArguments": args,
        }]
    elif kind == "secret":
        s["packages"] = [{
            "registryType": "npm", "registryBaseUrl": "https://registry.npmjs.org",
            "identifier": f"@mcpcert-bench/secret-{i:05d}", "version": version,
            "transport": {"type": "stdio"},
            "environmentVariables": [{"name": "BENCH_API_KEY", "description": "the bench service's API key",
                                      "isRequired": True, "isSecret": True}],
        }]
    elif kind == "mcpb":
        s["packages"] = [{
            "registryType": "mcpb",
            "identifier": f"https://github.com/bench-{i:05d}/server/releases/download/v{version}/server.mcpb",
            "version": version, "fileSha256": "0" * 64, "transport": {"type": "stdio"},
        }]
    else:
        s["remotes"] = [{"type": "streamable-http", "url": f"https://bench-{i:05d}.mcpcert.invalid/mcp"}]
    meta = {"io.modelcontextprotocol.registry/official": {
        "status": "active", "isLatest": True,
        "publishedAt": "2026-11-01T00:00:00Z", "updatedAt": "2026-11-01T00:00:00Z"}}
    return {"server": s, "_meta": meta}


def write_snapshot(folder, kinds, versions, page_size):
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    idx = sorted(kinds)
    pages = [idx[k:k + page_size] for k in range(0, len(idx), page_size)]
    for p, chunk in enumerate(pages, 1):
        meta = {"count": len(chunk)}
        if p < len(pages):
            meta["nextCursor"] = name_of(chunk[-1])
        body = {"servers": [entry(i, kinds[i], versions.get(i, "1.0.0")) for i in chunk], "metadata": meta}
        (folder / f"page-{p:04d}.json").write_text(json.dumps(body, separators=(",", ":")))
    return len(pages)


def seed(cache, i, version, refserver):
    """A finished install of @mcpcert-bench/ref-NNNNN@VERSION, as install.rs
    leaves one: its program a hard link of the reference server."""
    short = f"ref-{i:05d}"
    d = cache / "npm" / f"@mcpcert-bench+{short}@{version}"
    if (d / ".mcpcert-installed").is_file():
        return
    (d / "node_modules/@mcpcert-bench" / short).mkdir(parents=True, exist_ok=True)
    (d / "node_modules/.bin").mkdir(parents=True, exist_ok=True)
    (d / "node_modules/@mcpcert-bench" / short / "package.json").write_text(
        json.dumps({"name": f"@mcpcert-bench/{short}", "version": version, "bin": {short: "server"}}))
    prog = d / "node_modules/.bin" / short
    if prog.exists():
        prog.unlink()
    try:
        os.link(refserver, prog)
    except OSError:
        shutil.copy2(refserver, prog)
    (d / ".mcpcert-installed").write_text("")


def proc_children(pid):
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def proc_status(pid):
    out = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            k, _, v = line.partition(":")
            if k in ("VmHWM", "VmRSS"):
                out[k] = int(v.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return out


def run_board(argv, log_path, samples_path):
    """Runs the board, its console timestamped into log_path; returns wall
    time, the peak RSS (the board's own VmHWM, sampled; and the whole
    tree's, from /usr/bin/time -v or getrusage), the exit status, the
    console's lines with their times."""
    tfile = log_path.with_suffix(".time")
    use_time = Path("/usr/bin/time").exists()
    cmd = (["/usr/bin/time", "-v", "-o", str(tfile)] if use_time else []) + argv
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    lines = []
    reader_done = threading.Event()

    def read():
        with open(log_path, "w") as log:
            for line in p.stdout:
                t = time.monotonic() - t0
                lines.append((t, line.rstrip("\n")))
                log.write(f"{t:9.2f} {line}")
        reader_done.set()

    threading.Thread(target=read, daemon=True).start()
    own_hwm = 0
    samples = []
    board_pid = None
    last_sample = -10.0
    while p.poll() is None:
        if board_pid is None:
            board_pid = (proc_children(p.pid) or [None])[0] if use_time else p.pid
        if board_pid:
            st = proc_status(board_pid)
            own_hwm = max(own_hwm, st.get("VmHWM", 0))
            now = time.monotonic() - t0
            if st.get("VmRSS") and now - last_sample >= 5:
                samples.append((now, st.get("VmRSS", 0), len(lines)))
                last_sample = now
        time.sleep(0.25)
    wall = time.monotonic() - t0
    reader_done.wait(10)
    with open(samples_path, "w") as f:
        f.write("seconds,rss_bytes,console_lines\n")
        f.writelines(f"{t:.1f},{r},{n}\n" for t, r, n in samples)
    tree = 0
    if use_time and tfile.exists():
        m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", tfile.read_text())
        tree = int(m.group(1)) * 1024 if m else 0
    else:
        after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        tree = after * 1024 if after > before else 0
    return {"wall": wall, "own_rss": own_hwm or tree, "tree_rss": tree, "status": p.returncode,
            "lines": lines, "samples": samples}


COUNT = re.compile(r"board:\s*(\d+)\s+server\(?s?\)?\s+run\b.*?(\d+)\s+settled\b.*?(\d+)\s+unchanged", re.I)


def counts(lines):
    """The board's closing count: (run, settled, unchanged, raw line, and
    every `N words` clause of it by its first words, e.g. a count of
    servers not due again yet)."""
    for _, line in reversed(lines):
        m = COUNT.search(line)
        if m:
            clauses = {}
            for part in re.sub(r"\([^)]*\)", "", line.split(":", 1)[1]).split(","):
                c = re.match(r"\s*(\d+)\s+(.*\S)", part)
                if c:
                    clauses[c.group(2)] = int(c.group(1))
            return int(m.group(1)), int(m.group(2)), int(m.group(3)), line, clauses
    for _, line in reversed(lines):
        if line.startswith("board:") and "run" in line:
            nums = [int(x) for x in re.findall(r"\d+", line)] + [None, None, None]
            return nums[0], nums[1], nums[2], line, {}
    return None, None, None, "", {}


def phases(lines):
    """When the first and last server line came, and the closing count."""
    srv = [t for t, l in lines if re.match(r"\[\d+/\d+\]", l)]
    end = next((t for t, l in lines if COUNT.search(l)), None)
    return {"first_server": srv[0] if srv else None, "last_server": srv[-1] if srv else None, "count_line": end}


def tree_size(path):
    n = b = 0
    for dp, _, fs in os.walk(path):
        for f in fs:
            try:
                b += os.lstat(os.path.join(dp, f)).st_size
                n += 1
            except OSError:
                pass
    return b, n


def measure_site(site):
    total, files = tree_size(site)

    @functools.cache
    def listed():
        """Each server folder's outcome as board.json lists it (inline, or
        in the pages it names), when a folder has no result.json."""
        try:
            import board_servers
            got = board_servers.servers(str(site / "board.json"))
        except Exception:  # noqa: BLE001 - a format this script does not know
            return {}
        return {folder_of(s["server"]["name"]): s["_meta"].get(KEY, {}).get("outcome", "?") for s in got}

    per = {}
    servers_bytes = 0
    for d in sorted((site / "servers").iterdir()) if (site / "servers").is_dir() else []:
        if not d.is_dir():
            continue
        b, n = tree_size(d)
        servers_bytes += b
        try:
            outcome = json.loads((d / "result.json").read_text()).get("outcome", "?")
        except (OSError, ValueError):
            outcome = listed().get(d.name, "?")
        g = per.setdefault(outcome, [0, 0, 0])
        g[0] += 1
        g[1] += b
        g[2] += n
    judged = [sum(per[o][k] for o in per if o in JUDGED) for k in range(3)]
    settled = [sum(per[o][k] for o in per if o not in JUDGED) for k in range(3)]
    index = site / "index.html"
    bj = site / "board.json"
    info = {"total": total, "files": files, "servers_bytes": servers_bytes, "shared": total - servers_bytes,
            "per_outcome": per, "judged": judged, "settled": settled,
            "mean_judged": judged[1] / judged[0] if judged[0] else 0,
            "mean_settled": settled[1] / settled[0] if settled[0] else 0,
            "index": index.stat().st_size if index.exists() else 0,
            "index_gz": len(gzip.compress(index.read_bytes(), 6)) if index.exists() else 0,
            "board_json": bj.stat().st_size if bj.exists() else 0}
    # board.json: what is there, and any files it pages to.
    info["board_json_keys"], info["board_json_pages"], info["board_json_servers"] = [], [], None
    if bj.exists():
        b = json.loads(bj.read_text())
        info["board_json_keys"] = sorted(b)
        if isinstance(b.get("servers"), list):
            info["board_json_servers"] = len(b["servers"])
        refs = set()

        def walk(v, depth=0):
            if depth > 4:
                return
            if isinstance(v, str) and v.endswith(".json") and not v.startswith(("http:", "https:")):
                refs.add(v)
            elif isinstance(v, list):
                for x in v[:10000]:
                    walk(x, depth + 1)
            elif isinstance(v, dict):
                for k, x in v.items():
                    if k != "servers":
                        walk(x, depth + 1)
        walk({k: v for k, v in b.items() if k != "servers"})
        for r in sorted(refs):
            f = site / r
            if f.is_file():
                info["board_json_pages"].append((r, f.stat().st_size))
    info["projected"] = 15000 * info["mean_judged"] + 10000 * info["mean_settled"] + info["shared"]
    # The worst mix: every judged server failing (a failing one keeps its
    # report; a clean pass keeps none).
    fail = per.get("fail")
    info["mean_fail"] = fail[1] / fail[0] if fail and fail[0] else info["mean_judged"]
    info["projected_all_fail"] = 15000 * info["mean_fail"] + 10000 * info["mean_settled"] + info["shared"]
    return info


class Quiet(http.server.SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: one connection per chromium socket, not per file
    disable_nagle_algorithm = True  # else each keep-alive answer waits out a delayed ACK (40 ms)

    def log_message(self, *a):
        pass


def chromium_check(site, html_dir, name, shot):
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}/"
    script = html_dir / "board-scale-check.mjs"
    src = ROOT / "fixtures/html/board-scale-check.mjs"
    if not script.exists() or script.read_bytes() != src.read_bytes():
        shutil.copy(src, script)
    try:
        p = subprocess.run(["node", str(script), base, name, str(shot)], capture_output=True, text=True, timeout=3600)
        out = p.stdout + p.stderr
    except subprocess.TimeoutExpired as e:
        out = f"{e.stdout or ''}{e.stderr or ''}\nthe check did not finish in 3600 s"
        p = None
    finally:
        srv.shutdown()
    result = None
    for line in out.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[7:])
    return result, out, (p.returncode if p else 124)


def mib(b):
    return f"{b / 1024 / 1024:.1f} MiB"


def human(b):
    if b >= GB:
        return f"{b / GB:.2f} GB"
    if b >= MB:
        return f"{b / MB:.1f} MB"
    return f"{b / 1000:.1f} kB"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--total", type=int, default=25000)
    ap.add_argument("--fake", type=int, default=300, help="entries with a pre-seeded install (judged)")
    ap.add_argument("--changed", type=int, default=None, help="entries at a new version on night 2 (default 1%%)")
    ap.add_argument("--page-size", type=int, default=1000)
    ap.add_argument("--work", type=Path, default=ROOT / "reports/board/bench-scale")
    ap.add_argument("--mcpcert", type=Path, default=ROOT / "target/debug/mcpcert")
    ap.add_argument("--refserver", type=Path, default=ROOT / "target/debug/mcpcert-refserver")
    ap.add_argument("--html-dir", type=Path, default=Path(os.environ.get("MCPCERT_INTEROP_DIR", ROOT / ".interop")) / "html",
                    help="where playwright-core is installed (board.sh's npm_ci fixtures/html)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--budget-s", type=int, default=90)
    ap.add_argument("--no-md", action="store_true", help="do not write docs/bench.md")
    ap.add_argument("--skip-chromium", action="store_true")
    a = ap.parse_args()
    changed = a.changed if a.changed is not None else max(1, a.total // 100)
    work = a.work.resolve()
    mcpcert, refserver = a.mcpcert.resolve(), a.refserver.resolve()
    for f in (mcpcert, refserver):
        if not os.access(f, os.X_OK):
            sys.exit(f"board-scale: {f} is not there (cargo build)")
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    # This bench's own copy of the binaries: the board starts `mcpcert run`
    # from its own path, which a rebuild meanwhile would replace.
    (work / "bin").mkdir()
    for f in (mcpcert, refserver):
        shutil.copy2(f, work / "bin" / f.name)
    built = time.strftime("%Y-%m-%d %H:%M", time.localtime(mcpcert.stat().st_mtime))
    mcpcert, refserver = work / "bin" / mcpcert.name, work / "bin" / refserver.name
    cache, site = work / "cache", work / "site"
    sandbox = [] if shutil.which("bwrap") else ["--no-sandbox"]
    say = lambda s: print(f"board-scale: {s}", flush=True)  # noqa: E731

    # The snapshot and the pre-seeded installs.
    t = time.monotonic()
    kinds = plan(a.total, a.fake)
    for i, k in kinds.items():
        if k.startswith("ref"):
            seed(cache, i, "1.0.0", refserver)
    pages = write_snapshot(work / "snapshot-1", kinds, {}, a.page_size)
    last = name_of(max(kinds))
    mix = {k: sum(1 for v in kinds.values() if v == k) for k in ("ref", "ref-fault", "secret", "mcpb", "remote")}
    say(f"snapshot: {a.total} servers in {pages} pages ({mix['ref']} pre-seeded reference installs, {mix['ref-fault']} of them "
        f"with a fault, {mix['secret']} needing a secret, {mix['mcpb']} MCPB only, {mix['remote']} unresolvable remotes) "
        f"in {time.monotonic() - t:.0f} s; the last-listed server, searched for: {last}")

    def board(snap, night):
        argv = [str(mcpcert), "board", str(snap), "--out", str(site), "--cache", str(cache), "--night", night,
                "-j", str(a.jobs), "--budget-s", str(a.budget_s), *sandbox]
        r = run_board(argv, work / f"{night}.log", work / f"{night}-rss.csv")
        r["run"], r["settled"], r["unchanged"], r["raw"], r["clauses"] = counts(r["lines"])
        r["phases"] = phases(r["lines"])
        say(f"night {night}: {r['wall']:.0f} s, exit {r['status']}, peak RSS {mib(r['own_rss'])} (board) / "
            f"{mib(r['tree_rss'])} (any process it waited on); {r['raw'] or 'no closing count line'}")
        ph = r["phases"]
        if ph["first_server"] is not None:
            say(f"  first server line at {ph['first_server']:.0f} s, last at {ph['last_server']:.0f} s, count line at "
                f"{(ph['count_line'] or 0):.0f} s, exit at {r['wall']:.0f} s (site written in {r['wall'] - (ph['count_line'] or r['wall']):.0f} s)")
        if r["samples"]:
            rs = r["samples"]
            say("  board RSS over the night: " + ", ".join(f"{s[0]:.0f}s {s[1] / 1048576:.0f}M" for s in rs[:: max(1, len(rs) // 8)]))
        return r

    n1 = board(work / "snapshot-1", "n1")
    s1 = measure_site(site)
    say(f"site after night 1: {human(s1['total'])} in {s1['files']} files; servers/: judged {s1['judged'][0]} × "
        f"{human(s1['mean_judged'])}, settled {s1['settled'][0]} × {human(s1['mean_settled'])}; shared {human(s1['shared'])}; "
        f"index.html {human(s1['index'])} ({human(s1['index_gz'])} gzipped); board.json {human(s1['board_json'])} "
        f"(keys: {', '.join(s1['board_json_keys'])}; {s1['board_json_servers'] or 'no'} servers inline; "
        + (f"{len(s1['board_json_pages'])} pages ({s1['board_json_pages'][0][0]} …), {human(sum(b for _, b in s1['board_json_pages']))} in all)"
           if s1['board_json_pages'] else "no pages)"))
    for o, (n, b, f) in sorted(s1["per_outcome"].items()):
        say(f"  {o}: {n} servers, {human(b / n)} and {f / n:.1f} files each")
    say(f"projected for 15,000 judged + 10,000 settled: {human(s1['projected'])} (GitHub Pages: 1 GB)")

    # Night 2: 1% at a new version: ~3 of the fakes (1.0.1 pre-seeded; the
    # first of them now with the fault: a regression), the rest settled ones.
    refs = [i for i, k in sorted(kinds.items()) if k == "ref"]
    others = [i for i, k in sorted(kinds.items()) if not k.startswith("ref")]
    n_ref = min(3, len(refs), changed)
    ref_changed = refs[:: max(1, len(refs) // n_ref)][:n_ref] if n_ref else []
    step = max(1, len(others) // max(1, changed - n_ref))
    other_changed = others[::step][: changed - n_ref]
    kinds2 = dict(kinds)
    if ref_changed:
        kinds2[ref_changed[0]] = "ref-fault"
    versions = {i: "1.0.1" for i in ref_changed + other_changed}
    for i in ref_changed:
        seed(cache, i, "1.0.1", refserver)
    write_snapshot(work / "snapshot-2", kinds2, versions, a.page_size)
    say(f"night 2: {len(versions)} entries at 1.0.1 ({len(ref_changed)} reference installs, {name_of(ref_changed[0]) if ref_changed else '-'} "
        f"now failing; {len(other_changed)} settled ones)")
    n2 = board(work / "snapshot-2", "n2")
    s2 = measure_site(site)
    hist = sorted((site / "history").glob("*.json*"), key=lambda p: p.stat().st_mtime) if (site / "history").is_dir() else []
    hist_size = hist[-1].stat().st_size if hist else 0
    growth = s2["total"] - s1["total"]
    say(f"site after night 2: {human(s2['total'])} in {s2['files']} files (+{human(growth)}; history/ "
        f"{human(hist_size)} a night: {human(90 * hist_size)} for the 90 nights the site keeps)")

    # The index's first load, in chromium.
    check, out = None, ""
    if not a.skip_chromium:
        check, out, code = chromium_check(site, a.html_dir.resolve(), last, work / "index.png")
        (work / "chromium.log").write_text(out)
        for line in out.splitlines():
            if not line.startswith("RESULT "):
                print(f"  {line}")
        if check is None:
            say(f"the chromium check gave no result (exit {code}); see {work / 'chromium.log'}")
        else:
            say(f"index first load: {check['bytes_load']} bytes at load ({check['ms_load'] / 1000:.1f} s), {check['bytes_idle']} at "
                f"network idle, {check['requests']} requests, {check['rows_at_load']} rows in the page at load; search "
                f"{check['ms_search']} ms, outcome filter {check['ms_outcome']} ms, transport filter {check['ms_transport']} ms")
    load = check["bytes_load"] if check else None
    idle = check["bytes_idle"] if check else None

    peak = max(n1["own_rss"], n2["own_rss"])
    problems = []
    if s1["projected"] > GB:
        problems.append(f"projected site {human(s1['projected'])} > 1 GB")
    if s1["projected_all_fail"] > GB:
        problems.append(f"projected site with every judged server failing {human(s1['projected_all_fail'])} > 1 GB")
    if idle is not None and idle > MB:
        problems.append(f"first load {human(idle)} > 1 MB")
    if peak > RSS_LIMIT:
        problems.append(f"peak RSS {mib(peak)} ({peak / MB:.0f} MB) > 300 MB")
    if check is None and not a.skip_chromium:
        problems.append("the chromium check did not run")
    elif check:
        problems += [f"chromium: {f}" for f in check.get("failed", [])]
    if n1["status"] != 0 or n2["status"] != 0:
        problems.append(f"the board exited {n1['status']}/{n2['status']}")

    if not a.no_md:
        cpus = os.cpu_count()
        fl = (f"{human(load)} at `load`, {human(idle)} at network idle ({check['requests']} request{'s' if check['requests'] != 1 else ''}; `load` after "
              f"{check['ms_load'] / 1000:.1f} s, {check['rows_at_load']:,} rows in the page)" if check else "not measured")
        ck = "all hold" if check and not check.get("failed") else ("; ".join(check.get("failed", [])) if check else "not run")
        mdblock.put(str(ROOT / "docs/bench.md"), "board-scale", [
            "## Board: at registry scale",
            "",
            f"`scripts/board.sh --bench` (`scripts/lib/board_scale.py`): `mcpcert board -j {a.jobs} --budget-s {a.budget_s}` over a synthetic "
            f"snapshot of {a.total:,} servers ({pages} listing pages): {mix['ref'] + mix['ref-fault']} npm packages whose install is pre-seeded "
            f"in the cache (mcpcert's reference server over stdio, {mix['ref-fault']} with a fault: judged), {mix['secret']:,} needing a "
            f"secret nobody gives, {mix['mcpb']} shipping only an MCPB bundle, {mix['remote']} remotes on a host that cannot resolve "
            f"(settled). Night 2: {len(versions)} entries (1%) at a new version, {len(ref_changed)} of them judged ones. "
            f"On this machine ({cpus} CPUs), the debug build of {built}{', no sandbox' if sandbox else ', each package in bubblewrap'}.",
            "",
            "| measure | value |",
            "|---|---|",
            f"| site after night 1 | {human(s1['total'])}, {s1['files']:,} files |",
            f"| per judged server (pass/fail) | {human(s1['mean_judged'])} |",
            f"| per settled server | {human(s1['mean_settled'])} |",
            f"| shared (index, board.json, history, …) | {human(s1['shared'])} |",
            f"| `index.html` | {human(s1['index'])} ({human(s1['index_gz'])} gzipped) |",
            f"| `board.json` | {human(s1['board_json'])}{' + pages ' + human(sum(b for _, b in s1['board_json_pages'])) if s1['board_json_pages'] else ''} |",
            f"| projected, 15,000 judged + 10,000 settled | {human(s1['projected'])} ({'over' if s1['projected'] > GB else 'within'} GitHub Pages' 1 GB) |",
            f"| the same if every judged server failed ({human(s1['mean_fail'])} each: a failing server keeps its report) | {human(s1['projected_all_fail'])} ({'over' if s1['projected_all_fail'] > GB else 'within'} 1 GB) |",
            f"| night 2's growth of the site (1% changed) | {human(growth)}, of which `history/` {human(hist_size)} (the 90 nights the site keeps: {human(90 * hist_size)}) |",
            f"| index first load (chromium, uncompressed) | {fl} |",
            f"| index checks (search for the last server, filters, nothing from outside) | {ck} |",
            f"| night 1: wall, board's peak RSS | {n1['wall']:.0f} s, {mib(n1['own_rss'])} ({mib(n1['tree_rss'])} any process) |",
            f"| night 2: wall, board's peak RSS | {n2['wall']:.0f} s, {mib(n2['own_rss'])} ({mib(n2['tree_rss'])} any process) |",
            f"| night 2: run / settled / unchanged | {n2['run']} / {n2['settled']} / {n2['unchanged']}"
            + "".join(f"; {v} {k}" for k, v in list(n2["clauses"].items())[3:]) + " |",
            "",
            "Limits the bench holds the board to (exit 1 past any): the projected site within 1 GB, the index's first load within 1 MB, "
            "the board's peak RSS within 300 MB (286 MiB), every chromium check.",
        ])
    summary = (f"board scale: {a.total} servers; night 1 {n1['wall']:.0f} s, {mib(n1['own_rss'])}; night 2 {n2['wall']:.0f} s, "
               f"{mib(n2['own_rss'])}, {n2['run']} run; site {human(s1['total'])}, projected {human(s1['projected'])}; "
               f"first load {human(idle) if idle is not None else '?'}; "
               + ("all limits hold" if not problems else "FAILS: " + "; ".join(problems)))
    print(summary)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

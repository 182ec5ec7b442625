#!/usr/bin/env python3
"""Run the shell lines of the CI snippets the docs give, as a runner would.

The snippets are the fenced YAML blocks of README.md and docs/ci.md marked
`# mcpcert-check: NAME`:

- gitlab: the README's GitLab job (pinned release binary, sha256 checked,
  one run against a server);
- github-nightly and gitlab-nightly: the sharded nightly interop workflows
  of docs/ci.md (three shards, a merge, `mcpcert diff` against the last
  green night: never a red one, or a regression would be forgotten after
  one red night; the GitHub one must ask `gh run list --status success`);
- github-board and gitlab-board: the nightly board workflows of
  docs/board.md (three `board --shard` jobs starting from last night's
  site, a merge into the site): a first night of three loopback remotes,
  then a second in which one of them (the first shard's) has a new, broken
  version: only it runs again, and the site names its regression (the
  other shards' copies of last night's result do not win the merge).
  Their structure is checked too: the shard jobs, which run packages, set
  up the sandbox first and have no write permission; the publishing jobs
  only merge.

The release binary comes from a release folder built here
(scripts/release-build.sh, served as a file:// URL); the servers are the
reference server in three eras. Night one has no previous night; night two
breaks one target, and the merge job must fail on the regression; night
three has the same regression and must fail again (compared with night
one, the last green night, not with the red night two). Steps that need
GitHub or GitLab themselves (`uses:` actions, the artifacts API) are played
by this script: it copies the folders between jobs; `gh` is a stand-in
that answers `gh run list` and `gh run download` from the nights played so
far (night N's run in progress while its merge job runs). Exit 1 on the
first snippet that does not behave as its page says.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
if not os.path.isabs(TARGET):
    TARGET = os.path.join(ROOT, TARGET)


def fail(msg):
    print(f"ci-snippets-check: {msg}", file=sys.stderr)
    sys.exit(1)


def snippet(path, name):
    """The lines of the yaml block of `path` marked `# mcpcert-check: name`."""
    text = open(os.path.join(ROOT, path)).read()
    for block in re.findall(r"```yaml\n(.*?)```", text, re.S):
        if re.search(r"#\s*mcpcert-check:\s*" + re.escape(name) + r"\s*$", block, re.M):
            return block.splitlines()
    fail(f"{path} has no yaml block marked `# mcpcert-check: {name}`")


def flow_map(line):
    """`key: "value"` pairs of a one-line flow mapping."""
    return dict(re.findall(r'(\w+):\s*"([^"]*)"', line))


def gitlab_jobs(lines):
    """job name -> {'variables', 'before_script', 'script'} (one-line items)."""
    jobs, job, key = {}, None, None
    for line in lines:
        if re.match(r"^[.\w-]+:", line):
            job = line.split(":")[0]
            jobs[job] = {"variables": {}, "before_script": [], "script": [], "extends": None}
            key = None
            continue
        m = re.match(r"^  (\w+):\s*(.*)$", line)
        if m and job:
            key = m.group(1)
            if key == "variables":
                jobs[job]["variables"] = flow_map(m.group(2))
            if key == "extends":
                jobs[job]["extends"] = m.group(2).strip()
            continue
        m = re.match(r"^    - (.*)$", line)
        if m and job and key in ("before_script", "script"):
            jobs[job][key].append(m.group(1))
    for j in jobs.values():
        base = jobs.get(j["extends"]) if j["extends"] else None
        if base:
            j["variables"] = {**base["variables"], **j["variables"]}
            j["before_script"] = j["before_script"] or base["before_script"]
    return jobs


def github_jobs(lines):
    """(workflow env, job name -> the `run:` lines of its steps, in order)."""
    env, jobs, job = {}, {}, None
    for line in lines:
        if line.startswith("env:"):
            env = flow_map(line)
        m = re.match(r"^  ([\w-]+):\s*(#.*)?$", line)
        if m:
            job = m.group(1)
            jobs[job] = []
        m = re.match(r"^      - run: (.*)$", line)
        if m and job:
            jobs[job].append(m.group(1))
    return env, jobs


def sh(script, cwd, env, what):
    r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    work = tempfile.mkdtemp(prefix="mcpcert-snippets-")
    try:
        run(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work):
    subprocess.run(["cargo", "build", "-q", "--workspace"], cwd=ROOT, check=True)
    ref = os.path.join(TARGET, "debug", "mcpcert-refserver")
    version = re.search(r'^version\s*=\s*"([^"]+)"', open(os.path.join(ROOT, "Cargo.toml")).read(), re.M).group(1)
    releases = os.path.join(work, "releases")
    env0 = dict(os.environ, MCPCERT_PROFILE="dev")
    subprocess.run([os.path.join(ROOT, "scripts", "release-build.sh"), os.path.join(releases, "v" + version)], cwd=ROOT, env=env0, check=True, capture_output=True)
    # A runner's PATH: no mcpcert on it until the snippet installs one.
    path = ":".join(p for p in os.environ.get("PATH", "").split(":") if not os.path.exists(os.path.join(p, "mcpcert")))
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("MCPCERT")}
    base_env["PATH"] = path

    def with_release(vars_):
        e = dict(base_env, **vars_)
        e["MCPCERT_VERSION"] = version
        e["MCPCERT_RELEASES"] = "file://" + releases
        return e

    # The README's GitLab job.
    jobs = gitlab_jobs(snippet("README.md", "gitlab"))
    job = jobs.get("mcp-conformance") or fail("README's gitlab snippet has no mcp-conformance job")
    lines = [l.replace("'python -m my_server'", f"'{ref} --stdio --era dual'") for l in job["before_script"] + job["script"]]
    d = os.path.join(work, "gitlab")
    os.makedirs(d)
    code, out = sh("\n".join(lines), d, with_release(job["variables"]), "gitlab")
    if code != 0:
        fail(f"the README's GitLab job failed ({code}):\n{out}")
    if not os.path.exists(os.path.join(d, "reports", "junit.xml")):
        fail("the README's GitLab job wrote no reports/junit.xml (its artifacts name it)")

    def targets(d, broken):
        # `legacy` fails every night (a known failure: no regression);
        # on the second night `modern` breaks too (the regression).
        with open(os.path.join(d, "targets.toml"), "w") as f:
            for era in ("modern", "dual", "legacy"):
                fault = " --fault discover-no-ttl" if broken and era == "modern" else ""
                if era == "legacy":
                    fault = " --fault legacy-no-server-info"
                f.write(f'[[target]]\nname = "{era}"\ncommand = "{ref} --stdio --era {era}{fault}"\n\n')

    # The nightly workflows, three nights each.
    gh_lines = snippet("docs/ci.md", "github-nightly")
    env, gh = github_jobs(gh_lines)
    if set(gh) != {"shard", "merge"}:
        fail(f"the GitHub nightly has jobs {sorted(gh)}, not shard and merge")
    gl = gitlab_jobs(snippet("docs/ci.md", "gitlab-nightly"))
    for j in ("interop-shard", "interop-merge"):
        if j not in gl:
            fail(f"the GitLab nightly has no {j} job")
    previous_night_github(gh["merge"], github_sections(gh_lines)["merge"])
    fake_gh = os.path.join(work, "fake-gh")
    write_fake_gh(fake_gh)
    for flavour in ("github", "gitlab"):
        green = None  # the last green night's merged matrix (GitLab's artifacts API)
        runs = []  # the workflow's runs so far, for the stand-in gh
        for night, broken in ((1, False), (2, True), (3, True)):
            parts = []
            for k in (1, 2, 3):
                d = os.path.join(work, flavour, f"night{night}", f"shard{k}")
                if night == 3:  # the same targets as night two: its shards' parts
                    parts.append(os.path.join(work, flavour, "night2", f"shard{k}", f"part-{k}"))
                    continue
                os.makedirs(d)
                targets(d, broken)
                if flavour == "github":
                    code, out = github_steps(gh["shard"], d, with_release(env), {"matrix.shard": str(k)})
                else:
                    job = gl["interop-shard"]
                    code, out = sh("\n".join(job["before_script"] + job["script"]), d, with_release(dict(job["variables"], SHARD=str(k))), "shard")
                if code != 0:
                    fail(f"{flavour} night {night} shard {k} failed ({code}):\n{out}")
                part = os.path.join(d, f"part-{k}")
                if not os.path.exists(os.path.join(part, "matrix.json")):
                    fail(f"{flavour} night {night} shard {k} left no part-{k}/matrix.json:\n{out}")
                parts.append(part)
            d = os.path.join(work, flavour, f"night{night}", "merge")
            os.makedirs(d)
            for p in parts:  # what the artifact steps carry between the jobs
                shutil.copytree(p, os.path.join(d, os.path.basename(p)))
            if flavour == "github":
                # This night's run is in progress; gh answers from the runs so far.
                runs_file = os.path.join(d, ".gh-runs.json")
                this = {"id": 100 + night, "branch": "main", "status": "in_progress", "conclusion": "", "artifacts": {}}
                json.dump(runs + [this], open(runs_file, "w"))
                e = dict(with_release(env), GH_FAKE_RUNS=runs_file, GITHUB_REPOSITORY="OWNER/nightly", GITHUB_REF_NAME="main")
                e["PATH"] = fake_gh + ":" + e["PATH"]
                code, out = github_steps(gh["merge"], d, e, {})
                # The upload step after the fetch: this run's `matrix` artifact.
                runs.append(dict(this, status="completed", conclusion="success" if code == 0 else "failure", artifacts={"matrix": os.path.join(d, "matrix")}))
            else:
                if green:  # the artifacts API: the newest successful interop-merge
                    shutil.copytree(green, os.path.join(d, "previous", "matrix"))
                job = gl["interop-merge"]
                code, out = sh("\n".join(job["before_script"] + job["script"]), d, with_release(job["variables"]), "merge")
            merged = os.path.join(d, "matrix", "matrix.json")
            if not os.path.exists(merged):
                fail(f"{flavour} night {night}: the merge wrote no matrix/matrix.json:\n{out}")
            names = sorted(t["name"] for t in json.load(open(merged))["targets"])
            if names != ["dual", "legacy", "modern"]:
                fail(f"{flavour} night {night}: the merged matrix holds {names}, not the three targets")
            if night == 1 and (code != 0 or "no previous night" not in out):
                fail(f"{flavour} night 1 (no previous night) should pass and say so ({code}):\n{out}")
            if night == 2 and (code == 0 or not re.search(r"diff: [1-9]\d* regressions", out) or not re.search(r"^\s+modern\s+\S+: pass → FAIL", out, re.M)):
                fail(f"{flavour} night 2: the merge job must fail on the regression of `modern` ({code}):\n{out}")
            if night == 3 and (code == 0 or not re.search(r"^\s+modern\s+\S+: pass → FAIL", out, re.M)):
                fail(f"{flavour} night 3: the regression of night 2 is still there, and the merge job must fail on it again, compared with the last green night (night 1), not with the red night 2 ({code}):\n{out}")
            if code == 0:
                green = os.path.join(d, "matrix")
    board_snippets(work, ref, with_release)
    print("ci-snippets-check: the README's GitLab job, the GitHub and GitLab nightly workflows (3 shards, merge, diff with the last green night: a clean first night, a regression caught on the second and again on the third) and the board workflows (3 shards, the site: a first night, then every remote run again and the regression named) run as their pages say")


def previous_night_github(merge, merge_lines):
    """The GitHub nightly's merge job takes the previous night from the
    newest *successful* run (`gh run list --status success`): a night red
    on a regression is never the one compared with, or the regression would
    pass the next night and be forgotten."""
    fetch = [l for l in merge if "gh run list" in l]
    if not fetch:
        fail("the GitHub nightly's merge job does not fetch the previous night with `gh run list --status success` (the only fetch this check plays)")
    for line in fetch:
        statuses = re.findall(r"(?:--status|-s)[= ]+[\"']?([\w-]+)", line)
        if statuses != ["success"]:
            fail(f"the GitHub nightly compares with the newest run of status {statuses or 'any'}, not the last successful (green) one: {line}")
    lines = "\n".join(merge_lines)
    if "workflow_conclusion" in lines or "action-download-artifact" in lines:
        fail("the GitHub nightly's merge job fetches a night by action-download-artifact: use `gh run list --status success` (this check plays that)")


def write_fake_gh(bindir):
    """A `gh` for the snippets: `run list` and `run download` over the runs
    in $GH_FAKE_RUNS, as GitHub answers (newest first; --status is a status
    or a conclusion); anything else fails."""
    os.makedirs(bindir)
    path = os.path.join(bindir, "gh")
    with open(path, "w") as f:
        f.write(r'''#!/usr/bin/env python3
import json, os, shutil, sys
args = sys.argv[1:]
def die(msg):
    print("gh (ci-snippets-check's stand-in): " + msg, file=sys.stderr)
    sys.exit(1)
def opt(*names, default=None):
    for i, a in enumerate(args):
        if a in names and i + 1 < len(args):
            return args[i + 1]
        for n in names:
            if a.startswith(n + "="):
                return a.split("=", 1)[1]
    return default
runs = json.load(open(os.environ["GH_FAKE_RUNS"]))
if args[:2] == ["run", "list"]:
    if opt("--workflow", "-w") != "nightly.yml":
        die("run list: the workflow is nightly.yml")
    if opt("--repo", "-R") != os.environ.get("GITHUB_REPOSITORY"):
        die("run list: give the repository (-R \"$GITHUB_REPOSITORY\")")
    branch, status = opt("--branch", "-b"), opt("--status", "-s")
    sel = [r for r in runs if (branch is None or r["branch"] == branch) and (status is None or status in (r["status"], r["conclusion"]))]
    sel = sorted(sel, key=lambda r: -r["id"])[: int(opt("--limit", "-L", default="20"))]
    if opt("--json") != "databaseId" or opt("--jq", "-q") != ".[].databaseId":
        die("run list: this stand-in answers --json databaseId --jq '.[].databaseId' only")
    for r in sel:
        print(r["id"])
elif args[:2] == ["run", "download"] and len(args) > 2:
    run = next((r for r in runs if str(r["id"]) == args[2]), None)
    name = opt("--name", "-n")
    if run is None or name not in run["artifacts"]:
        die(f"run download: run {args[2]} has no artifact {name!r}")
    shutil.copytree(run["artifacts"][name], opt("--dir", "-D", default="."), dirs_exist_ok=True)
else:
    die("not played: gh " + " ".join(args))
''')
    os.chmod(path, 0o755)


def start_ref(ref, work, name, *args):
    """The reference server over HTTP on a free port of 127.0.0.1; its URL."""
    import socket
    import time
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    log = open(os.path.join(work, f"{name}.log"), "w")
    p = subprocess.Popen([ref, "--http", str(port), *args], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    for _ in range(100):
        if "listening" in open(os.path.join(work, f"{name}.log")).read():
            break
        time.sleep(0.05)
    return p, f"http://127.0.0.1:{port}/mcp"


def github_sections(lines):
    """job name -> its lines (under `jobs:`)."""
    out, job = {}, None
    for line in lines:
        m = re.match(r"^  ([\w-]+):\s*(#.*)?$", line)
        if m:
            job = m.group(1)
            out[job] = []
        elif job:
            out[job].append(line)
    return out


def board_structure(gh_lines, gh, gl):
    """The board workflows keep tokens away from untrusted code: the jobs
    that run packages (the shards) set up the sandbox first and hold no
    write permission; only the publishing job, which runs no package
    (every board call in it merges), may deploy."""
    sec = github_sections(gh_lines)
    perms = {j: " ".join(l for l in ls if l.strip().startswith("permissions:")) for j, ls in sec.items()}
    if not perms["shard"] or "write" in perms["shard"]:
        fail(f"the GitHub board workflow's shard job must set read-only permissions: {perms['shard']!r}")
    if "pages: write" not in perms["site"]:
        fail("the GitHub board workflow's site job deploys Pages: it needs pages: write")
    checkout = [i for i, l in enumerate(sec["shard"]) if "actions/checkout" in l]
    if checkout and "persist-credentials: false" not in " ".join(sec["shard"][checkout[0]:checkout[0] + 2]):
        fail("the GitHub board workflow's shard job checks out with persisted credentials: set persist-credentials: false")
    for flavour, shard, publish in (("GitHub", gh["shard"], gh["site"]), ("GitLab", gl["board-shard"]["script"], gl["pages"]["script"])):
        boards = [i for i, l in enumerate(shard) if "mcpcert board" in l and "--merge" not in l]
        setup = [i for i, l in enumerate(shard) if "bubblewrap" in l]
        if not boards or not setup or setup[0] > boards[0]:
            fail(f"the {flavour} board workflow's shard job must set up the sandbox (bubblewrap) before it runs the board")
        if any("--no-sandbox" in l for l in shard):
            fail(f"the {flavour} board workflow's shard job runs packages with --no-sandbox")
        if any("mcpcert board" in l and "--merge" not in l for l in publish):
            fail(f"the {flavour} board workflow's publishing job runs packages: it must only merge (board --merge)")


def board_snippets(work, ref, with_release):
    import json
    import time
    gh_lines = snippet("docs/board.md", "github-board")
    gh_env, gh = github_jobs(gh_lines)
    if set(gh) != {"shard", "site"}:
        fail(f"the GitHub board workflow has jobs {sorted(gh)}, not shard and site")
    gl = gitlab_jobs(snippet("docs/board.md", "gitlab-board"))
    for j in ("board-shard", "pages"):
        if j not in gl:
            fail(f"the GitLab board workflow has no {j} job")
    board_structure(gh_lines, gh, gl)
    procs = []
    try:
        urls = {}
        for name, args in (("alpha", ["--era", "dual"]), ("alpha-next", ["--era", "dual", "--fault", "discover-no-ttl"]), ("beta", ["--era", "modern"]), ("gamma", ["--era", "dual"])):
            p, urls[name] = start_ref(ref, work, "board-" + name, *args)
            procs.append(p)

        def snapshot(d, night):
            os.makedirs(os.path.join(d, "snapshot"))
            for name in ("alpha", "beta", "gamma"):
                version, url = "1.0.0", urls[name]
                # Its next version breaks a MUST. It is the first shard's:
                # the other shards carry last night's result of it, which
                # the merge must not take over the new one.
                if name == "alpha" and night == 2:
                    version, url = "1.1.0", urls["alpha-next"]
                sj = {"name": f"io.github.mcpcert-check/{name}", "description": f"{name}, a loopback remote", "version": version,
                      "remotes": [{"type": "streamable-http", "url": url}]}
                json.dump(sj, open(os.path.join(d, "snapshot", f"{name}.json"), "w"))
            # The values the servers need (these remotes need none).
            with open(os.path.join(d, "inputs.toml"), "w") as f:
                f.write('["io.github.mcpcert-check/alpha"]\nregion = "nowhere"\n')

        for flavour in ("github", "gitlab"):
            previous = None
            for night in (1, 2):
                parts, logs = [], ""
                for k in (1, 2, 3):
                    d = os.path.join(work, "board-" + flavour, f"night{night}", f"shard{k}")
                    os.makedirs(d)
                    snapshot(d, night)
                    if flavour == "github":
                        if previous:  # the previous site's artifact, downloaded into the part
                            shutil.copytree(previous, os.path.join(d, f"part-{k}"))
                        code, out = github_steps(gh["shard"], d, with_release(gh_env), {"matrix.shard": str(k)})
                    else:
                        if previous:  # the previous pages artifact, as the before_script unzips it
                            shutil.copytree(previous, os.path.join(d, "previous", "public"))
                        job = gl["board-shard"]
                        code, out = sh("\n".join(job["before_script"] + job["script"]), d, with_release(dict(job["variables"], SHARD=str(k))), "shard")
                    if code != 0:
                        fail(f"{flavour} board night {night} shard {k} failed ({code}):\n{out}")
                    part = os.path.join(d, f"part-{k}")
                    if not os.path.exists(os.path.join(part, "board.json")):
                        fail(f"{flavour} board night {night} shard {k} left no part-{k}/board.json:\n{out}")
                    parts.append(part)
                    logs += out
                d = os.path.join(work, "board-" + flavour, f"night{night}", "site")
                os.makedirs(d)
                site = os.path.join(d, "site" if flavour == "github" else "public")
                if previous:
                    shutil.copytree(previous, site if flavour == "github" else os.path.join(d, "previous", "public"))
                for p in parts:  # what the artifact steps carry between the jobs
                    shutil.copytree(p, os.path.join(d, os.path.basename(p)))
                if flavour == "github":
                    code, out = github_steps(gh["site"], d, with_release(gh_env), {})
                else:
                    job = gl["pages"]
                    code, out = sh("\n".join(job["before_script"] + job["script"]), d, with_release(job["variables"]), "pages")
                if code != 0 or not os.path.exists(os.path.join(site, "index.html")):
                    fail(f"{flavour} board night {night}: the site job failed or wrote no index.html ({code}):\n{out}")
                board = json.load(open(os.path.join(site, "board.json")))
                listed = [s for p in board["pages"] for s in json.load(open(os.path.join(site, p)))["servers"]]
                got = {s["server"]["name"].split("/")[1]: s["_meta"]["io.github.mcpcert/conformance"]["outcome"] for s in listed}
                ran = logs.count("] io.github.mcpcert-check/")
                unchanged = logs.count("unchanged: not run again")
                if night == 1 and (got != {"alpha": "pass", "beta": "pass", "gamma": "pass"} or board["changes"] or ran - unchanged != 3):
                    fail(f"{flavour} board night 1: every server should run and pass, with no change: {got}, {board['changes']}, {ran - unchanged} run\n{logs}")
                if night == 2:
                    changes = [(c["name"], c["regression"]) for c in board["changes"]]
                    # Remotes are judged every night: all three run; the
                    # regression is found against the restored night one.
                    if got.get("alpha") != "fail" or changes != [("io.github.mcpcert-check/alpha", True)] or ran - unchanged != 3:
                        fail(f"{flavour} board night 2: every remote should run again, alpha fail and be named a regression: {got}, {changes}, {ran - unchanged} run\n{logs}")
                previous = site
                time.sleep(1.1)  # the nights are labelled by the second
    finally:
        for p in procs:
            p.kill()


def github_steps(runs, cwd, env, subst):
    """The `run:` steps of one job, each its own bash; GITHUB_PATH is read
    between steps as the runner does; the first failing step ends the job."""
    gp = os.path.join(cwd, ".github_path")
    open(gp, "w").close()
    env = dict(env, GITHUB_PATH=gp)
    out_all = ""
    for line in runs:
        for k, v in subst.items():
            line = line.replace("${{ " + k + " }}", v)
        if "${{" in line:
            fail(f"a run step has an expression this check cannot play: {line}")
        extra = [p.strip() for p in open(gp) if p.strip()]
        e = dict(env, PATH=":".join(extra[::-1] + [env["PATH"]]))
        code, out = sh(line, cwd, e, "step")
        out_all += out
        if code != 0:
            return code, out_all
    return 0, out_all


if __name__ == "__main__":
    main()

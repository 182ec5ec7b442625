//! One server judged: its server.json kept, the entry this machine can run
//! picked, its values looked up, its package installed, one `mcpcert run
//! --server-json` within the budget, and the outcome read from the run's
//! exit and report — with what the runner lacked told apart from what the
//! server broke (`cause.rs`).

use super::{Area, BoardArgs, Counts, Failing, Judged, ServerResult, cause, inputs};
use mcpcert::packages::launch::{Supplied, resolve};
use mcpcert::packages::sandbox::Sandbox;
use mcpcert::packages::snapshot::Listed;
use mcpcert::packages::{self, ThisMachine, install};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub(super) fn judge(
    l: &Listed,
    dir: &Path,
    cache: &Path,
    a: &BoardArgs,
    sandbox: Option<&Sandbox>,
    given: &inputs::Inputs,
    r: &mut ServerResult,
) {
    let sj_path = dir.join("server.json");
    let text = serde_json::from_str::<serde_json::Value>(&l.server).and_then(|v| serde_json::to_string_pretty(&v)).unwrap_or_default();
    if let Err(e) = std::fs::write(&sj_path, text) {
        r.reason = format!("cannot write {}: {e}", sj_path.display());
        return;
    }
    let sj = match packages::load(&sj_path) {
        Ok(s) => s,
        Err(e) => return set(r, "invalid", e),
    };
    let entry = match packages::pick(&sj, None, &ThisMachine) {
        Ok(e) => e,
        Err(_) if sj.entries().is_empty() => return set(r, "cannot-run", "the server.json lists no packages and no remotes".into()),
        Err(_) => {
            let why: Vec<String> = sj
                .entries()
                .iter()
                .map(|e| format!("{} ({}): {}", e.id(), e.describe(), packages::unusable(e, &ThisMachine).unwrap_or_default()))
                .collect();
            return set(r, "cannot-run", why.join("; "));
        }
    };
    r.entry = Some(entry.id());
    r.what = Some(entry.describe());
    r.transport = Some(if entry.is_remote() { "http" } else { "stdio" }.into());
    // This server's values, and nothing else: no input is read from the
    // board's environment by its own name.
    let env = |k: &str| given.lookup(&l.name, k);
    let supplied = Supplied { config_env: &[], config_headers: &[], env: &env };
    let resolved = match resolve(&entry, &supplied, &ThisMachine) {
        Ok(x) => x,
        Err(missing) => {
            let outcome = if missing.iter().any(|m| m.secret) { "needs-secret" } else { "needs-input" };
            let names: Vec<String> = missing
                .iter()
                .map(|m| {
                    let key = m.supply.last().map(|v| v.trim_start_matches("MCPCERT_INPUT_")).unwrap_or("");
                    let key = if m.supply.len() > 1 { m.supply[0].as_str() } else { key };
                    format!("{key} ({}{})", m.what, if m.secret { ", secret" } else { "" })
                })
                .collect();
            return set(
                r,
                outcome,
                format!("{} value(s) nobody gave: {}; give them in --inputs under [\"{}\"]", missing.len(), names.join(", "), l.name),
            );
        }
    };
    let image = matches!(entry, packages::Entry::Package(_, p) if p.registry_type == "oci");
    r.sandbox = if entry.is_remote() {
        "none: a remote is reached over the network".into()
    } else if image {
        "the container's: no network, a read-only root, no capabilities, bounded (docker/podman run options)".into()
    } else if let Some(sb) = sandbox {
        sb.describe()
    } else {
        "none (--no-sandbox): the package saw this machine's files, network and environment".into()
    };
    if let packages::launch::Launch::Stdio { install: what, .. } = &resolved.launch
        && let Err(e) = install::install(what, cache, sandbox, &mut |_| {})
    {
        // The installer's own words: its whole log when it is kept.
        let log = install::folder(cache, what)
            .and_then(|d| std::fs::read_to_string(d.join("install.log")).ok())
            .filter(|l| !l.trim().is_empty())
            .unwrap_or_else(|| e.log_tail.clone());
        r.detail = e.log_tail.clone();
        if let Some(l) = cause::lack(&log).filter(|l| l.outcome == "cannot-run") {
            return set(r, "cannot-run", format!("this runner cannot install it: {}", l.line));
        }
        return set(r, "install-failed", cause::installer_line(&log).unwrap_or(e.problem));
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return set(r, "error", format!("cannot find mcpcert's own binary: {e}")),
    };
    let mut cmd = Command::new(&exe);
    // The child run gets this server's values and nothing else of the
    // board's environment (its tokens, other servers' values).
    cmd.env_clear();
    for k in ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"] {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    cmd.envs(given.env(&l.name));
    let out = dir.join("report");
    cmd.arg("run").arg("--server-json").arg(&sj_path).args(["--pick", &entry.id()]).arg("--cache").arg(cache);
    if sandbox.is_none() {
        cmd.arg("--no-sandbox");
    }
    for s in given.shares(&l.name) {
        cmd.arg("--share").arg(s);
    }
    // Transcripts for the cases that did not pass only: the site keeps
    // thousands of reports.
    let evidence = if a.keep_reports { "all" } else { "failing" };
    cmd.arg("--out").arg(&out).args(["--quiet", "--color", "never", "--evidence", evidence]).args(&a.run_args);
    let log = std::fs::File::create(dir.join("console.log")).ok();
    cmd.stdin(Stdio::null());
    cmd.stdout(log.as_ref().and_then(|f| f.try_clone().ok()).map(Stdio::from).unwrap_or(Stdio::null()));
    cmd.stderr(log.map(Stdio::from).unwrap_or(Stdio::null()));
    let (code, hung) = match wait_budget(cmd, a.budget) {
        Ok(x) => {
            r.ran = true;
            x
        }
        Err(e) => return set(r, "error", e),
    };
    let stderr = read_report(&out, r);
    r.reached = !hung && matches!(code, Some(0 | 1));
    if !r.reached {
        r.failing.clear();
        r.judged = None;
    }
    let problem = r.reason.clone();
    match (hung, code) {
        (true, _) => set(r, "hung", format!("the run did not finish within the budget of {} s", a.budget.as_secs())),
        (false, Some(0)) => set(r, "pass", String::new()),
        (false, Some(1)) => {
            let c = r.counts.clone().unwrap_or_default();
            // The first failing case says what broke.
            let first = r.failing.iter().find(|f| f.verdict != "warn").map(|f| format!("; first: {}: {}", f.case, f.reason));
            set(r, "fail", format!("{} failure(s), {} error(s){}", c.fail, c.error, first.unwrap_or_default()))
        }
        // A package that exited before it answered; one that never
        // answered within the start-up timeout; anything else.
        (false, Some(3))
            if !entry.is_remote() && ["process exited", "closed stdout", "stdin failed"].iter().any(|w| problem.contains(w)) =>
        {
            set(r, "crashed", problem)
        }
        (false, Some(3)) if !entry.is_remote() && problem.contains("timeout") => set(r, "no-answer", problem),
        (false, Some(3)) => set(r, "unreachable", problem),
        (false, Some(4)) => set(r, "protected", "the server answers 401 without a token, and the board has none".into()),
        (false, c) => set(r, "error", format!("mcpcert run ended with {c:?}; see console.log")),
    }
    blame(r, &stderr, entry.is_remote());
    // A run that never reached the server judged no area: its cases are
    // errors saying so, which the areas would only repeat.
    if !matches!(r.outcome.as_str(), "pass" | "fail") {
        r.areas.clear();
    }
}

/// What the runner lacked, said as the outcome, when the server's own
/// stderr says it: a server that cannot start, or whose every failure
/// came while it lacked the network or a service, is not blamed for it
/// (`fail` is kept for a broken rule of a server that ran). A crash
/// without such a cause is told by its last meaningful stderr line.
fn blame(r: &mut ServerResult, stderr: &Stderr, remote: bool) {
    if remote {
        return;
    }
    let lack = cause::lack(&stderr.all);
    let counts = r.counts.clone().unwrap_or_default();
    let lacking = |l: &cause::Lack| match l.outcome {
        "needs-network" => format!("needs the network, which the sandbox closes: {}", l.line),
        "needs-service" => format!("needs a service this runner does not have: {}", l.line),
        _ => format!("this runner cannot run it: {}", l.line),
    };
    match r.outcome.as_str() {
        "fail" if stderr.unexplained == 0 && counts.fail + counts.error > 0 => {
            if let Some(l) = lack {
                let why = format!("{} ({} failure(s), {} error(s) came while it lacked it)", lacking(&l), counts.fail, counts.error);
                set(r, l.outcome, why);
            }
        }
        "crashed" | "no-answer" | "hung" | "unreachable" => {
            if let Some(l) = lack {
                let why = lacking(&l);
                set(r, l.outcome, why);
            } else if r.outcome == "crashed"
                && let Some(line) = cause::crash_line(&r.detail)
            {
                r.reason = format!("{line} (it exited before it answered)");
            }
        }
        _ => {}
    }
}

/// What a run's report holds of the server's stderr: all of it (the
/// start's, each case's), and how many failing or erring cases show no
/// sign of a lack in their own.
#[derive(Default)]
struct Stderr {
    all: String,
    unexplained: u64,
}

pub(super) fn set(r: &mut ServerResult, outcome: &str, reason: String) {
    r.outcome = outcome.into();
    r.reason = reason;
}

/// Runs `cmd`; stops it (SIGTERM, then SIGKILL 10 s later) when the budget
/// is spent. The exit code, and whether it was stopped.
fn wait_budget(mut cmd: Command, budget: Duration) -> Result<(Option<i32>, bool), String> {
    let mut child = cmd.spawn().map_err(|e| format!("cannot start mcpcert run: {e}"))?;
    let started = Instant::now();
    let mut termed: Option<Instant> = None;
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return Ok((st.code(), termed.is_some())),
            Ok(None) => {
                if termed.is_none() && started.elapsed() > budget {
                    // SAFETY: kill(2) on the child's own pid.
                    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
                    termed = Some(Instant::now());
                } else if termed.is_some_and(|t| t.elapsed() > Duration::from_secs(10)) {
                    let _ = child.kill();
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// What the run's report.json says: counts, revisions served, areas, the
/// failing cases, how much was judged, and the target's problem; and the
/// server's stderr.
fn read_report(out: &Path, r: &mut ServerResult) -> Stderr {
    let mut stderr = Stderr::default();
    let Ok(text) = std::fs::read_to_string(out.join("report.json")) else { return stderr };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { return stderr };
    r.report = true;
    let cases = v["cases"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let own = |c: &serde_json::Value| {
        let mut t: String =
            c["transcript"].as_array().into_iter().flatten().filter_map(|e| e["stderr"].as_str()).collect::<Vec<_>>().join("\n");
        if let Some(tail) = c["stderr_tail"].as_str() {
            t.push('\n');
            t.push_str(tail);
        }
        t
    };
    let mut all = v["target_problem"].as_str().unwrap_or("").to_string();
    for c in cases {
        let verdict = c["verdict"].as_str().unwrap_or("");
        let text = own(c);
        if matches!(verdict, "fail" | "error") && cause::lack(&text).is_none() {
            stderr.unexplained += 1;
        }
        if !text.is_empty() {
            all.push('\n');
            all.push_str(&text);
        }
        if matches!(verdict, "fail" | "error" | "warn") && r.failing.len() < 200 {
            let s = |k: &str| c[k].as_str().unwrap_or("").to_string();
            r.failing.push(Failing {
                case: s("id"),
                verdict: verdict.to_string(),
                level: s("level"),
                reason: mcpcert::record::reason(c["message"].as_str().unwrap_or("")).chars().take(300).collect(),
                spec: s("spec"),
            });
        }
    }
    // A case that erred because the server had gone is the lack's doing
    // when the server's stderr says what it lacked.
    if cause::lack(&all).is_some() {
        stderr.unexplained = cases.iter().filter(|c| c["verdict"] == "fail" && cause::lack(&own(c)).is_none()).count() as u64;
    }
    // Keep the tail: the latest lines say what was lacking.
    let mut cut = all.len().saturating_sub(64 * 1024);
    while !all.is_char_boundary(cut) {
        cut += 1;
    }
    stderr.all = all[cut..].to_string();
    let called = |line: &str| -> Option<(u64, u64)> {
        let rest = &line[line.find("called ")? + 7..];
        let mut w = rest.split_whitespace();
        let a = w.next()?.parse().ok()?;
        (w.next()? == "of").then_some(())?;
        Some((a, w.next()?.parse().ok()?))
    };
    let tools = v["coverage"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|l| l.as_str())
        .filter(|l| l.starts_with("tools ("))
        .filter_map(called)
        .max_by_key(|x| x.1);
    let na = v["summary"]["n/a"].as_u64().unwrap_or(0);
    let total = v["summary"]["total"].as_u64().unwrap_or(cases.len() as u64);
    let (tc, tl) = tools.unwrap_or((0, 0));
    r.judged = Some(Judged { cases: total.saturating_sub(na), of: total, tools_called: tc, tools_listed: tl });
    let n = |k: &str| v["summary"][k].as_u64().unwrap_or(0);
    r.counts = Some(Counts { pass: n("pass"), fail: n("fail"), warn: n("warn"), na: n("n/a"), error: n("error") });
    r.revisions = v["revisions"]
        .as_array()
        .map(|a| a.iter().filter(|x| x["supported"] == true).filter_map(|x| x["revision"].as_str().map(String::from)).collect())
        .unwrap_or_default();
    if let Some(p) = v["target_problem"].as_str() {
        let first = p.lines().next().unwrap_or("");
        r.reason = first.strip_prefix("the target could not be started or reached: ").unwrap_or(first).chars().take(300).collect();
        // The server's last stderr lines, when the run quoted them.
        r.detail = p.lines().skip(1).collect::<Vec<_>>().join("\n");
    }
    let mut areas: std::collections::BTreeMap<String, Area> = std::collections::BTreeMap::new();
    for c in cases {
        let id = c["id"].as_str().unwrap_or("");
        let area: String = id.split('/').take(2).collect::<Vec<_>>().join("/");
        let a = areas.entry(area.clone()).or_insert(Area { area, pass: 0, fail: 0, warn: 0, error: 0 });
        match c["verdict"].as_str().unwrap_or("") {
            "pass" => a.pass += 1,
            "fail" => a.fail += 1,
            "warn" => a.warn += 1,
            "error" => a.error += 1,
            _ => {}
        }
    }
    r.areas = areas.into_values().filter(|a| a.pass + a.fail + a.warn + a.error > 0).collect();
    stderr
}

//! `mcpcert board SNAPSHOT… --out SITE`: every server of a registry
//! snapshot checked, and a site of the results. For each server (latest
//! version, by name; `--shard K/N` takes a share): its server.json kept,
//! the entry this machine can run picked, its required values looked up
//! (a missing one is the server's outcome, `needs-secret`), its package
//! installed into the cache (once per name@version), then one
//! `mcpcert run --server-json` with a time budget. Installers and servers
//! run in the sandbox (`packages::sandbox`: bubblewrap; the board refuses
//! to start packages without one unless `--no-sandbox`), and the child run
//! is given nothing of the board's environment but this server's own
//! values (`--inputs`, `inputs.rs`). The result
//! of each server is `servers/<slug>/result.json`, beside its reports; a
//! server whose version, suite digest and mcpcert version are those of its
//! last result is not run again; one run again is compared case by case
//! with its previous run (`history.rs`). Then the site (`site.rs`) is written from
//! every result in `servers/`: the shards of one night merged with
//! `board --merge PART… --out SITE`.

mod history;
mod inputs;
mod share;
mod site;

use crate::EXIT_OK;
use mcpcert::config::targets::parse_shard;
use mcpcert::packages::launch::{Supplied, resolve};
use mcpcert::packages::sandbox::{self, Sandbox};
use mcpcert::packages::snapshot::{self, Listed};
use mcpcert::packages::{self, ThisMachine, install};
use mcpcert::report::console::Console;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub struct BoardArgs {
    pub snapshot: Vec<PathBuf>,
    pub out: PathBuf,
    pub cache: Option<PathBuf>,
    pub shard: Option<String>,
    pub budget: Duration,
    pub jobs: usize,
    pub merge: Vec<PathBuf>,
    pub night: Option<String>,
    pub force: bool,
    pub no_sandbox: bool,
    pub inputs: Option<PathBuf>,
    pub registry: Option<String>,
    pub updated_since: Option<String>,
    /// Exit 1 when a server regressed since the night before.
    pub fail_on_regression: bool,
    pub run_args: Vec<String>,
}

/// What happened to one server.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerResult {
    pub name: String,
    pub version: String,
    #[serde(default)]
    pub title: Option<String>,
    #[serde(default)]
    pub description: String,
    /// pass, fail, crashed, no-answer, unreachable, protected, hung,
    /// needs-secret, needs-input, cannot-run, install-failed, invalid, error.
    pub outcome: String,
    /// One line: why (for every outcome but pass).
    pub reason: String,
    /// More lines (an installer's last lines).
    #[serde(default)]
    pub detail: String,
    pub entry: Option<String>,
    pub what: Option<String>,
    pub transport: Option<String>,
    /// How the run was isolated.
    pub sandbox: String,
    pub counts: Option<Counts>,
    /// The revisions the server served.
    #[serde(default)]
    pub revisions: Vec<String>,
    /// Per area (`2026-07-28/tools`): failures, errors, warnings.
    #[serde(default)]
    pub areas: Vec<Area>,
    pub suite_digest: String,
    pub mcpcert_version: String,
    pub checked_at_ms: u64,
    pub duration_ms: u64,
    /// Whether `report/` holds the run's reports.
    pub report: bool,
    /// The previous run this one is compared with (`VERSION checked TIME`).
    #[serde(default)]
    pub compared_with: Option<String>,
    /// The cases whose verdict changed since that run (both runs reached
    /// the server): regressions, fixes, new warnings, other changes.
    #[serde(default)]
    pub case_changes: Vec<history::CaseChange>,
    /// A digest of the run's budget and the `mcpcert run` options given
    /// after `--`: a result of other options is not reused.
    #[serde(default)]
    pub run_options: String,
    /// Whether a child `mcpcert run` ran (this board run only).
    #[serde(skip)]
    pub ran: bool,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Counts {
    pub pass: u64,
    pub fail: u64,
    pub warn: u64,
    #[serde(rename = "n/a")]
    pub na: u64,
    pub error: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Area {
    pub area: String,
    pub pass: u64,
    pub fail: u64,
    pub warn: u64,
    pub error: u64,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

pub fn board(a: BoardArgs) -> u8 {
    let mut console = Console::new();
    let catalog = match crate::load_catalog(None) {
        Ok(c) => c,
        Err(e) => return crate::usage(e),
    };
    let digest = catalog.digest.clone();
    if let Err(e) = std::fs::create_dir_all(a.out.join("servers")) {
        return crate::usage(format!("--out {}: {e}", a.out.display()));
    }
    if !a.merge.is_empty() {
        let mut problems: Vec<String> = Vec::new();
        for part in &a.merge {
            if let Err(e) = share::copy_servers(&part.join("servers"), &a.out.join("servers")) {
                return crate::usage(format!("--merge {}: {e}", part.display()));
            }
            // The listings the parts read, and what they could not read.
            let _ = share::copy_new(&part.join("snapshot"), &a.out.join("snapshot"));
            for p in share::read_problems(part) {
                if !problems.contains(&p) {
                    problems.push(p);
                }
            }
        }
        return site::write(&a.out, a.night.as_deref(), true, &digest, &problems, a.fail_on_regression, &mut console);
    }
    let mut paths = a.snapshot.clone();
    if let Some(url) = &a.registry {
        let dir = a.out.join("snapshot").join(mcpcert::certify::certificate::rfc3339(now_ms() as u128).replace(':', ""));
        match mcpcert::packages::registry_api::fetch(url, a.updated_since.as_deref(), &dir) {
            Ok(files) => {
                console.line(format!("registry: {} page(s) saved in {}", files.len(), dir.display()));
                paths.push(dir);
            }
            Err(e) => {
                mcpcert::report::console::err_line(format!("error: --registry: {e}"));
                return crate::EXIT_UNREACHABLE;
            }
        }
    }
    if paths.is_empty() {
        return crate::usage(
            "name a snapshot (registry listing pages or a folder of server.json files), --registry URL, or --merge the shards",
        );
    }
    let snapshot::Snapshot { servers, deleted, problems } = snapshot::read(&paths);
    for p in &problems {
        console.line(format!("snapshot: {p}"));
    }
    let _ = std::fs::write(a.out.join(share::PROBLEMS), serde_json::to_string_pretty(&problems).unwrap_or_default() + "\n");
    // Every shard takes deleted servers off (a merge keeps the newest
    // result, so the mark wins over last night's result).
    for l in &deleted {
        if history::withdraw(&a.out.join("servers").join(share::folder(&l.name)), l, &digest) {
            console.line(format!("{}@{}: deleted from the registry: taken off the board (its history stays)", l.name, l.version));
        }
    }
    let folders: Vec<String> = servers.iter().map(|l| share::folder(&l.name)).collect();
    let mut listed: Vec<(&Listed, &String)> = servers.iter().zip(folders.iter()).collect();
    if let Some(s) = &a.shard {
        match parse_shard(s) {
            Ok((k, n)) => listed.retain(|(l, _)| share::shard_by_name(&l.name, n) == k - 1),
            Err(e) => return crate::usage(e),
        }
    }
    // Fail closed: no package starts without a sandbox unless told.
    let sandbox = if a.no_sandbox {
        None
    } else {
        match sandbox::find() {
            Ok(sb) => Some(sb),
            Err(remedy) => {
                mcpcert::report::console::err_line(format!("error: the board starts third-party packages, and there is {remedy}"));
                return crate::EXIT_USAGE;
            }
        }
    };
    let given = match &a.inputs {
        Some(p) => match inputs::Inputs::load(p) {
            Ok(i) => i,
            Err(e) => return crate::usage(e),
        },
        None => inputs::Inputs::default(),
    };
    console.line(format!(
        "board: {} server(s){}; packages run in {}",
        listed.len(),
        a.shard.as_deref().map(|s| format!(" (shard {s})")).unwrap_or_default(),
        sandbox
            .as_ref()
            .map_or("no sandbox (--no-sandbox): they see this machine's files, network and environment".to_string(), |s| s.describe())
    ));
    let cache = a.cache.clone().unwrap_or_else(install::default_cache);
    let queue = std::sync::Mutex::new(listed.iter().enumerate().collect::<Vec<_>>().into_iter());
    let fates = std::sync::Mutex::new([0usize; 3]);
    let lines = std::sync::Mutex::new(&mut console);
    let total = listed.len();
    std::thread::scope(|s| {
        for _ in 0..a.jobs.max(1) {
            s.spawn(|| {
                loop {
                    let Some((i, (l, folder))) = queue.lock().unwrap_or_else(|e| e.into_inner()).next() else { break };
                    let dir = a.out.join("servers").join(folder);
                    let (r, fate) = one(l, &dir, &cache, &a, &digest, sandbox.as_ref(), &given);
                    fates.lock().unwrap_or_else(|e| e.into_inner())[fate as usize] += 1;
                    let line = format!(
                        "[{}/{total}] {}@{}: {}{}{}",
                        i + 1,
                        l.name,
                        l.version,
                        r.outcome,
                        if r.reason.is_empty() { String::new() } else { format!(" ({})", r.reason) },
                        if fate == Fate::Reused { " [unchanged: not run again]" } else { "" }
                    );
                    lines.lock().unwrap_or_else(|e| e.into_inner()).line(line);
                }
            });
        }
    });
    let [run, settled, reused] = fates.into_inner().unwrap_or_else(|e| e.into_inner());
    console.line(format!(
        "board: {run} server(s) run, {settled} settled without a run (a value missing, no entry to run, an install that failed), {reused} unchanged since their last result"
    ));
    let keep_history = a.shard.is_none();
    let code = site::write(&a.out, a.night.as_deref(), keep_history, &digest, &problems, a.fail_on_regression, &mut console);
    if code == EXIT_OK { EXIT_OK } else { code }
}

/// What the board did with a server.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Fate {
    /// A child `mcpcert run` judged it.
    Ran = 0,
    /// Its outcome was settled before any run (a value missing, no entry
    /// this machine can run, an install that failed, …).
    Settled = 1,
    /// Its last result still holds.
    Reused = 2,
}

/// A digest of what every run is given: the budget (which decides what
/// `hung` means) and the options after `--` (never kept as they are: give
/// secrets through the environment or a config file, not as options).
fn options_digest(budget: Duration, args: &[String]) -> String {
    use sha2::Digest;
    let d = sha2::Sha256::digest(format!("{}\0{}", budget.as_secs(), args.join("\0")).as_bytes());
    d.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Whether a last result still holds while nothing changed: a run that
/// judged the server, or what its package did at that version (crashed,
/// never answered, hung, asked for a token). The others are settled again
/// each time, cheaply: a value given since, a machine that can run an
/// entry now, an install or a remote that failed for a while.
fn reusable(outcome: &str) -> bool {
    matches!(outcome, "pass" | "fail" | "crashed" | "no-answer" | "hung" | "protected")
}

/// Read a server's last result.
pub fn last_result(dir: &Path) -> Option<ServerResult> {
    serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).ok()?).ok()
}

/// One server: its result (written to `dir/result.json`), and what was
/// done.
fn one(
    l: &Listed,
    dir: &Path,
    cache: &Path,
    a: &BoardArgs,
    digest: &str,
    sandbox: Option<&Sandbox>,
    given: &inputs::Inputs,
) -> (ServerResult, Fate) {
    let version = env!("CARGO_PKG_VERSION");
    let options = options_digest(a.budget, &a.run_args);
    if !a.force
        && let Some(old) = last_result(dir)
        && old.name == l.name
        && reusable(&old.outcome)
        && old.version == l.version
        && old.suite_digest == digest
        && old.mcpcert_version == version
        && old.run_options == options
    {
        return (old, Fate::Reused);
    }
    let started = Instant::now();
    let mut r = ServerResult {
        name: l.name.clone(),
        version: l.version.clone(),
        title: l.server.get("title").and_then(|t| t.as_str()).map(String::from),
        description: l.server.get("description").and_then(|t| t.as_str()).unwrap_or("").to_string(),
        outcome: "error".into(),
        reason: String::new(),
        detail: String::new(),
        entry: None,
        what: None,
        transport: None,
        sandbox: "none".into(),
        counts: None,
        revisions: Vec::new(),
        areas: Vec::new(),
        suite_digest: digest.to_string(),
        mcpcert_version: version.to_string(),
        checked_at_ms: now_ms(),
        duration_ms: 0,
        report: false,
        compared_with: None,
        case_changes: Vec::new(),
        run_options: options,
        ran: false,
    };
    // A folder is the name's alone (share::folder); one holding another
    // server's result is left as it is.
    if let Some(other) = last_result(dir).filter(|o| o.name != l.name) {
        set(&mut r, "invalid", format!("its folder {} holds the result of {}: a digest collision; not run", dir.display(), other.name));
        return (r, Fate::Settled);
    }
    let prev = history::previous(dir, &l.name);
    history::clear(dir);
    judge(l, dir, cache, a, sandbox, given, &mut r);
    r.duration_ms = started.elapsed().as_millis() as u64;
    history::compare(prev.as_ref(), dir, &mut r);
    history::archive(dir, &r);
    if let Ok(text) = serde_json::to_string_pretty(&r) {
        let _ = std::fs::write(dir.join("result.json"), text + "\n");
    }
    let fate = if r.ran { Fate::Ran } else { Fate::Settled };
    (r, fate)
}

fn judge(l: &Listed, dir: &Path, cache: &Path, a: &BoardArgs, sandbox: Option<&Sandbox>, given: &inputs::Inputs, r: &mut ServerResult) {
    let sj_path = dir.join("server.json");
    let text = serde_json::to_string_pretty(&l.server).unwrap_or_default();
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
        r.detail = e.log_tail.clone();
        return set(r, "install-failed", e.problem);
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
    cmd.arg("--out").arg(&out).args(["--quiet", "--color", "never"]).args(&a.run_args);
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
    read_report(&out, r);
    let problem = r.reason.clone();
    match (hung, code) {
        (true, _) => set(r, "hung", format!("the run did not finish within the budget of {} s", a.budget.as_secs())),
        (false, Some(0)) => set(r, "pass", String::new()),
        (false, Some(1)) => {
            let c = r.counts.clone().unwrap_or_default();
            set(r, "fail", format!("{} failure(s), {} error(s)", c.fail, c.error))
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
    // A run that never reached the server judged no area: its cases are
    // errors saying so, which the areas would only repeat.
    if !matches!(r.outcome.as_str(), "pass" | "fail") {
        r.areas.clear();
    }
}

fn set(r: &mut ServerResult, outcome: &str, reason: String) {
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

/// What the run's report.json says: counts, revisions served, areas, and
/// the target's problem.
fn read_report(out: &Path, r: &mut ServerResult) {
    let Ok(text) = std::fs::read_to_string(out.join("report.json")) else { return };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { return };
    r.report = true;
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
    for c in v["cases"].as_array().into_iter().flatten() {
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_options_are_kept_as_a_digest_and_some_outcomes_are_settled_again() {
        let args = vec!["--header".to_string(), "Authorization: Bearer s3cret-value".to_string()];
        let budget = Duration::from_secs(300);
        let d = options_digest(budget, &args);
        assert_eq!(d.len(), 16);
        assert!(!d.contains("s3cret"));
        assert_ne!(d, options_digest(budget, &args[..1]));
        assert_ne!(d, options_digest(Duration::from_secs(60), &args));
        for o in ["pass", "fail", "crashed", "no-answer", "hung", "protected"] {
            assert!(reusable(o), "{o}");
        }
        for o in ["needs-secret", "needs-input", "cannot-run", "invalid", "install-failed", "unreachable", "error", "deleted"] {
            assert!(!reusable(o), "{o}");
        }
    }
}
